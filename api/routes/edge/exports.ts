import { z } from 'zod';
import { NotFoundError } from '../../../core/errors';
import type { AppDeps } from '../../deps';
import { exportJobOut, resumeExport } from '../../http/exports';
import { RouteGroup, uuidParams } from '../../http/route-group';

const ResumableQuery = z.strictObject({ limit: z.coerce.number().int().min(1).max(200).default(50) });

/** Resumable exports (filed under `edge` in the route inventory): list, progress, resume. */
export function createExportJobRoutes(deps: AppDeps): RouteGroup {
  const { db } = deps;
  return new RouteGroup('edge')
    .get(
      '/api/exports/resumable',
      {
        summary: 'Exports that stopped part-way (state `failed`), newest first, with where they stopped',
        access: 'reviewer',
        query: ResumableQuery,
      },
      async ({ query }) => {
        const jobs = await db.exportJob.findMany({
          where: { state: 'failed' },
          orderBy: [{ updatedAt: 'desc' }, { id: 'desc' }],
          take: query.limit,
        });
        return { items: jobs.map(exportJobOut) };
      },
    )
    .get(
      '/api/exports/{job_id}/progress',
      {
        summary: 'An export job: state, pages, frames and objects written of the total, gate outcome, commit',
        access: 'reviewer',
        params: uuidParams('job_id'),
        statuses: { 404: 'no such export job' },
      },
      async ({ params }) => {
        const job = await db.exportJob.findUnique({ where: { id: params.job_id } });
        if (!job) throw new NotFoundError(`no export job ${params.job_id}`);
        return exportJobOut(job);
      },
    )
    .post(
      '/api/exports/{job_id}/resume',
      {
        summary:
          'Start a failed export again under its workflow id (202 + Location); it continues after the last page it wrote',
        access: 'reviewer',
        params: uuidParams('job_id'),
        successStatus: 202,
        statuses: {
          404: 'no such export job',
          409: 'the export is not failed (running, finished or refused)',
        },
      },
      ({ params, res, principal, req }) =>
        resumeExport(deps, res, params.job_id, { principal, requestId: String(req.id) }),
    );
}
