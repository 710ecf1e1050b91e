import { NotFoundError, RefusedError } from '../../../core/errors';
import { jobOut } from '../../../activities/autolabel/jobs';
import type { AppDeps } from '../../deps';
import { RouteGroup, uuidParams } from '../../http/route-group';
import { autolabelWorkflowId, checkComputeTarget, refusal, startAutolabel } from './start';
import { AutolabelStartIn, RedetectAllIn } from './validators';

/** The `autolabel` group: start a session's auto-label, read a job, redetect machine objects. */
export function createAutolabelRoutes(deps: AppDeps): RouteGroup {
  const { db } = deps;
  return new RouteGroup('autolabel')
    .post(
      '/api/autolabel/start',
      {
        summary:
          'Start AutoLabelWorkflow for one session (202 + Location): three fused paths on the GPU slot, one session at a time',
        access: 'reviewer',
        body: { name: 'AutolabelStartIn', schema: AutolabelStartIn },
        successStatus: 202,
        statuses: {
          404: 'no such session',
          409: 'an auto-label of this session is already running',
          422: 'quarantined session, no frames, or an unavailable compute target',
        },
      },
      async ({ body, res, principal, req }) => {
        checkComputeTarget(body.compute_target);
        return startAutolabel(deps, res, {
          sessionId: body.session_id,
          mode: 'autolabel',
          computeTarget: body.compute_target,
          limit: body.limit,
          onlyUnlabelled: body.only_unlabelled,
          actorId: principal.userId,
          requestId: String(req.id),
        });
      },
    )
    .post(
      '/api/autolabel/redetect-all',
      {
        summary:
          'Delete and regenerate the machine-source objects of sessions frame by frame; `human` objects are never touched (202)',
        access: 'admin',
        body: { name: 'RedetectAllIn', schema: RedetectAllIn },
        successStatus: 202,
        statuses: {
          422: 'no session could be started',
        },
      },
      async ({ body, res, principal, req }) => {
        checkComputeTarget(body.compute_target);
        const ids =
          body.session_ids ??
          (
            await db.session.findMany({
              where: { frames: { some: {} } },
              orderBy: { createdAt: 'asc' },
              take: 100,
              select: { id: true },
            })
          ).map((s) => s.id);
        const started: unknown[] = [];
        const skipped: Array<{ session_id: string; reason: string }> = [];
        for (const sessionId of ids) {
          const refused = await refusal(deps, sessionId);
          if (refused) {
            skipped.push({ session_id: sessionId, reason: refused.reason });
            continue;
          }
          try {
            started.push(
              await startAutolabel(deps, res, {
                sessionId,
                mode: 'redetect',
                computeTarget: body.compute_target,
                limit: null,
                onlyUnlabelled: false,
                actorId: principal.userId,
                requestId: String(req.id),
              }),
            );
          } catch (err) {
            skipped.push({ session_id: sessionId, reason: (err as Error).message });
          }
        }
        const first = started[0] as { status_url: string } | undefined;
        if (!first)
          throw new RefusedError(
            `no session could be redetected: ${skipped.map((s) => s.reason).join('; ') || 'none has frames'}`,
            { skipped },
          );
        res.status(202).location(first.status_url);
        return { started, skipped };
      },
    )
    .get(
      '/api/autolabel/{job_id}',
      {
        summary: 'An auto-label job: state, frames done, objects by state, vetoes, controls, which paths ran',
        access: 'annotator',
        params: uuidParams('job_id'),
        statuses: { 404: 'no such job' },
      },
      async ({ params }) => {
        const id = params.job_id;
        const job = await db.autolabelJob.findUnique({ where: { id } });
        if (!job) throw new NotFoundError(`no autolabel job ${id}`);
        return { ...jobOut(job), workflow_id: autolabelWorkflowId(job.sessionId) };
      },
    );
}
