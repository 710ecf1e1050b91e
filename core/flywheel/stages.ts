/**
 * The stages of a flywheel run (docs/flywheel.md) and how a run's stage record moves. Pure: the
 * rows are activities/flywheel/runs.ts's, the order is workflows/flywheel.ts's.
 */

export const FLYWHEEL_STAGES = ['ingest', 'autolabel', 'review', 'export', 'train', 'gate'] as const;
export type FlywheelStage = (typeof FLYWHEEL_STAGES)[number];

export const FLYWHEEL_KINDS = ['session', 'training_cycle'] as const;
export type FlywheelKind = (typeof FLYWHEEL_KINDS)[number];

/** What each stage does, and the platform's own workflow it runs as a child (null: the run's own steps). */
export const STAGE_INFO: Record<FlywheelStage, { does: string; child: string | null }> = {
  ingest: {
    does: 'waits until the session is ingested (frames extracted, de-duplicated, redacted, health scored); a failed ingest fails the run',
    child: null,
  },
  autolabel: {
    does: 'auto-labels the session with the fused detectors on the GPU slot; a session already auto-labelled is reused unless relabel is asked',
    child: 'autolabel-<session_id>',
  },
  review: {
    does: "counts how the session's machine objects were routed (auto-accepted, to review); with wait_for_review it waits until none is left in review",
    child: null,
  },
  export: {
    does: "exports the platform's training data (accepted and auto-accepted objects outside the gold set's sessions) as a dataset commit through the privacy gate",
    child: 'export-<job_id>',
  },
  train: {
    does: 'fine-tunes a challenger from the champion on that commit (the built-in head fine-tuning), gated on cost',
    child: 'training-<job_id>',
  },
  gate: {
    does: 'judges the challenger against the champion on the gold set (the promotion gate): promoted, or refused with its rule and the slices where it fell short',
    child: 'promotion-<model_version>',
  },
};

/** The stages a run of each kind goes through, in order. */
export const STAGES_OF: Record<FlywheelKind, readonly FlywheelStage[]> = {
  session: FLYWHEEL_STAGES,
  training_cycle: ['export', 'train', 'gate'],
};

export type StageState = 'pending' | 'running' | 'done' | 'skipped' | 'failed' | 'cancelled';

export interface StageRecord {
  stage: FlywheelStage;
  state: StageState;
  started_at: string | null;
  finished_at: string | null;
  /** What the stage found or made (counts, job ids, the gate's outcome). */
  detail: Record<string, unknown>;
}

export const initialStages = (kind: FlywheelKind): StageRecord[] =>
  STAGES_OF[kind].map((stage) => ({
    stage,
    state: 'pending',
    started_at: null,
    finished_at: null,
    detail: {},
  }));

/**
 * The record after a stage starts or ends. Starting keeps the first start time (a retried step
 * starts it again); ending merges the detail, so what a stage said while running stays.
 */
export function moveStage(
  stages: readonly StageRecord[],
  stage: FlywheelStage,
  to: StageState,
  at: string,
  detail: Record<string, unknown> = {},
): StageRecord[] {
  if (!stages.some((s) => s.stage === stage)) throw new Error(`a flywheel run has no stage ${stage}`);
  return stages.map((s) => {
    if (s.stage !== stage) return s;
    const started = s.started_at ?? at;
    const finished = to === 'pending' || to === 'running' ? null : at;
    return {
      ...s,
      state: to,
      started_at: started,
      finished_at: finished,
      detail: { ...s.detail, ...detail },
    };
  });
}

/** A run that ends mid-way: the stage running ends as `to`, the stages after it stay pending. */
export const endRunningStage = (stages: readonly StageRecord[], to: 'failed' | 'cancelled', at: string) =>
  stages.map((s) => (s.state === 'running' ? { ...s, state: to, finished_at: at } : s));
