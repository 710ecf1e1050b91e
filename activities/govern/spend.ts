import type { AppConfig } from '../../core/config';
import { totalsOf, effectiveSpend, type SpendKind, type SpendRow } from '../../core/billing/spend';
import { RefusedError } from '../../core/errors';
import { costGate, roundUsd, type CostGateVerdict } from '../../core/govern/cost';
import { Prisma, type TrainingJob } from '../../generated/prisma/client';
import type { Db } from '../db';

/**
 * Spend records and the cost gate at the edges (docs/billing.md): what the start paths of
 * training, cloud sessions and corpus runs call before they start, and what their endings call to
 * record what the work really cost.
 */

type Reader = Db | Prisma.TransactionClient;
interface CostDeps {
  db: Db;
  config: Pick<AppConfig, 'cost'>;
}

const HOUR_MS = 3_600_000;

/** The record a spend subject is, per kind. */
const SUBJECT_TYPES = { training: 'training_job', cloud: 'cloud_session', corpus_run: 'agent_run' } as const;
type RecordedKind = keyof typeof SUBJECT_TYPES;

/**
 * Spend rows whose money counts in [from, to), with every other row of their subjects and of the
 * wholes and parts they belong to, so the actual-wins rule sees what it needs; filter after it.
 */
export async function readSpendRows(db: Reader, from: Date, to: Date): Promise<SpendRow[]> {
  const rows = await db.$queryRaw<Array<Omit<SpendRow, 'basis'> & { basis: string }>>`
    WITH r AS (
      SELECT subject_id, detail->>'parent_id' AS parent_id FROM spend_records
       WHERE COALESCE(ended_at, created_at) >= ${from} AND COALESCE(ended_at, created_at) < ${to})
    SELECT id::text, kind, subject_type, subject_id, basis, gpu_hours, hourly_usd, usd,
           CASE WHEN basis = 'actual' THEN COALESCE(ended_at, created_at) ELSE created_at END AS at,
           detail->>'parent_id' AS parent_id
      FROM spend_records s
     WHERE s.subject_id IN (SELECT subject_id FROM r UNION SELECT parent_id FROM r WHERE parent_id IS NOT NULL)
        OR s.detail->>'parent_id' IN (SELECT subject_id FROM r)
     ORDER BY at, id`;
  return rows.map((r) => ({ ...r, basis: r.basis === 'actual' ? 'actual' : 'estimate' }));
}

/** The window the window cap covers: the last `windowDays` days up to now. */
export function costWindow(config: Pick<AppConfig, 'cost'>, now = new Date()) {
  return {
    from: new Date(now.getTime() - config.cost.windowDays * 24 * HOUR_MS),
    to: new Date(now.getTime() + 1),
  };
}

/** Effective spend (actuals, else estimates) counted in the current window. */
export async function spentInWindow(deps: CostDeps, now = new Date()) {
  const { from, to } = costWindow(deps.config, now);
  const counted = effectiveSpend(await readSpendRows(deps.db, from, to)).filter(
    (r) => r.at >= from && r.at < to,
  );
  return { from, to, ...totalsOf(counted) };
}

export interface CostGateRequest {
  gpu_hours: number;
  hourly_usd: number;
  per_job_cap_usd?: number | null | undefined;
  window_cap_usd?: number | null | undefined;
  spent_usd?: number | undefined;
}

/**
 * The gate with its blanks filled: a cap the caller leaves null is the configured one (none when
 * unset), spend the caller does not state is the window's effective spend from spend_records.
 */
export async function resolveCostGate(deps: CostDeps, req: CostGateRequest) {
  const c = deps.config.cost;
  const perJob = req.per_job_cap_usd ?? c.perJobCapUsd ?? null;
  const windowCap = req.window_cap_usd ?? c.windowCapUsd ?? null;
  const window = req.spent_usd === undefined ? await spentInWindow(deps) : null;
  const verdict = costGate({
    gpu_hours: req.gpu_hours,
    hourly_usd: req.hourly_usd,
    per_job_cap_usd: perJob,
    window_cap_usd: windowCap,
    spent_usd: window ? window.usd : (req.spent_usd ?? 0),
  });
  const source = (given: number | null | undefined, configured: number | undefined) =>
    given != null ? 'request' : configured !== undefined ? 'config' : 'none';
  return {
    ...verdict,
    caps_from: {
      per_job: source(req.per_job_cap_usd, c.perJobCapUsd),
      window: source(req.window_cap_usd, c.windowCapUsd),
    },
    spent_from: window ? 'spend_records' : 'request',
    window_days: c.windowDays,
    window_from: window?.from.toISOString() ?? null,
  };
}

