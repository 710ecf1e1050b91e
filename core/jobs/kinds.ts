/**
 * Every kind of long-running job in one vocabulary (docs/jobs.md): each table keeps its own states,
 * and this is where they are mapped onto the five the jobs list shows.
 */
export const JOB_KINDS = [
  'ingest',
  'autolabel',
  'export',
  'training',
  'corpus',
  'inference',
  'errordetect',
  'edgeforge',
  'campaign',
  'flywheel',
] as const;
export type JobKind = (typeof JOB_KINDS)[number];

export const JOB_STATES = ['queued', 'running', 'completed', 'failed', 'cancelled'] as const;
export type JobState = (typeof JOB_STATES)[number];

export const isFinishedState = (state: JobState): boolean =>
  state === 'completed' || state === 'failed' || state === 'cancelled';

/**
 * What the jobs route writes into a table's own state column when it cancels a job. Every table
 * keeps it as text, so the word is the same everywhere.
 */
export const CANCELLED = 'cancelled';

/** Each kind's own states (as its table's comment and its code write them), onto the uniform ones. */
export const STATE_MAPS: Record<JobKind, Readonly<Record<string, JobState>>> = {
  ingest: {
    queued: 'queued',
    running: 'running',
    completed: 'completed',
    failed: 'failed',
    cancelled: 'cancelled',
  },
  autolabel: {
    queued: 'queued',
    running: 'running',
    completed: 'completed',
    failed: 'failed',
    cancelled: 'cancelled',
  },
  // A privacy-gate refusal ends the export without a commit: for the list, a failure.
  export: {
    queued: 'queued',
    running: 'running',
    succeeded: 'completed',
    failed: 'failed',
    refused: 'failed',
    cancelled: 'cancelled',
  },
  training: {
    queued: 'queued',
    'queued-cloud': 'queued',
    running: 'running',
    completed: 'completed',
    failed: 'failed',
    cancelled: 'cancelled',
  },
  // A revert works on the corpus again: running while it lasts, then done or failed.
  corpus: {
    running: 'running',
    completed: 'completed',
    failed: 'failed',
    reverting: 'running',
    reverted: 'completed',
    revert_failed: 'failed',
    cancelled: 'cancelled',
  },
  inference: {
    created: 'queued',
    queued: 'queued',
    running: 'running',
    completed: 'completed',
    failed: 'failed',
    cancelled: 'cancelled',
  },
  errordetect: {
    queued: 'queued',
    predicting: 'running',
    detecting: 'running',
    completed: 'completed',
    failed: 'failed',
    cancelled: 'cancelled',
  },
  edgeforge: {
    queued: 'queued',
    running: 'running',
    completed: 'completed',
    failed: 'failed',
    cancelled: 'cancelled',
  },
  // A campaign a person stopped ended early on purpose, as a cancelled one did.
  campaign: {
    running: 'running',
    completed: 'completed',
    stopped: 'cancelled',
    failed: 'failed',
    cancelled: 'cancelled',
  },
  flywheel: {
    running: 'running',
    completed: 'completed',
    failed: 'failed',
    cancelled: 'cancelled',
  },
};

/** Unfinished states a cancel does not apply to, and why. */
const NOT_CANCELLABLE: Partial<Record<JobKind, Readonly<Record<string, string>>>> = {
  corpus: {
    reverting: 'its revert is under way, and a revert stopped half-way would leave the corpus mixed',
  },
};

/** Why a job in this state of its own cannot be cancelled, or null when it can (if unfinished). */
export const cancelRefusal = (kind: JobKind, raw: string): string | null =>
  NOT_CANCELLABLE[kind]?.[raw] ?? null;

/** A kind's own state in the uniform vocabulary; a state this map does not know is a bug, said by name. */
export function uniformState(kind: JobKind, raw: string): JobState {
  const state = STATE_MAPS[kind][raw];
  if (!state)
    throw new Error(`a ${kind} job in state ${JSON.stringify(raw)}, which the jobs map does not know`);
  return state;
}

/** A kind's own states that show as `state`, for filtering in its table. */
export const rawStatesOf = (kind: JobKind, state: JobState): string[] =>
  Object.entries(STATE_MAPS[kind])
    .filter(([, s]) => s === state)
    .map(([raw]) => raw);

/** The kind's own states a job ends in successfully: a cancel that arrives too late leaves these. */
export const completedStatesOf = (kind: JobKind): string[] => rawStatesOf(kind, 'completed');

/**
 * A share of work done, 0..1: 1 once the job completed, otherwise done/total kept below 1 (the
 * last step still runs), or null where the table does not know how much there is.
 */
export function progressOf(
  state: JobState,
  done: number | null | undefined,
  total: number | null | undefined,
) {
  if (state === 'completed') return 1;
  if (done === null || done === undefined || !total || total <= 0) return null;
  return Math.max(0, Math.min(0.99, done / total));
}
