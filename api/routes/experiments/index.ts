import {
  attachRun,
  compareRuns,
  createExperiment,
  getExperiment,
  listExperiments,
} from '../../../activities/experiments/experiments';
import { falseNegatives, recallReliabilityOf } from '../../../activities/experiments/recall';
import { evaluateRunTracking } from '../../../activities/experiments/tracking';
import { z } from 'zod';
import type { AppDeps } from '../../deps';
import { actorOf } from '../../http/actor';
import { RouteGroup } from '../../http/route-group';
import {
  AttachIn,
  CompareQuery,
  ExperimentIn,
  ExperimentName,
  ExperimentsQuery,
  FalseNegativesQuery,
  RecallReliabilityIn,
  TrackingIn,
} from './validators';

const NameParams = z.object({ name: ExperimentName });

/** The `experiments` group: experiments and their runs, run comparison, misses and recall on gold, tracking (docs/experiments.md). */
export function createExperimentsRoutes(deps: AppDeps): RouteGroup {
  const { db } = deps;
  return new RouteGroup('experiments')
    .post(
      '/api/experiments',
      {
        summary: 'Create a named experiment',
        access: 'reviewer',
        body: { name: 'ExperimentIn', schema: ExperimentIn },
        successStatus: 201,
        statuses: { 409: 'an experiment of that name exists' },
      },
      async ({ body, principal, req }) => createExperiment(db, body, actorOf(principal, req)),
    )
    .get(
      '/api/experiments',
      {
        summary: 'Experiments, newest first, with their run counts',
        access: 'annotator',
        query: ExperimentsQuery,
        statuses: { 404: 'the cursor names no experiment' },
      },
      async ({ query }) => listExperiments(db, query),
    )
    .get(
      '/api/experiments/runs/compare',
      {
        summary:
          'Runs side by side: training configuration, metrics, validation AP per class, curve summary and latest gold evaluations of each, with deltas against the first run named',
        access: 'annotator',
        query: CompareQuery,
        statuses: { 404: 'no such experiment run' },
      },
      async ({ query }) => compareRuns(db, query.run_ids),
    )
    .get(
      '/api/experiments/{name}',
      {
        summary:
          'An experiment and its runs, each with its training job (status, configuration, metrics, curve summarised)',
        access: 'annotator',
        params: NameParams,
        statuses: { 404: 'no such experiment' },
      },
      async ({ params }) => getExperiment(db, params.name),
    )
    .post(
      '/api/experiments/{name}/runs',
      {
        summary: 'Attach a training job to the experiment as a run (AttachIn)',
        access: 'reviewer',
        params: NameParams,
        body: { name: 'AttachIn', schema: AttachIn },
        successStatus: 201,
        statuses: {
          404: 'no such experiment, training job or baseline run',
          409: 'the job is already a run of this experiment',
        },
      },
      async ({ params, body, principal, req }) => attachRun(db, params.name, body, actorOf(principal, req)),
    )
    .get(
      '/api/activelearn/false-negatives',
      {
        summary:
          "The gold objects a model version's run on a gold set misses (no prediction with conf ≥ conf_thr matches at IoU ≥ iou), per class, with object, frame and session ids",
        access: 'annotator',
        query: FalseNegativesQuery,
        statuses: {
          404: 'no such gold set or run, or the model has no completed run on the gold set',
          409: 'the gold set is not sealed, or the run has not completed',
          422: 'the run is reconstructed or of another model',
        },
      },
      async ({ query }) => falseNegatives(db, query),
    )
    .post(
      '/api/activelearn/recall-reliability',
      {
        summary:
          "Recall per class of a model version's run on a gold set at the operating point, with a percentile bootstrap interval over frames, and whether the sample is large enough (min_sample gold objects) and the interval narrow enough (max_width) to trust it; recorded as a recall_reliability operation",
        access: 'annotator',
        body: { name: 'RecallReliabilityIn', schema: RecallReliabilityIn },
        statuses: {
          404: 'no such gold set or run, or the model has no completed run on the gold set',
          409: 'the gold set is not sealed, or the run has not completed',
          422: 'the run is reconstructed or of another model; too many resamples',
        },
      },
      async ({ body, principal, req }) => recallReliabilityOf(db, body, actorOf(principal, req)),
    )
    .post(
      '/api/eval/tracking',
      {
        summary:
          "Tracking metrics of an inference run against people's tracks on one session: the run's boxes are tracked with the platform's tracker (ByteTrack, settings) and scored against the session's human objects grouped by track — CLEAR MOT (MOTA, MOTP, switches), identity (IDF1, IDP, IDR) and HOTA, as py-motmetrics and TrackEval compute them; recorded as an eval operation tracking",
        access: 'annotator',
        body: { name: 'TrackingIn', schema: TrackingIn },
        statuses: {
          404: 'no such session, run or class',
          409: 'the run has not completed',
          422: 'the run is reconstructed, the session has no human tracks, or the run has no boxes on it',
        },
      },
      async ({ body, principal, req }) => evaluateRunTracking(db, body, actorOf(principal, req)),
    );
}