/** Refuses (422) a start the gate refuses, with its numbers in the detail and the body. */
export async function assertCostAllowed(
  deps: CostDeps,
  what: string,
  req: { gpu_hours: number; hourly_usd: number },
): Promise<CostGateVerdict> {
  const verdict = await resolveCostGate(deps, req);
  if (verdict.decision === 'refuse')
    throw new RefusedError(`${what} refused by the cost gate: ${verdict.reasons.join('; ')}`, {
      cost_gate: verdict,
    });
  return verdict;
}

export interface SpendSubject {
  kind: SpendKind;
  subjectType: string;
  subjectId: string;
}

/** Writes (or rewrites) the estimate of a subject the gate allowed. */
export async function recordSpendEstimate(
  db: Reader,
  subject: SpendSubject & {
    verdict: CostGateVerdict;
    detail: Prisma.InputJsonObject;
    createdBy: string | null;
  },
): Promise<void> {
  const row = {
    subjectType: subject.subjectType,
    gpuHours: subject.verdict.gpu_hours,
    hourlyUsd: subject.verdict.hourly_usd,
    usd: subject.verdict.cost_usd,
    detail: subject.detail,
    createdBy: subject.createdBy,
  };
  await db.spendRecord.upsert({
    where: { kind_subjectId_basis: { kind: subject.kind, subjectId: subject.subjectId, basis: 'estimate' } },
    create: { kind: subject.kind, subjectId: subject.subjectId, basis: 'estimate', ...row },
    update: row,
  });
}

/** Gates a start whose row exists, and records its estimate when allowed. */
export async function gateAndEstimate(
  deps: CostDeps,
  subject: SpendSubject & {
    what: string;
    gpuHours: number;
    hourlyUsd: number;
    detail: Prisma.InputJsonObject;
    createdBy: string | null;
  },
): Promise<CostGateVerdict> {
  const verdict = await assertCostAllowed(deps, subject.what, {
    gpu_hours: subject.gpuHours,
    hourly_usd: subject.hourlyUsd,
  });
  await recordSpendEstimate(deps.db, { ...subject, verdict });
  return verdict;
}

/**
 * GPU hours a training job will take: its epochs × the time per epoch measured on the last
 * completed jobs of the same trainer (wall time from start to finish over the epochs they ran),
 * or the configured minutes per epoch until one has completed.
 */
export async function estimateTrainingHours(
  deps: CostDeps,
  job: { trainer: string; epochs: number },
): Promise<{
  gpu_hours: number;
  hours_per_epoch: number;
  basis: 'measured' | 'configured';
  measured_jobs: number;
}> {
  const [m] = await deps.db.$queryRaw<Array<{ jobs: number; seconds: number | null; epochs: number | null }>>`
    SELECT count(*)::int AS jobs, sum(seconds)::float8 AS seconds, sum(epochs)::int AS epochs FROM (
      SELECT EXTRACT(EPOCH FROM finished_at - started_at) AS seconds, (config->>'epochs')::int AS epochs
        FROM training_jobs
       WHERE status = 'completed' AND trainer = ${job.trainer} AND compute_target = 'local'
         AND started_at IS NOT NULL AND finished_at IS NOT NULL
       ORDER BY finished_at DESC LIMIT 20) t`;
  const measured = m && m.jobs > 0 && m.seconds !== null && m.epochs ? m.seconds / 3600 / m.epochs : null;
  const perEpoch = measured ?? deps.config.cost.epochMinutes / 60;
  return {
    gpu_hours: roundUsd(job.epochs * perEpoch),
    hours_per_epoch: roundUsd(perEpoch),
    basis: measured === null ? 'configured' : 'measured',
    measured_jobs: m?.jobs ?? 0,
  };
}

