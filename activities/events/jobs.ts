import { onceEventId } from '../../core/events/notify';
import type { JobKind } from '../../core/jobs/kinds';
import type { Prisma } from '../../generated/prisma/client';
import type { Db } from '../db';
import { emitEvent } from './emit';

/** The jobs whose end is an event (docs/events.md): every kind of the jobs list (docs/jobs.md). */
export type EventJobKind = JobKind;

/** How a job ended, with what its event carries beside the job. */
export type JobEnd =
  | { kind: 'job.completed'; summary: Prisma.InputJsonObject }
  | { kind: 'job.failed'; reason: string }
  | { kind: 'job.cancelled'; by: string | null };

/**
 * The event of a job's end, notifying whoever started it. At most one per job and kind (and
 * failure reason: a resumed job that fails again for another reason is news): the bookkeeping
 * activities that emit it may be retried by Temporal, and a retry records nothing new.
 */
export function emitJobEvent(
  db: Db | Prisma.TransactionClient,
  job: { kind: EventJobKind; id: string; startedBy: string | null },
  end: JobEnd,
) {
  const { kind, ...detail } = end;
  return emitEvent(db, {
    id: onceEventId(kind, job.kind, job.id, ...('reason' in detail ? [detail.reason] : [])),
    kind,
    subjectType: 'job',
    subjectId: job.id,
    // Completion and failure are the platform's doing; a cancellation is the canceller's.
    actorId: 'by' in detail ? detail.by : null,
    payload: { job_kind: job.kind, job_id: job.id, started_by: job.startedBy, ...detail },
  });
}
