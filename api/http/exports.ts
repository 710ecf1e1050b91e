import type { Response } from 'express';
import { z } from 'zod';
import { SlicePredicate } from '../../core/curation/slice';
import { ConflictError, NotFoundError } from '../../core/errors';
import { SplitIn } from '../../core/export/splits';
import { recordAudit } from '../../activities/audit';
import { EXPORT_FORMATS, exportWorkflowId, type ExportProgress } from '../../activities/export';
import { queueExportJob } from '../../activities/export/jobs';
import type { GateReport } from '../../core/export/gate-report';
import type { ExportJob } from '../../generated/prisma/client';
import { exportWorkflow } from '../../workflows/export';
import type { AppDeps } from '../deps';
import type { Principal } from '../auth/principal';
import type { RouteGroup } from './route-group';
import { startWorkflow } from './start-workflow';

/**
 * Starting and reading exports, shared by the `export` and `datasets` groups (both start one) and
 * the `edge` group (resumable exports, progress, resume). docs/datasets.md.
 */

const RESERVED_NAMES = ['download', 'lineage'];

export const ExportIn = z
  .strictObject({
    name: z
      .string()
      .regex(/^[a-z0-9][a-z0-9._-]{0,63}$/, 'lower-case letters, digits, . _ -; at most 64')
      // `download` and `lineage` would read as routes under /api/datasets/versions/{name}.
      .refine((n) => !RESERVED_NAMES.includes(n), { message: 'download and lineage are reserved names' })
      .default('default')
      .meta({ description: 'dataset name; each export of a name is its next version' }),
    slice_id: z.uuid().nullable().default(null).meta({ description: 'a saved slice to export' }),
    predicate: SlicePredicate.nullable()
      .default(null)
      .meta({ description: 'an inline slice; with neither, the accepted and auto-accepted objects' }),
    formats: z
      .array(z.enum(EXPORT_FORMATS))
      .min(1)
      .max(EXPORT_FORMATS.length)
      .default([...EXPORT_FORMATS]),
    yolo_task: z.enum(['detect', 'segment']).default('detect'),
    include_images: z
      .boolean()
      .default(true)
      .meta({ description: 'copy the redacted images into the dataset' }),
    split: SplitIn.prefault({}),
  })
  .refine((b) => !(b.slice_id && b.predicate), {
    message: 'give slice_id or predicate, not both',
    path: ['predicate'],
  });
export type ExportIn = z.infer<typeof ExportIn>;

/**
 * `POST /api/export` and `POST /api/datasets/export`: one route filed under the two groups
 * routes.tsv names, declared once.
 */
export function exportStartRoute(
  deps: AppDeps,
  group: RouteGroup,
  path: string,
  summary: string,
): RouteGroup {
  return group.post(
    path,
    {
      summary: `${summary} (ExportWorkflow \`export-<job_id>\`, 202 + Location); the privacy gate refuses with 422 and the blocking sessions`,
      access: 'reviewer',
      body: { name: 'ExportIn', schema: ExportIn },
      successStatus: 202,
      statuses: {
        404: 'no such slice',
        409: 'an export of this job is already running, or the kill switch is engaged',
        422: 'refused by the privacy gate (the body lists the blocking sessions), an unknown class, or an empty slice (also once the sessions whose consent blocks export are left out)',
      },
    },
    ({ body, res, principal, req }) => startExport(deps, res, body, { principal, requestId: String(req.id) }),
  );
}

/**
 * Validates the selection and runs the privacy gate in the request (queueExportJob: one SQL
 * statement) so a refusal is the 422 the spec names, then starts `export-<job_id>`; a failed start
 * removes the job again.
 */
export async function startExport(
  deps: AppDeps,
  res: Response,
  body: ExportIn,
  caller: { principal: Principal; requestId: string },
) {
  const { job, gate, consent } = await queueExportJob(deps, body, {
    userId: caller.principal.userId,
    requestId: caller.requestId,
  });
  const mode = job.gateMode;
  const workflowId = exportWorkflowId(job.id);
  try {
    const started = await startWorkflow(deps, res, {
      workflow: exportWorkflow,
      workflowId,
      args: [{ jobId: job.id, heartbeatTimeoutSeconds: deps.config.export.heartbeatTimeoutSeconds }],
      location: `/api/exports/${job.id}/progress`,
      what: `export ${job.id}`,
    });
    await deps.db.exportJob.update({ where: { id: job.id }, data: { workflowId } });
    await recordAudit(deps.db, {
      actorId: caller.principal.userId,
      action: 'export.started',
      subjectType: 'export',
      subjectId: job.id,
      detail: { name: body.name, formats: body.formats, gate: gate?.outcome ?? 'pending' },
      requestId: caller.requestId,
    });
    return {
      job_id: job.id,
      name: job.name,
      state: job.state,
      formats: job.formats,
      gate: gateSummary(gate ?? { mode, outcome: 'pending' }),
      consent_excluded: consent.excluded,
      ...started,
    };
  } catch (err) {
    await deps.db.exportJob.delete({ where: { id: job.id } });
    throw err;
  }
}

