import {
  auditClaim,
  checkBudgets,
  compileAvailability,
  measureAvailability,
  TARGETS,
  type Budgets,
  type ClaimAudit,
  type LatencyFigures,
} from '../../core/edgeforge';
import { InputError } from '../../core/errors';
import { idCursorArgs, idPage } from '../../core/pagination';
import type { EdgeArtifact, EdgeBenchmark, Prisma } from '../../generated/prisma/client';
import type { Actor } from '../annotations/objects';
import type { Db } from '../db';
import { findArtifact } from '../edge/records';
import { findModel } from '../models/artifacts';
import type { ObjectStore } from '../storage/object-store';
import { artifactOut } from './artifacts';
import { targetById } from './requests';
import { findForgeRun, forgeRunOut } from './runs';
import { hostFacts, SAVED_OPTIMIZATION } from './runtime';

/**
 * The forge's synchronous routes (docs/edgeforge.md): reported benchmarks, the benchmark list and
 * audit, the capabilities of this installation, the gate and the deployments view.
 */

export const benchmarkOut = (b: EdgeBenchmark) => ({
  id: b.id,
  source: b.source,
  artifact_id: b.artifactId,
  model_version: b.modelVersion,
  target: b.target,
  latency_ms: b.latencyMs,
  throughput_fps: b.throughputFps,
  power_w: b.powerW,
  memory_mb: b.memoryMb,
  environment: b.environment,
  artifact_uri: b.artifactUri,
  created_at: b.createdAt.toISOString(),
});

export interface ReportedIn {
  model_version: string;
  target: string;
  latency_ms: LatencyFigures;
  artifact_uri: string | null;
  power_w: number | null;
  throughput_fps: number | null;
  artifact_id?: string | undefined;
}

/** The artifact named by a claim about a model version and target, which it must be an artifact of (422). */
export async function matchingArtifact(
  db: Db,
  artifactId: string,
  claim: { model_version: string; target: string },
): Promise<EdgeArtifact> {
  const artifact = await findArtifact(db, artifactId);
  if (artifact.modelVersion !== claim.model_version || artifact.target !== claim.target)
    throw new InputError(
      `edge artifact ${artifact.id} is ${artifact.modelVersion} for ${artifact.target}, not ${claim.model_version} for ${claim.target}`,
      [{ field: 'body.artifact_id', message: 'names an artifact of another model version or target' }],
    );
  return artifact;
}

/** The artifact a claim is about: named by id, else found by its URI (`s3://<models bucket>/<key>` or the key). */
async function claimedArtifact(
  db: Db,
  storage: ObjectStore,
  input: ReportedIn,
): Promise<EdgeArtifact | null> {
  if (input.artifact_id) return matchingArtifact(db, input.artifact_id, input);
  if (!input.artifact_uri) return null;
  const prefix = `s3://${storage.bucket('models')}/`;
  const key = input.artifact_uri.startsWith(prefix)
    ? input.artifact_uri.slice(prefix.length)
    : input.artifact_uri;
  return db.edgeArtifact.findFirst({
    where: { key, modelVersion: input.model_version, target: input.target },
  });
}

/** A device's figures, stored as `reported` (they are audited against what the forge measures). */
export async function storeReported(db: Db, storage: ObjectStore, input: ReportedIn, actor: Actor) {
  await findModel(db, input.model_version);
  targetById(input.target);
  const artifact = await claimedArtifact(db, storage, input);
  const row = await db.edgeBenchmark.create({
    data: {
      artifactId: artifact?.id ?? null,
      modelVersion: input.model_version,
      target: input.target,
      source: 'reported',
      latencyMs: input.latency_ms,
      throughputFps: input.throughput_fps,
      powerW: input.power_w,
      environment: { reported_by: actor.userId },
      artifactUri: input.artifact_uri,
      createdBy: actor.userId,
    },
  });
  return benchmarkOut(row);
}

