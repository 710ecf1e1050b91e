import type { IngestJob } from '../../generated/prisma/client';
import type { ActivityDeps } from '../deps';

/** Stages of an ingest as the job, the progress route and the jobs stream show them. */
export type IngestStage =
  | 'queued'
  | 'copying'
  | 'probing'
  | 'extracting'
  | 'gating'
  | 'deduplicating'
  | 'registering'
  | 'redacting'
  | 'inspecting'
  | 'completed'
  | 'failed';

export type JobCounters = Partial<
  Pick<
    IngestJob,
    | 'framesExpected'
    | 'framesExtracted'
    | 'framesRejected'
    | 'framesDuplicate'
    | 'framesAccepted'
    | 'framesRedacted'
  >
>;

/** A job as the API and the jobs event stream show it. */
export function jobOut(job: IngestJob) {
  const done = job.state === 'completed';
  const expected = job.framesExpected ?? null;
  return {
    job_id: job.id,
    session_id: job.sessionId,
    workflow_id: job.workflowId,
    kind: job.kind,
    source: job.source,
    options: job.options,
    state: job.state,
    stage: job.stage,
    frames_expected: expected,
    frames_extracted: job.framesExtracted,
    frames_rejected: job.framesRejected,
    frames_duplicate: job.framesDuplicate,
    frames_accepted: job.framesAccepted,
    frames_redacted: job.framesRedacted,
    /** Share of the work done: extraction counts for half, redaction for the other half. */
    progress: done
      ? 1
      : expected
        ? Math.min(
            0.99,
            (job.framesExtracted / expected) * 0.5 +
              (job.framesAccepted ? (job.framesRedacted / job.framesAccepted) * 0.5 : 0),
          )
        : 0,
    error: job.error,
    created_by: job.createdBy,
    created_at: job.createdAt.toISOString(),
    updated_at: job.updatedAt.toISOString(),
    finished_at: job.finishedAt?.toISOString() ?? null,
  };
}

/** Writes the job's stage and counters and publishes the job on the `jobs` stream. */
export async function reportJob(
  deps: ActivityDeps,
  jobId: string,
  change: JobCounters & { stage?: IngestStage; state?: string; error?: string | null; finishedAt?: Date },
  eventType = 'ingest.progress',
): Promise<void> {
  const job = await deps.db.ingestJob.update({ where: { id: jobId }, data: change });
  await deps.events.publish('jobs', eventType, jobOut(job));
}

/** Progress reports from a loop, at most one per `intervalMs`, plus the final one. */
export function throttled(
  intervalMs: number,
  report: () => Promise<void>,
): { tick(): Promise<void>; flush(): Promise<void> } {
  let last = 0;
  return {
    async tick() {
      if (Date.now() - last < intervalMs) return;
      last = Date.now();
      await report();
    },
    flush: report,
  };
}
