import { createCropFrames, cropJpeg } from '../../../activities/annotations/crops';
import { recordPiiAccess } from '../../../activities/inbox/pii-access';
import {
  importRun,
  inferenceRunWorkflowId,
  queueGpuRun,
  reconstructRun,
  runOut,
} from '../../../activities/quality/inference-runs';
import { modelOut, registerExternalModel } from '../../../activities/quality/models';
import { NotFoundError } from '../../../core/errors';
import { inferenceRunWorkflow } from '../../../workflows/inference-run';
import type { AppDeps } from '../../deps';
import { actorOf } from '../../http/actor';
import { RouteGroup, uuidParams } from '../../http/route-group';
import { CropQuery } from '../../http/shapes';
import { startWorkflow } from '../../http/start-workflow';
import { ExternalModelIn, InferenceRunIn } from './validators';

/** The `predictions` group: inference runs (GPU, imported, reconstructed), external models, prediction crops (docs/quality.md). */
export function createPredictionRoutes(deps: AppDeps): RouteGroup {
  const { db, storage } = deps;
  const cropFrames = createCropFrames(storage);
  return new RouteGroup('predictions')
    .post(
      '/api/inference-runs',
      {
        summary:
          "A model's predictions over a set of frames: `gpu` runs the closed-set detector on the GPU slot as workflow inference-run-<id> (202, Location: its eval operations); `import` stores a registered external model's predictions (201); `reconstruct` rebuilds a session's machine proposals from the review history (201; null confidences, refused AP evaluation)",
        access: 'reviewer',
        body: { name: 'InferenceRunIn', schema: InferenceRunIn },
        successStatus: 201,
        alsoSucceeds: { 202: 'gpu run started' },
        statuses: {
          404: 'no such session, frame, gold set or model',
          409: 'already running',
        },
      },
      async ({ body, principal, req, res }) => {
        const actor = actorOf(principal, req);
        if (body.mode === 'import') return runOut(await importRun(db, body, actor));
        if (body.mode === 'reconstruct') return runOut(await reconstructRun(db, body, actor));
        const run = await queueGpuRun(db, body, actor, body.model_version);
        const started = await startWorkflow(deps, res, {
          workflow: inferenceRunWorkflow,
          workflowId: inferenceRunWorkflowId(run.id),
          args: [
            {
              runId: run.id,
              workflowId: inferenceRunWorkflowId(run.id),
              gpuTaskQueue: deps.config.temporal.gpuTaskQueue,
              heartbeatTimeoutSeconds: deps.config.autolabel.heartbeatTimeoutSeconds,
            },
          ],
          location: `/api/eval/operations?subject_id=${run.id}`,
          what: `inference run ${run.id}`,
        });
        return { ...runOut(run), ...started };
      },
    )
    .post(
      '/api/models/external',
      {
        summary: 'Register an external model whose predictions are imported as inference runs',
        access: 'reviewer',
        body: { name: 'ExternalModelIn', schema: ExternalModelIn },
        successStatus: 201,
        statuses: { 409: 'model_version already registered' },
      },
      async ({ body, principal, req }) =>
        modelOut(await registerExternalModel(db, body, actorOf(principal, req))),
    )
    .get(
      '/api/predictions/{prediction_id}/crop',
      {
        summary: "The prediction's padded crop as JPEG (from the redacted frame when there is one)",
        access: 'annotator',
        params: uuidParams('prediction_id'),
        query: CropQuery,
        mediaToken: true,
        statuses: { 404: 'no such prediction or frame image' },
        respondsItself: { contentType: 'image/jpeg' },
      },
      async ({ params, query, res, principal, req }) => {
        const p = await db.prediction.findUnique({
          where: { id: params.prediction_id },
          include: { frame: true },
        });
        if (!p) throw new NotFoundError(`no prediction ${params.prediction_id}`);
        const jpeg = await cropJpeg(
          await cropFrames.get(p.frame),
          p.frame,
          p.bbox,
          query.pad,
          query.size ?? null,
        );
        // Cut from the original when the frame has no redacted copy yet.
        await recordPiiAccess(
          db,
          { userId: principal.userId, ip: req.ip },
          'GET /api/predictions/{prediction_id}/crop',
          [p.frame].filter((f) => !f.redactedUri),
        );
        res.type('image/jpeg').send(jpeg);
      },
    );
}
