import { z } from 'zod';
import { NotFoundError } from '../../core/errors';
import { GATE_RULES, type RolloutGate } from '../../core/edge/gate';
import { deviceState } from '../../core/edge/rollback';
import { planStages } from '../../core/edge/stages';
import { TELEMETRY_STATUSES, type TelemetryReport } from '../../core/edge/telemetry';
import type {
  EdgeArtifact,
  EdgeDevice,
  EdgeRollout,
  EdgeTelemetry,
  Prisma,
} from '../../generated/prisma/client';
import type { Db } from '../db';

/**
 * The edge fleet's rows as the API shows them, and the JSON columns of a rollout read back through
 * schemas (docs/edge-rollout.md): `gate` holds the budgets and how the rollout advances,
 * `previous` the fleet snapshot, `history` one record per stage.
 */

export const ADVANCE_MODES = ['timer', 'operator'] as const;

/** The `gate` column: the stage budgets, and the rollout's other settings beside them. */
export const RolloutSettings = z.object({
  max_p90_ms: z.number().positive().nullable(),
  max_error_rate: z.number().min(0).max(1),
  min_frames: z.int().min(1),
  min_devices_reporting: z.int().min(1).nullable(),
  advance: z.enum(ADVANCE_MODES),
  stage_seconds: z.number().positive(),
  selector: z.record(z.string(), z.string()),
});
export type RolloutSettings = z.infer<typeof RolloutSettings>;

export const gateOf = (s: RolloutSettings): RolloutGate => ({
  max_p90_ms: s.max_p90_ms,
  max_error_rate: s.max_error_rate,
  min_frames: s.min_frames,
  min_devices_reporting: s.min_devices_reporting,
});

/** One stage of `history`: whom it reached and when, and once it ended, its verdict. */
export const StageRecord = z.object({
  stage: z.int(),
  percent: z.number(),
  devices: z.array(z.string()),
  device_names: z.array(z.string()),
  started_at: z.string(),
  ended_at: z.string().nullable(),
  /** pass | breach | insufficient (the gate's), or operator (an operator's rollback). */
  outcome: z.enum(['pass', 'breach', 'insufficient', 'operator', 'failed']).nullable(),
  passed: z.boolean().nullable(),
  rule: z.enum([...GATE_RULES, 'operator', 'rollout_failed']).nullable(),
  reason: z.string().nullable(),
  /** `timer`, or `operator:<user id>` when an operator ended the stage. */
  ended_by: z.string().nullable(),
  /** The gate's per-device figures when the stage ended. */
  telemetry: z.unknown().nullable(),
});
export type StageRecord = z.infer<typeof StageRecord>;

/** A value built from the schemas above, written back into its JSON column. */
export const asJson = (value: object): Prisma.InputJsonValue => value as Prisma.InputJsonValue;

export const settingsOf = (r: EdgeRollout): RolloutSettings => RolloutSettings.parse(r.gate);
export const historyOf = (r: EdgeRollout): StageRecord[] => z.array(StageRecord).parse(r.history);
export const previousOf = (r: EdgeRollout): Record<string, string | null> =>
  z.record(z.string(), z.string().nullable()).parse(r.previous);
export const stagesOf = (r: EdgeRollout): number[] => z.array(z.number()).parse(r.stages);

/** The devices of each stage: the plan recomputed from the fleet snapshot and the rollout's id. */
export const stagePlan = (r: EdgeRollout): string[][] =>
  planStages(Object.keys(previousOf(r)), stagesOf(r), r.id);

export const rolloutWorkflowId = (rolloutId: string): string => `rollout-${rolloutId}`;

export function rolloutOut(r: EdgeRollout) {
  const { advance, stage_seconds, selector, ...gate } = settingsOf(r);
  return {
    id: r.id,
    artifact_id: r.artifactId,
    target: r.target,
    status: r.status,
    stage: r.stage,
    stages: stagesOf(r),
    gate,
    advance,
    stage_seconds,
    selector,
    fleet: Object.keys(previousOf(r)).length,
    previous: previousOf(r),
    history: historyOf(r),
    reason: r.reason,
    workflow_id: r.workflowId,
    created_at: r.createdAt.toISOString(),
    finished_at: r.finishedAt?.toISOString() ?? null,
  };
}

export const artifactOut = (a: EdgeArtifact) => ({
  id: a.id,
  model_version: a.modelVersion,
  target: a.target,
  precision: a.precision,
  sha256: a.sha256,
  size_bytes: a.sizeBytes,
});

export function deviceOut(d: EdgeDevice, now: Date, offlineAfterSeconds: number) {
  return {
    id: d.id,
    name: d.name,
    target: d.target,
    labels: d.labels,
    status: deviceState(d.lastSeenAt, d.status === 'failing', now, offlineAfterSeconds),
    last_seen_at: d.lastSeenAt?.toISOString() ?? null,
    assigned_artifact_id: d.assignedArtifactId,
    running_artifact_id: d.runningArtifactId,
    running_sha256: d.runningSha256,
    /** The device runs what it is assigned. */
    in_sync: d.assignedArtifactId === d.runningArtifactId,
    created_at: d.createdAt.toISOString(),
  };
}

export async function findArtifact(db: Db, id: string): Promise<EdgeArtifact> {
  const artifact = await db.edgeArtifact.findUnique({ where: { id } });
  if (!artifact) throw new NotFoundError(`no edge artifact ${id}`);
  return artifact;
}

const LatencyJson = z.object({ p50: z.number(), p90: z.number(), p99: z.number(), mean: z.number() });

export const toReport = (t: EdgeTelemetry): TelemetryReport => {
  const latency = LatencyJson.safeParse(t.latencyMs);
  return {
    deviceId: t.deviceId,
    status: z.enum(TELEMETRY_STATUSES).parse(t.status),
    modelSha256: t.modelSha256,
    frames: t.frames,
    errors: t.errors,
    latencyMs: latency.success ? latency.data : null,
    at: t.at,
  };
};

/** An artifact's reports in [from, to) (to: open), of the given devices when named. */
export async function artifactReports(
  db: Db,
  artifactId: string,
  window: { from: Date; to?: Date | null; deviceIds?: string[] },
): Promise<TelemetryReport[]> {
  const rows = await db.edgeTelemetry.findMany({
    where: {
      artifactId,
      at: { gte: window.from, ...(window.to ? { lt: window.to } : {}) },
      ...(window.deviceIds ? { deviceId: { in: window.deviceIds } } : {}),
    },
    orderBy: { at: 'asc' },
  });
  return rows.map(toReport);
}

/**
 * The database's clock: telemetry is stamped by it (`at` defaults to now()), so the stage windows
 * that select telemetry are too, whatever the clock of the worker or API process.
 */
export async function dbNow(db: Pick<Db, '$queryRaw'>): Promise<Date> {
  const [row] = await db.$queryRaw<Array<{ now: Date }>>`SELECT now() AS now`;
  return row!.now;
}

/** Device names by id, for reasons and figures a person reads. */
export async function deviceNames(
  db: Pick<Db, 'edgeDevice'>,
  ids: readonly string[],
): Promise<Map<string, string>> {
  const rows = await db.edgeDevice.findMany({
    where: { id: { in: [...ids] } },
    select: { id: true, name: true },
  });
  return new Map(rows.map((d) => [d.id, d.name]));
}