/** `pending` until the workflow has run an advisory or disabled gate. */
const gateSummary = (gate: GateReport | { mode: string; outcome: 'pending' }) => ({
  mode: gate.mode,
  outcome: gate.outcome,
  checked_frames: 'checked_frames' in gate ? gate.checked_frames : null,
  frames_without_audit: 'frames_without_audit' in gate ? gate.frames_without_audit : null,
  uncovered_objects: 'uncovered_objects' in gate ? gate.uncovered_objects : null,
  sessions_with_gaps: 'blocking_sessions' in gate ? gate.blocking_sessions.map((s) => s.session_id) : [],
});

export function exportJobOut(job: ExportJob) {
  const gate = job.gate as unknown as GateReport | { mode: string; outcome: 'pending' };
  const p = (job.progress ?? {}) as Partial<ExportProgress>;
  const framesTotal = p.total_frames ?? null;
  return {
    job_id: job.id,
    name: job.name,
    state: job.state,
    formats: job.formats,
    include_images: job.includeImages,
    slice_id: job.sliceId,
    predicate: job.predicate,
    gate: gateSummary(gate),
    consent_excluded: p.consent_excluded ?? [],
    progress: {
      pages_done: p.pages_done ?? 0,
      frames_done: p.frames_done ?? 0,
      frames_total: framesTotal,
      objects_done: p.objects_done ?? 0,
      objects_total: p.total_objects ?? null,
      fraction:
        job.state === 'succeeded' ? 1 : framesTotal ? Math.min(0.99, (p.frames_done ?? 0) / framesTotal) : 0,
    },
    resumable: job.state === 'failed',
    commit_id: job.commitId,
    reproduces: job.reproducesCommitId
      ? {
          commit_id: job.reproducesCommitId,
          check_id: job.reproductionCheckId,
          result: p.reproduction ?? null,
        }
      : null,
    error: job.error,
    workflow_id: job.workflowId,
    created_by: job.createdBy,
    created_at: job.createdAt.toISOString(),
    updated_at: job.updatedAt.toISOString(),
    finished_at: job.finishedAt?.toISOString() ?? null,
  };
}

/** Starts a failed export's workflow again under its id; it continues after the last page written. */
export async function resumeExport(
  deps: AppDeps,
  res: Response,
  jobId: string,
  caller: { principal: Principal; requestId: string },
) {
  const job = await deps.db.exportJob.findUnique({ where: { id: jobId } });
  if (!job) throw new NotFoundError(`no export job ${jobId}`);
  if (job.state !== 'failed')
    throw new ConflictError(
      job.state === 'succeeded'
        ? `export ${jobId} already finished as commit ${job.commitId}`
        : job.state === 'refused'
          ? `export ${jobId} was refused by the privacy gate; start a new export once the gaps are redacted`
          : `export ${jobId} is ${job.state}, not failed`,
    );
  // Queued before the start, so the resumed run's own `running` is never overwritten.
  const resumed = await deps.db.exportJob.update({
    where: { id: job.id },
    data: { state: 'queued', error: null },
  });
  let started;
  try {
    started = await startWorkflow(deps, res, {
      workflow: exportWorkflow,
      workflowId: exportWorkflowId(job.id),
      args: [{ jobId: job.id, heartbeatTimeoutSeconds: deps.config.export.heartbeatTimeoutSeconds }],
      location: `/api/exports/${job.id}/progress`,
      what: `export ${job.id}`,
    });
  } catch (err) {
    await deps.db.exportJob.update({ where: { id: job.id }, data: { state: 'failed', error: job.error } });
    throw err;
  }
  await recordAudit(deps.db, {
    actorId: caller.principal.userId,
    action: 'export.resumed',
    subjectType: 'export',
    subjectId: job.id,
    detail: { after_page: (job.cursor as { page?: number } | null)?.page ?? 0 },
    requestId: caller.requestId,
  });
  return { ...exportJobOut(resumed), ...started };
}
