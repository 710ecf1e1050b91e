import { NotFoundError } from '../../../core/errors';
import { jobOut } from '../../../activities/autolabel/jobs';
import type { AppDeps } from '../../deps';
import { RouteGroup, uuidParams } from '../../http/route-group';
import { autolabelWorkflowId } from '../../../activities/autolabel/jobs';
import { checkComputeTarget, startAutolabel, startRedetectCorpus } from './start';
import { AutolabelStartIn, RedetectAllIn } from './validators';
import { PII_BACKFILL_KIND } from '../../../activities/pii-recheck/recheck';
import { actorOf } from '../../http/actor';
import { PiiRunIn, startPiiRun } from '../../http/pii-runs';

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
          409: 'an auto-label of this session is already running, or the kill switch is engaged',
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
          ...(body.slicing ? { slicing: body.slicing } : {}),
          actorId: principal.userId,
          requestId: String(req.id),
        });
      },
    )
    .post(
      '/api/autolabel/redetect-all',
      {
        summary:
          'Start one durable corpus run (AgentRun, workflow `redetect-all`) that deletes and regenerates the machine-source objects of every machine-labelled session, or of the listed ones, frame by frame on the GPU slot; `human` objects are never touched; revertible (202)',
        access: 'admin',
        body: { name: 'RedetectAllIn', schema: RedetectAllIn },
        successStatus: 202,
        statuses: {
          409: 'a redetect-all run is already running, or the kill switch is engaged',
          422: 'none of the listed sessions can be redetected, or an unavailable compute target',
        },
      },
      async ({ body, res, principal, req }) => {
        checkComputeTarget(body.compute_target);
        return startRedetectCorpus(deps, res, {
          sessionIds: body.session_ids,
          computeTarget: body.compute_target,
          actorId: principal.userId,
          requestId: String(req.id),
        });
      },
    )
    .post(
      '/api/autolabel/pii-backfill',
      {
        summary:
          "Start the ingest's PII pass over every frame lacking a PII audit (or not examined), in the listed sessions or the whole corpus, as one revertible AgentRun (kind pii-backfill, workflow pii-backfill) on the cpu queue; add-only: a recorded region is never removed or shrunk (202, Location: the run)",
        access: 'admin',
        body: { name: 'PiiBackfillIn', schema: PiiRunIn },
        successStatus: 202,
        statuses: {
          409: 'a PII backfill is already running, or the kill switch is engaged',
          422: 'a listed session does not exist',
          503: 'the workflow service does not answer',
        },
      },
      async ({ body, res, principal, req }) =>
        startPiiRun(deps, res, PII_BACKFILL_KIND, body, actorOf(principal, req)),
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