export interface BenchmarkQuery {
  model_version?: string | undefined;
  target?: string | undefined;
  source?: 'measured' | 'reported' | undefined;
  artifact_id?: string | undefined;
  run_id?: string | undefined;
  limit: number;
  cursor?: string | undefined;
}

/** Benchmarks, newest first; with run_id, the forge run itself beside the benchmarks it measured. */
export async function listBenchmarks(db: Db, query: BenchmarkQuery) {
  const run = query.run_id ? await findForgeRun(db, query.run_id) : null;
  const where: Prisma.EdgeBenchmarkWhereInput = {
    ...(query.model_version ? { modelVersion: query.model_version } : {}),
    ...(query.target ? { target: query.target } : {}),
    ...(query.source ? { source: query.source } : {}),
    ...(query.artifact_id ? { artifactId: query.artifact_id } : {}),
    ...(run ? { environment: { path: ['run_id'], equals: run.id } } : {}),
  };
  const rows = await db.edgeBenchmark.findMany({
    where,
    orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
    ...idCursorArgs(query),
  });
  const { page, next_cursor } = idPage(rows, query.limit);
  return { items: page.map(benchmarkOut), next_cursor, ...(run ? { run: forgeRunOut(run) } : {}) };
}

/** Most reported benchmarks one audit reads (newest first). */
export const AUDIT_MAX_CLAIMS = 1000;

export async function auditBenchmarks(
  db: Db,
  query: {
    model_version?: string | undefined;
    target?: string | undefined;
    tolerance: number;
    limit: number;
  },
) {
  const scope = {
    ...(query.model_version ? { modelVersion: query.model_version } : {}),
    ...(query.target ? { target: query.target } : {}),
  };
  const claims = await db.edgeBenchmark.findMany({
    where: { ...scope, source: 'reported' },
    orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
    take: query.limit,
  });
  const measured = await db.edgeBenchmark.findMany({
    where: {
      ...scope,
      source: 'measured',
      modelVersion: { in: [...new Set(claims.map((c) => c.modelVersion))] },
    },
  });
  const figures = (m: EdgeBenchmark) => ({ id: m.id, latency: m.latencyMs as LatencyFigures });
  const items = claims.map((c) => {
    // A claim about an artifact is checked against that artifact; otherwise against its model and target.
    const against = measured.filter((m) =>
      c.artifactId
        ? m.artifactId === c.artifactId
        : m.modelVersion === c.modelVersion && m.target === c.target,
    );
    const audit: ClaimAudit = auditClaim(
      c.latencyMs as LatencyFigures,
      against.map(figures),
      query.tolerance,
    );
    return {
      benchmark: benchmarkOut(c),
      checked_against: c.artifactId ? 'artifact' : 'model_target',
      ...audit,
    };
  });
  const count = (v: string) => items.filter((i) => i.verdict === v).length;
  return {
    tolerance: query.tolerance,
    claims: items.length,
    reproduced: count('reproduced'),
    not_reproduced: count('not_reproduced'),
    unverified: count('unverified'),
    items,
  };
}

/** The targets and what this installation can do for each. */
export function capabilities() {
  const host = hostFacts();
  return {
    host,
    saved_optimization: SAVED_OPTIMIZATION,
    targets: TARGETS.map((t) => ({
      id: t.id,
      label: t.label,
      runtime: t.runtime,
      execution_provider: t.execution_provider,
      arch: t.arch,
      precisions: t.precisions,
      default_budgets: t.budgets,
      compile: compileAvailability(t, host),
      measure: measureAvailability(t, host),
    })),
  };
}

