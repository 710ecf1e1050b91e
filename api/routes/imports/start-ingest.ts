import { randomUUID } from 'node:crypto';
import { recordAudit } from '../../../activities/audit';
import type { IngestWorkflowInput } from '../../../activities/ingest/types';
import { ingestWorkflow } from '../../../workflows/ingest';
import { ConflictError, UnavailableError } from '../../../core/errors';
import { Prisma } from '../../../generated/prisma/client';
import type { Principal } from '../../auth/principal';
import type { AppDeps } from '../../deps';
import { resolveDrive } from './drive-request';
import type { IngestIn } from './validators';

export interface StartedIngest {
  session_id: string;
  job_id: string;
  workflow_id: string;
  state: 'queued';
  status_url: string;
}

/** The same drive (same SHA-256) already has a live or finished session: 409 naming it. */
async function refuseDuplicate(deps: AppDeps, contentHash: string | null): Promise<void> {
  if (!contentHash) return;
  const existing = await deps.db.session.findUnique({ where: { contentHash }, include: { ingestJob: true } });
  if (!existing) return;
  throw new ConflictError(
    `this drive was already ingested as session ${existing.id} (${existing.state}); no second session was created`,
    {
      session_id: existing.id,
      workflow_id: existing.workflowId,
      job_id: existing.ingestJob?.id ?? null,
      session_state: existing.state,
    },
  );
}

/**
 * Starts the ingest of one drive. An upload's hash is known (its hashing workflow recorded it), so
 * the same drive twice is a 409 here; a server path or a source's object is hashed by the workflow's first activity,
 * which fails the job naming the earlier session instead (docs/ingest.md). The session and its
 * job are written in one transaction, then IngestWorkflow `ingest-<session_id>` starts. Should
 * Temporal refuse the start, the rows are removed again so no session claims the drive without an
 * ingest behind it.
 */
export async function startIngest(
  deps: AppDeps,
  body: IngestIn,
  principal: Principal,
  requestId: string,
): Promise<StartedIngest> {
  const resolved = await resolveDrive(deps, body, principal);
  await refuseDuplicate(deps, resolved.contentHash);
  const sessionId = randomUUID();
  const workflowId = `ingest-${sessionId}`;
  let jobId: string;
  try {
    jobId = await deps.db.$transaction(async (tx) => {
      await tx.session.create({
        data: {
          id: sessionId,
          name: body.name ?? resolved.defaultName,
          projectId: body.project_id ?? null,
          vehicleId: body.vehicle_id ?? null,
          sourceKind: body.kind,
          sourceUri: resolved.sourceUri,
          contentHash: resolved.contentHash,
          state: 'ingesting',
          targetFps: deps.config.ingest.targetFps,
          workflowId,
        },
      });
      const job = await tx.ingestJob.create({
        data: {
          sessionId,
          workflowId,
          kind: body.kind,
          source: resolved.sourceView,
          options: {
            ...(body.topic ? { topic: body.topic } : {}),
            ...(body.frame_rate ? { frame_rate: body.frame_rate } : {}),
          },
          createdBy: principal.userId,
        },
      });
      await recordAudit(tx, {
        actorId: principal.userId,
        action: 'ingest.requested',
        subjectType: 'session',
        subjectId: sessionId,
        detail: {
          job_id: job.id,
          workflow_id: workflowId,
          kind: body.kind,
          source: resolved.sourceView,
          sha256: resolved.contentHash,
          size: resolved.sizeBytes,
        },
        requestId,
      });
      return job.id;
    });
  } catch (err) {
    // Two requests with the same drive at once: the unique content hash lets one through.
    if (err instanceof Prisma.PrismaClientKnownRequestError && err.code === 'P2002')
      await refuseDuplicate(deps, resolved.contentHash);
    throw err;
  }
  const from = resolved.sourceObject;
  const input: IngestWorkflowInput = from
    ? {
        sessionId,
        jobId,
        drive: from.copyFor(sessionId),
        sourceObject: { sourceId: from.source.id, key: from.key },
      }
    : { sessionId, jobId, drive: resolved.drive };
  try {
    await deps.temporal.client.workflow.start(ingestWorkflow, {
      taskQueue: deps.config.temporal.cpuTaskQueue,
      workflowId,
      args: [input],
    });
  } catch (err) {
    await deps.db.session.delete({ where: { id: sessionId } });
    throw new UnavailableError(
      `the ingest could not be started (Temporal: ${(err as Error).message}); nothing was kept, try again`,
    );
  }
  // The ingest is under way whatever happens to this notice; a lost event is logged, not an error.
  await deps.events
    .publish('jobs', 'ingest.queued', {
      job_id: jobId,
      session_id: sessionId,
      workflow_id: workflowId,
      kind: body.kind,
      state: 'queued',
    })
    .catch((err: unknown) =>
      deps.logger.warn({ err, session_id: sessionId }, 'ingest.queued event not published'),
    );
  return {
    session_id: sessionId,
    job_id: jobId,
    workflow_id: workflowId,
    state: 'queued',
    status_url: `/api/imports/${jobId}`,
  };
}
