import { ConflictError, NotFoundError } from '../../core/errors';
import { evaluateStageGate } from '../../core/edge/gate';
import { fieldSummary, type TelemetryBody, type TelemetryStatus } from '../../core/edge/telemetry';
import { Prisma, type EdgeArtifact, type EdgeDevice } from '../../generated/prisma/client';
import type { AppConfig } from '../../core/config';
import type { Db } from '../db';
import type { ObjectStore } from '../storage/object-store';
import {
  artifactOut,
  artifactReports,
  asJson,
  dbNow,
  deviceNames,
  deviceOut,
  findArtifact,
  gateOf,
  historyOf,
  previousOf,
  rolloutOut,
  settingsOf,
} from './records';

/**
 * The fleet as the edge routes read and write it (docs/edge-rollout.md): devices register, the
 * agent asks for its assignment (with a presigned download URL of the artifact, since the route
 * inventory has no download route), posts telemetry, and the fleet, field and gate views read it.
 */
export interface FleetDeps {
  db: Db;
  storage: ObjectStore;
  config: Pick<AppConfig, 'edge'>;
}

const FAILING: ReadonlySet<TelemetryStatus> = new Set(['verify_failed', 'load_failed', 'run_failed']);

const out = (deps: FleetDeps, d: EdgeDevice, now = new Date()) =>
  deviceOut(d, now, deps.config.edge.offlineAfterSeconds);

export async function registerDevice(
  deps: FleetDeps,
  input: { name: string; target: string; labels: Record<string, string> },
  actorId: string,
) {
  try {
    const device = await deps.db.edgeDevice.create({
      data: { name: input.name, target: input.target, labels: input.labels, createdBy: actorId },
    });
    return out(deps, device);
  } catch (err) {
    if (err instanceof Prisma.PrismaClientKnownRequestError && err.code === 'P2002')
      throw new ConflictError(`a device named ${input.name} is already registered`);
    throw err;
  }
}

/** What a device is to run: the artifact, its SHA-256, and a presigned URL to download it from the models bucket. */
async function assignmentOf(deps: FleetDeps, artifact: EdgeArtifact, now: Date) {
  const seconds = deps.config.edge.downloadUrlSeconds;
  const { id, ...shown } = artifactOut(artifact);
  return {
    artifact_id: id,
    ...shown,
    url: await deps.storage.client.presignedGetObject(deps.storage.bucket('models'), artifact.key, seconds),
    url_expires_at: new Date(now.getTime() + seconds * 1000).toISOString(),
  };
}

/** Devices, each with its assignment: the artifact, its SHA-256 and a presigned URL to download it. */
export async function listDevices(deps: FleetDeps, query: { name?: string; target?: string; limit: number }) {
  const devices = await deps.db.edgeDevice.findMany({
    where: { ...(query.name ? { name: query.name } : {}), ...(query.target ? { target: query.target } : {}) },
    orderBy: { name: 'asc' },
    take: query.limit,
  });
  const artifactIds = [
    ...new Set(devices.flatMap((d) => (d.assignedArtifactId ? [d.assignedArtifactId] : []))),
  ];
  const artifacts = new Map(
    (await deps.db.edgeArtifact.findMany({ where: { id: { in: artifactIds } } })).map((a) => [a.id, a]),
  );
  const now = new Date();
  const items = await Promise.all(
    devices.map(async (d) => {
      const artifact = d.assignedArtifactId ? artifacts.get(d.assignedArtifactId) : undefined;
      const assignment = artifact ? await assignmentOf(deps, artifact, now) : null;
      return { ...out(deps, d, now), assignment };
    }),
  );
  return { items };
}

/**
 * Stores a report and moves the device: last seen now, failing or online by the report, and what it
 * runs — the reported artifact when it ran it, nothing when idle, unchanged when it refused or could
 * not load the artifact (it keeps running what it had). A report on an artifact that a running
 * rollout is taking to this device is tagged with that rollout.
 */
export async function recordTelemetry(deps: FleetDeps, input: TelemetryBody) {
  const { db } = deps;
  const device = await db.edgeDevice.findUnique({ where: { id: input.device_id } });
  if (!device) throw new NotFoundError(`no edge device ${input.device_id}`);
  if (input.artifact_id) await findArtifact(db, input.artifact_id);
  const rollouts = input.artifact_id
    ? await db.edgeRollout.findMany({ where: { artifactId: input.artifact_id, status: 'running' } })
    : [];
  const rollout = rollouts.find((r) => device.id in previousOf(r));
  const ran = input.status === 'ok' || input.status === 'run_failed';
  const running =
    input.status === 'idle'
      ? { runningArtifactId: null, runningSha256: null }
      : ran
        ? { runningArtifactId: input.artifact_id, runningSha256: input.model_sha256 }
        : {};
  const [row, updated] = await db.$transaction([
    db.edgeTelemetry.create({
      data: {
        deviceId: device.id,
        artifactId: input.artifact_id,
        rolloutId: rollout?.id ?? null,
        modelSha256: input.model_sha256,
        frames: input.frames,
        errors: input.errors,
        latencyMs: asJson(input.latency_ms ?? {}),
        status: input.status,
        detail: asJson(input.detail),
      },
    }),
    db.edgeDevice.update({
      where: { id: device.id },
      data: { lastSeenAt: new Date(), status: FAILING.has(input.status) ? 'failing' : 'online', ...running },
    }),
  ]);
  return { id: row.id, at: row.at.toISOString(), rollout_id: row.rolloutId, device: out(deps, updated) };
}