/** An artifact against its target's budgets (defaults overridden by `budgets`), recorded as a gate run. */
export async function gateArtifact(
  db: Db,
  storage: ObjectStore,
  input: { artifact_id: string; budgets: Partial<Budgets> },
  actor: Actor,
) {
  const artifact = await findArtifact(db, input.artifact_id);
  const target = targetById(artifact.target, 'artifact_id');
  const budgets: Budgets = { ...target.budgets, ...input.budgets };
  const bench = await db.edgeBenchmark.findFirst({
    where: { artifactId: artifact.id, source: 'measured' },
    orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
  });
  const loss = (artifact.accuracy as { loss?: unknown }).loss;
  const verdict = checkBudgets(budgets, {
    latency: bench ? (bench.latencyMs as LatencyFigures) : null,
    memoryMb: bench?.memoryMb ?? null,
    sizeBytes: artifact.sizeBytes,
    accuracyLoss: typeof loss === 'number' ? loss : null,
  });
  const run = await db.edgeForgeRun.create({
    data: {
      kind: 'gate',
      modelVersion: artifact.modelVersion,
      artifactId: artifact.id,
      target: artifact.target,
      params: { budgets: { ...budgets } },
      result: {
        status: 'completed',
        benchmark_id: bench?.id ?? null,
        checks: verdict.checks.map((c) => ({ ...c })),
      },
      passed: verdict.passed,
      createdBy: actor.userId,
    },
  });
  return {
    id: run.id,
    passed: verdict.passed,
    artifact: artifactOut(artifact, storage.bucket('models')),
    target: artifact.target,
    budgets,
    benchmark_id: bench?.id ?? null,
    checks: verdict.checks,
  };
}

/** What runs where: per artifact, the devices assigned it and running it, and its rollouts. */
export async function deployments(
  db: Db,
  storage: ObjectStore,
  query: { model_version?: string | undefined; target?: string | undefined },
) {
  const byTarget = query.target ? { target: query.target } : {};
  const [devices, rollouts] = await Promise.all([
    db.edgeDevice.findMany({
      where: {
        ...byTarget,
        OR: [{ assignedArtifactId: { not: null } }, { runningArtifactId: { not: null } }],
      },
      orderBy: { name: 'asc' },
    }),
    db.edgeRollout.findMany({ where: byTarget, orderBy: [{ createdAt: 'desc' }, { id: 'desc' }] }),
  ]);
  const ids = [
    ...new Set([
      ...devices.flatMap((d) => [d.assignedArtifactId, d.runningArtifactId]),
      ...rollouts.map((r) => r.artifactId),
    ]),
  ].filter((id): id is string => id !== null);
  const artifacts = await db.edgeArtifact.findMany({
    where: { id: { in: ids }, ...(query.model_version ? { modelVersion: query.model_version } : {}) },
    orderBy: [{ modelVersion: 'asc' }, { target: 'asc' }, { createdAt: 'asc' }],
  });
  const known = new Set(artifacts.map((a) => a.id));
  const device = (d: (typeof devices)[number]) => ({
    id: d.id,
    name: d.name,
    status: d.status,
    last_seen_at: d.lastSeenAt?.toISOString() ?? null,
  });
  return {
    items: artifacts.map((a) => ({
      artifact: artifactOut(a, storage.bucket('models')),
      assigned: devices.filter((d) => d.assignedArtifactId === a.id).map(device),
      running: devices
        .filter((d) => d.runningArtifactId === a.id)
        .map((d) => ({ ...device(d), sha256_matches: d.runningSha256 === a.sha256 })),
      rollouts: rollouts
        .filter((r) => r.artifactId === a.id)
        .map((r) => ({
          id: r.id,
          status: r.status,
          stage: r.stage,
          stages: r.stages,
          reason: r.reason,
          created_at: r.createdAt.toISOString(),
          finished_at: r.finishedAt?.toISOString() ?? null,
        })),
    })),
    // Devices that report running an artifact the forge never built (or one since deleted).
    unknown_artifacts: query.model_version
      ? []
      : devices
          .filter((d) => d.runningArtifactId && !known.has(d.runningArtifactId))
          .map((d) => ({ ...device(d), running_artifact_id: d.runningArtifactId })),
  };
}