/**
 * GPU hours a corpus run will take: the frames of its sessions (every session when it names none)
 * × the GPU time per frame measured on the last completed auto-label jobs, or the configured
 * seconds per frame until one has completed.
 */
export async function estimateCorpusHours(deps: CostDeps, sessionIds: readonly string[] | null) {
  const frames = await deps.db.frame.count({
    where: sessionIds ? { sessionId: { in: [...sessionIds] } } : {},
  });
  const [m] = await deps.db.$queryRaw<Array<{ jobs: number; seconds: number | null; frames: number | null }>>`
    SELECT count(*)::int AS jobs, sum(seconds)::float8 AS seconds, sum(frames)::int AS frames FROM (
      SELECT EXTRACT(EPOCH FROM finished_at - started_at) AS seconds, frames_done AS frames
        FROM autolabel_jobs
       WHERE state = 'completed' AND frames_done > 0 AND started_at IS NOT NULL AND finished_at IS NOT NULL
       ORDER BY finished_at DESC LIMIT 50) t`;
  const measured = m && m.jobs > 0 && m.seconds !== null && m.frames ? m.seconds / m.frames : null;
  const perFrame = measured ?? deps.config.cost.frameSeconds;
  return {
    frames,
    gpu_hours: roundUsd((frames * perFrame) / 3600),
    seconds_per_frame: roundUsd(perFrame),
    basis: measured === null ? ('configured' as const) : ('measured' as const),
    measured_jobs: m?.jobs ?? 0,
  };
}

/** Gates training hours (epochs × the time per epoch of the trainer) for a job or a sweep, and records the estimate. */
async function gateTrainingHours(
  deps: CostDeps,
  s: {
    subjectType: 'training_job' | 'training_sweep';
    subjectId: string;
    what: string;
    trainer: string;
    epochs: number;
    hourlyUsd: number;
    createdBy: string | null;
    detail?: Prisma.InputJsonObject;
  },
) {
  const estimate = await estimateTrainingHours(deps, { trainer: s.trainer, epochs: s.epochs });
  return gateAndEstimate(deps, {
    kind: 'training',
    subjectType: s.subjectType,
    subjectId: s.subjectId,
    what: s.what,
    gpuHours: estimate.gpu_hours,
    hourlyUsd: s.hourlyUsd,
    detail: { estimate: { ...estimate, epochs: s.epochs, ...s.detail } },
    createdBy: s.createdBy,
  });
}

/** Gates a training job (epochs × time per epoch at its price) and records its estimate. */
export const gateTrainingStart = (deps: CostDeps, job: TrainingJob, hourlyUsd: number) =>
  gateTrainingHours(deps, {
    subjectType: 'training_job',
    subjectId: job.id,
    what: `training job ${job.id}`,
    trainer: job.trainer,
    epochs: (job.config as { epochs: number }).epochs,
    hourlyUsd,
    createdBy: job.createdBy,
  });

/** Gates a corpus run (an agent run over sessions' frames on the GPU slot) and records its estimate. */
export async function gateCorpusRun(
  deps: CostDeps,
  run: { id: string; kind: string; createdBy: string | null },
  sessionIds: readonly string[] | null,
) {
  const estimate = await estimateCorpusHours(deps, sessionIds);
  return gateAndEstimate(deps, {
    kind: 'corpus_run',
    subjectType: 'agent_run',
    subjectId: run.id,
    what: `${run.kind} run ${run.id}`,
    gpuHours: estimate.gpu_hours,
    hourlyUsd: deps.config.cost.gpuHourlyUsd,
    detail: { run_kind: run.kind, estimate },
    createdBy: run.createdBy,
  });
}

interface Span {
  startedAt: Date | null;
  endedAt: Date | null;
  /** The price the actual is charged at; null: the estimate's. */
  hourlyUsd: number | null;
  parentId: string | null;
  detail: Prisma.InputJsonObject;
}