/** Who runs what: every device, and per artifact the devices assigned it and running it; running rollouts. */
export async function fleetView(deps: FleetDeps, query: { target?: string }) {
  const where = query.target ? { target: query.target } : {};
  const [devices, rollouts] = await Promise.all([
    deps.db.edgeDevice.findMany({ where, orderBy: { name: 'asc' } }),
    deps.db.edgeRollout.findMany({ where: { ...where, status: 'running' }, orderBy: { createdAt: 'asc' } }),
  ]);
  const now = new Date();
  const shown = devices.map((d) => out(deps, d, now));
  const ids = [...new Set(devices.flatMap((d) => [d.assignedArtifactId, d.runningArtifactId]))].filter(
    (id): id is string => id !== null,
  );
  const artifacts = await deps.db.edgeArtifact.findMany({
    where: { id: { in: ids } },
    orderBy: { createdAt: 'asc' },
  });
  const names = (pick: (d: (typeof shown)[number]) => string | null, id: string) =>
    shown.filter((d) => pick(d) === id).map((d) => d.name);
  const byStatus = (s: string) => shown.filter((d) => d.status === s).length;
  return {
    devices: shown,
    artifacts: artifacts.map((a) => ({
      ...artifactOut(a),
      assigned: names((d) => d.assigned_artifact_id, a.id),
      running: names((d) => d.running_artifact_id, a.id),
    })),
    rollouts: rollouts.map((r) => ({
      id: r.id,
      artifact_id: r.artifactId,
      target: r.target,
      stage: r.stage,
    })),
    counts: {
      devices: shown.length,
      online: byStatus('online'),
      failing: byStatus('failing'),
      offline: byStatus('offline'),
      registered: byStatus('registered'),
      idle: shown.filter((d) => d.running_artifact_id === null).length,
    },
  };
}

/** An artifact's field performance over the last `window_seconds`: totals and per device. */
export async function artifactField(deps: FleetDeps, artifactId: string, windowSeconds: number) {
  const artifact = await findArtifact(deps.db, artifactId);
  const to = await dbNow(deps.db);
  const from = new Date(to.getTime() - windowSeconds * 1000);
  const reports = await artifactReports(deps.db, artifactId, { from });
  const summary = fieldSummary(reports, artifact.sha256);
  const names = await deviceNames(
    deps.db,
    summary.per_device.map((d) => d.device_id),
  );
  return {
    artifact: artifactOut(artifact),
    window: { from: from.toISOString(), to: to.toISOString(), seconds: windowSeconds },
    ...summary,
    per_device: summary.per_device.map((d) => ({ ...d, name: names.get(d.device_id) ?? null })),
  };
}

/**
 * A rollout of the artifact (the named one, else its latest) against its gate: the current stage's
 * devices and telemetry since the stage began (until it ended, for a finished rollout), judged as
 * the workflow judges them.
 */
export async function artifactGate(deps: FleetDeps, artifactId: string, rolloutId?: string) {
  const artifact = await findArtifact(deps.db, artifactId);
  const rollout = await deps.db.edgeRollout.findFirst({
    where: { artifactId, ...(rolloutId ? { id: rolloutId } : {}) },
    orderBy: { createdAt: 'desc' },
  });
  if (!rollout)
    throw new NotFoundError(
      rolloutId
        ? `no rollout ${rolloutId} of artifact ${artifactId}`
        : `artifact ${artifactId} has no rollout`,
    );
  const stage = historyOf(rollout).at(-1);
  const verdict = stage
    ? evaluateStageGate({
        devices: stage.devices.map((id, i) => ({ id, name: stage.device_names[i] ?? id })),
        reports: await artifactReports(deps.db, artifactId, {
          from: new Date(stage.started_at),
          to: stage.ended_at ? new Date(stage.ended_at) : null,
          deviceIds: stage.devices,
        }),
        sha256: artifact.sha256,
        gate: gateOf(settingsOf(rollout)),
      })
    : null;
  return { artifact: artifactOut(artifact), rollout: rolloutOut(rollout), stage: stage ?? null, verdict };
}
