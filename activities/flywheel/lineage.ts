import type { AppConfig } from '../../core/config';
import { NotFoundError } from '../../core/errors';
import type { EdgeArtifact, Prisma } from '../../generated/prisma/client';
import type { CampaignIteration } from '../campaigns';
import { commitRefOut, LINEAGE_LIST_LIMIT } from '../datasets/lineage';
import { findCommit } from '../datasets/read';
import type { Db } from '../db';
import { deviceOut, findArtifact, rolloutOut } from '../edge/records';
import { artifactOut } from '../edgeforge/artifacts';
import { lineageHref, modelOut, modelSelect, ofCommit, ofModel } from '../govern/lineage';
import { promotionOut } from '../registry/gate';
import { flywheelRunOut } from './runs';
import type { ObjectStore } from '../storage/object-store';

/**
 * Lineage of a deployment (docs/flywheel-lineage.md): what runs on the fleet, back to the data it
 * learnt from. The rollout, its edge artifact, the model, the training job and the dataset commit
 * (with its sessions) are the governed lineage of the model and of the commit
 * (activities/govern/lineage.ts); beside them, what only a deployment asks: the gate decisions about
 * the model, the campaign iterations and flywheel runs that produced it, the devices holding the artifact now, and
 * the models it descends from.
 */

/** Models walked up from the deployed model's parent before the answer stops and says so. */
export const ANCESTOR_LIMIT = 10;

type Deps = { db: Db; storage: ObjectStore; config: Pick<AppConfig, 'edge'> };

/** A list cut at the lineage list limit, saying whether it was. */
function capped<T>(rows: T[]) {
  return { items: rows.slice(0, LINEAGE_LIST_LIMIT), truncated: rows.length > LINEAGE_LIST_LIMIT };
}

/** A link of the chain the data may not hold: what its read found, or null and the read's own 404 message. */
async function follow<T>(
  read: Promise<T>,
): Promise<{ found: T; missing: null } | { found: null; missing: string }> {
  try {
    return { found: await read, missing: null };
  } catch (err) {
    if (err instanceof NotFoundError) return { found: null, missing: err.message };
    throw err;
  }
}

/** Why a model has no training job behind it: not registered, made elsewhere, or its job row is gone. */
function untrainedReason(version: string, model: ReturnType<typeof modelOut> | null): string {
  if (!model) return `model ${version} is not in the registry and no training job produced it`;
  if (model.origin !== 'trained')
    return `model ${version} has origin ${model.origin}: it was not trained here, so no training job or dataset commit stands behind it`;
  return model.training_job_id
    ? `the registry names training job ${model.training_job_id}, which no longer exists`
    : `model ${version} records no training job`;
}

type Ancestor =
  | (ReturnType<typeof modelOut> & { registered: true })
  | {
      model_version: string;
      registered: false;
      lineage: string;
    };

/**
 * The models above the deployed one, parent first, by the registry's parent versions. The walk ends
 * at a model without a parent (root), at a version the registry lacks (its parent is unknown), at a
 * version seen before (a cycle in the recorded parents), or after ANCESTOR_LIMIT models (limit).
 */
async function ancestorsOf(db: Db, version: string, parent: string | null) {
  const ancestors: Ancestor[] = [];
  const seen = new Set([version]);
  let next = parent;
  let end: 'root' | 'unregistered' | 'cycle' | 'limit' = 'root';
  while (next) {
    if (seen.has(next)) {
      end = 'cycle';
      break;
    }
    if (ancestors.length === ANCESTOR_LIMIT) {
      end = 'limit';
      break;
    }
    seen.add(next);
    const row = await db.model.findUnique({
      where: { modelVersion: next },
      select: modelSelect,
    });
    if (!row) {
      ancestors.push({ model_version: next, registered: false, lineage: lineageHref('model', next) });
      end = 'unregistered';
      break;
    }
    ancestors.push({ ...modelOut(row), registered: true });
    next = row.parentVersion;
  }
  return { ancestors, ancestors_end: end, ancestors_truncated: end === 'limit' };
}

/** The promotion gate's decisions the model took part in, as challenger or as the champion it was judged against. */
async function promotionsOf(db: Db, version: string) {
  const rows = await db.promotion.findMany({
    where: { OR: [{ challengerVersion: version }, { championVersion: version }] },
    orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
    take: LINEAGE_LIST_LIMIT + 1,
  });
  const { items, truncated } = capped(rows);
  return {
    promotions: items.map((p) => ({
      ...promotionOut(p),
      role: p.challengerVersion === version ? ('challenger' as const) : ('champion' as const),
    })),
    promotions_truncated: truncated,
  };
}

/** The campaigns with an iteration that produced the model, each with those iterations. */
async function campaignsOf(db: Db, version: string) {
  const rows = await db.campaign.findMany({
    where: { iterations: { array_contains: [{ model_version: version }] } },
    orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
    take: LINEAGE_LIST_LIMIT + 1,
    select: { id: true, name: true, className: true, status: true, stopReason: true, iterations: true },
  });
  const { items, truncated } = capped(rows);
  return {
    campaigns: items.map((c) => ({
      campaign_id: c.id,
      name: c.name,
      class_name: c.className,
      status: c.status,
      stop_reason: c.stopReason,
      iterations: (c.iterations as unknown as CampaignIteration[]).filter((i) => i.model_version === version),
      href: `/api/campaigns/${c.id}`,
    })),
    campaigns_truncated: truncated,
  };
}