async function spanOf(db: Reader, kind: RecordedKind, subjectId: string): Promise<Span | null> {
  if (kind === 'training') {
    const job = await db.trainingJob.findUnique({ where: { id: subjectId } });
    if (!job) return null;
    const sweep = job.sweepName
      ? await db.trainingSweep.findUnique({ where: { name: job.sweepName }, select: { id: true } })
      : null;
    return {
      startedAt: job.startedAt,
      endedAt: job.finishedAt,
      hourlyUsd: null,
      parentId: sweep?.id ?? null,
      detail: { status: job.status, compute_target: job.computeTarget },
    };
  }
  if (kind === 'cloud') {
    const s = await db.cloudSession.findUnique({ where: { id: subjectId } });
    if (!s) return null;
    return {
      startedAt: s.createdAt,
      endedAt: s.endedAt,
      hourlyUsd: s.hourlyUsd,
      parentId: null,
      detail: { status: s.status },
    };
  }
  const run = await db.agentRun.findUnique({ where: { id: subjectId } });
  if (!run) return null;
  return {
    startedAt: run.createdAt,
    endedAt: run.finishedAt,
    hourlyUsd: null,
    parentId: null,
    detail: { status: run.status, run_kind: run.kind },
  };
}

/**
 * Records what a subject really cost once it has ended: its real start-to-end hours × its price
 * (the cloud session's own price; otherwise the price its estimate — or its sweep's — was gated
 * at). Work that never passed the gate (started before it existed) has no price and no record.
 * A job that never started costs nothing and is recorded so.
 */
export async function recordActualSpend(db: Reader, kind: RecordedKind, subjectId: string): Promise<void> {
  const span = await spanOf(db, kind, subjectId);
  if (!span?.endedAt) return;
  const estimate = await db.spendRecord.findFirst({
    where: {
      kind,
      basis: 'estimate',
      subjectId: span.parentId ? { in: [subjectId, span.parentId] } : subjectId,
    },
    orderBy: { subjectType: 'asc' },
  });
  const hourlyUsd = span.hourlyUsd ?? estimate?.hourlyUsd;
  if (hourlyUsd === undefined) return;
  const gpuHours = span.startedAt
    ? Math.max(0, span.endedAt.getTime() - span.startedAt.getTime()) / HOUR_MS
    : 0;
  const row = {
    subjectType: SUBJECT_TYPES[kind],
    gpuHours: roundUsd(gpuHours),
    hourlyUsd,
    usd: roundUsd(gpuHours * hourlyUsd),
    startedAt: span.startedAt,
    endedAt: span.endedAt,
    detail: { ...span.detail, ...(span.parentId ? { parent_id: span.parentId } : {}) },
    createdBy: estimate?.createdBy ?? null,
  };
  await db.spendRecord.upsert({
    where: { kind_subjectId_basis: { kind, subjectId, basis: 'actual' } },
    create: { kind, subjectId, basis: 'actual', ...row },
    update: row,
  });
}

/** Gates a training sweep as a whole (every point's epochs × the time per epoch) and records its estimate. */
export const gateTrainingSweep = (
  deps: CostDeps,
  sweep: { id: string; name: string; createdBy: string | null },
  epochs: readonly number[],
) =>
  gateTrainingHours(deps, {
    subjectType: 'training_sweep',
    subjectId: sweep.id,
    what: `training sweep ${sweep.name}`,
    trainer: 'head-finetune',
    epochs: epochs.reduce((sum, e) => sum + e, 0),
    hourlyUsd: deps.config.cost.gpuHourlyUsd,
    createdBy: sweep.createdBy,
    detail: { points: epochs.length },
  });

/** The price of a training job's hours: its cloud session's for the cloud, the local GPU slot's otherwise. */
export async function trainingHourlyUsd(deps: CostDeps, job: TrainingJob): Promise<number> {
  const cloudSessionId = (job.progress as { cloud_session_id?: string }).cloud_session_id;
  if (job.computeTarget !== 'cloud' || !cloudSessionId) return deps.config.cost.gpuHourlyUsd;
  const session = await deps.db.cloudSession.findUnique({
    where: { id: cloudSessionId },
    select: { hourlyUsd: true },
  });
  return session?.hourlyUsd ?? deps.config.cost.gpuHourlyUsd;
}

/** Removes a subject's spend records: its start was refused after its estimate was written. */
export const forgetSpend = (db: Db, subjectId: string) => db.spendRecord.deleteMany({ where: { subjectId } });