/** The flywheel runs whose train stage produced the model (docs/flywheel.md). */
async function flywheelRunsOf(db: Db, version: string) {
  const rows = await db.flywheelRun.findMany({
    where: { outputs: { path: ['model_version'], equals: version } },
    orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
    take: LINEAGE_LIST_LIMIT + 1,
  });
  const { items, truncated } = capped(rows);
  return { flywheel_runs: items.map(flywheelRunOut), flywheel_runs_truncated: truncated };
}

/** The devices the fleet manager assigned the artifact to or that report running it, now. */
async function devicesOf(deps: Deps, artifact: EdgeArtifact) {
  const holding: Prisma.EdgeDeviceWhereInput = {
    OR: [{ assignedArtifactId: artifact.id }, { runningArtifactId: artifact.id }],
  };
  const [rows, assigned, running] = await Promise.all([
    deps.db.edgeDevice.findMany({ where: holding, orderBy: { name: 'asc' }, take: LINEAGE_LIST_LIMIT + 1 }),
    deps.db.edgeDevice.count({ where: { assignedArtifactId: artifact.id } }),
    deps.db.edgeDevice.count({ where: { runningArtifactId: artifact.id } }),
  ]);
  const { items, truncated } = capped(rows);
  const now = new Date();
  return {
    devices: items.map((d) => ({
      ...deviceOut(d, now, deps.config.edge.offlineAfterSeconds),
      assigned: d.assignedArtifactId === artifact.id,
      running: d.runningArtifactId === artifact.id,
      // What the device loaded is the artifact only if the hash it reported is the artifact's.
      sha256_matches: d.runningArtifactId === artifact.id ? d.runningSha256 === artifact.sha256 : null,
    })),
    devices_truncated: truncated,
    device_counts: { assigned, running },
  };
}

/** The model's governed lineage, its training job lifted out as the chain's next link (`trained_by`). */
const modelLink = (
  version: string,
  { came_from: { training_job: _next, ...cameFrom }, used_by }: Awaited<ReturnType<typeof ofModel>>,
) => ({ model_version: version, lineage: lineageHref('model', version), ...cameFrom, used_by });

/**
 * A deployment's lineage. An unknown rollout is a 404; a link the data lacks (a model no registry
 * row or training job names, a model not trained here, a training job or commit gone) is null, with
 * why in `missing`, and the links that hang from it are null too.
 */
export async function deploymentLineage(deps: Deps, rolloutId: string) {
  const { db, storage } = deps;
  const rollout = await db.edgeRollout.findUnique({ where: { id: rolloutId } });
  if (!rollout) throw new NotFoundError(`no deployment ${rolloutId}`);
  // Artifacts are never deleted and a rollout starts only for one that exists.
  const artifact = await findArtifact(db, rollout.artifactId);
  const version = artifact.modelVersion;
  const [model, promotions, campaigns, flywheelRuns, devices] = await Promise.all([
    follow(ofModel(deps, version)),
    promotionsOf(db, version),
    campaignsOf(db, version),
    flywheelRunsOf(db, version),
    devicesOf(deps, artifact),
  ]);
  const cameFrom = model.found?.came_from ?? null;
  const commitId = cameFrom?.trained_on ?? null;
  const [trainedOn, ancestors] = await Promise.all([
    commitId ? follow(Promise.all([findCommit(db, commitId), ofCommit(deps, commitId)])) : null,
    ancestorsOf(db, version, cameFrom?.parent_version ?? null),
  ]);

  const trainedBy = cameFrom?.training_job ?? null;
  const missing: Partial<Record<'model' | 'trained_by' | 'trained_on', string>> = {};
  if (model.missing !== null) missing.model = model.missing;
  if (!trainedBy) missing.trained_by = model.missing ?? untrainedReason(version, cameFrom?.model ?? null);
  if (!trainedOn?.found)
    missing.trained_on =
      trainedOn?.missing ?? missing.trained_by ?? `model ${version} names no dataset commit`;

  return {
    deployment_id: rollout.id,
    rollout: {
      ...rolloutOut(rollout),
      gate_href: `/api/edge/artifacts/${artifact.id}/gate?rollout_id=${rollout.id}`,
    },
    artifact: {
      ...artifactOut(artifact, storage.bucket('models')),
      field_href: `/api/edge/artifacts/${artifact.id}/field`,
    },
    model: model.found ? modelLink(version, model.found) : null,
    trained_by: trainedBy,
    trained_on: trainedOn?.found
      ? {
          ...commitRefOut(trainedOn.found[0]),
          lineage: lineageHref('commit', trainedOn.found[0].commitId),
          ...trainedOn.found[1],
        }
      : null,
    ...ancestors,
    ...promotions,
    ...campaigns,
    ...flywheelRuns,
    ...devices,
    missing,
  };
}
