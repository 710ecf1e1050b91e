import { createMaskStore } from '../../../activities/annotations/masks';
import { recordAudit } from '../../../activities/audit';
import {
  bulkDecide,
  decideCandidate,
  detectorPrecision,
  discardErrorRun,
  errorDetectSummary,
  errorDetectWorkflowId,
  errorRunOut,
  listCandidates,
  queueErrorRun,
} from '../../../activities/errordetect';
import { MIN_CONTROL_SAMPLE } from '../../../core/control';
import { errorDetectWorkflow } from '../../../workflows/errordetect';
import type { AppDeps } from '../../deps';
import { actorOf } from '../../http/actor';
import { RouteGroup, uuidParams } from '../../http/route-group';
import { startWorkflow } from '../../http/start-workflow';
import {
  BulkVerdictIn,
  CandidatesQuery,
  ConfirmIn,
  DismissIn,
  ErrorDetectRunIn,
  PrecisionQuery,
  SummaryQuery,
} from './validators';

/** The `errordetect` group: label-error candidates, their verdicts and the detector's measured precision (docs/quality-errordetect.md). */
export function createErrordetectRoutes(deps: AppDeps): RouteGroup {
  const { db } = deps;
  const masks = createMaskStore(deps.storage);
  return new RouteGroup('errordetect')
    .post(
      '/api/errordetect/run',
      {
        summary:
          "Find likely label errors over a scope of frames (workflow errordetect-<id>): confident-learning label flips, duplicates, missing objects and badly localised boxes, each with a proposed fix and a score, from a named inference run's predictions or, without one, from the closed-set detector run on the GPU slot first; 202, Location: the run's summary",
        access: 'reviewer',
        body: { name: 'ErrorDetectRunIn', schema: ErrorDetectRunIn },
        successStatus: 202,
        statuses: {
          404: 'no such session, frame, gold set or inference run',
          409: 'the inference run is not completed',
          422: 'no frames named or in scope, a reconstructed run, a run with no prediction on the scope, options that contradict each other',
          503: 'the workflow service does not answer',
        },
      },
      async ({ body, principal, req, res }) => {
        const actor = actorOf(principal, req);
        const run = await queueErrorRun(db, body, actor);
        let started: Awaited<ReturnType<typeof startWorkflow>>;
        try {
          started = await startWorkflow(deps, res, {
            workflow: errorDetectWorkflow,
            workflowId: errorDetectWorkflowId(run.id),
            args: [
              {
                errorRunId: run.id,
                gpuTaskQueue: deps.config.temporal.gpuTaskQueue,
                heartbeatTimeoutSeconds: deps.config.autolabel.heartbeatTimeoutSeconds,
              },
            ],
            location: `/api/errordetect/summary?error_run_id=${run.id}`,
            what: `error detection ${run.id}`,
          });
        } catch (err) {
          // Nothing started: the queued row goes, so a refused start leaves no trace.
          await discardErrorRun(db, run.id);
          throw err;
        }
        await recordAudit(db, {
          actorId: actor.userId,
          action: 'errordetect.run.started',
          subjectType: 'error_run',
          subjectId: run.id,
          detail: { scope: run.scope, run_id: run.runId, options: run.options },
          requestId: actor.requestId,
        });
        const { run_id: workflowRunId, ...workflow } = started;
        return { ...errorRunOut(run), ...workflow, workflow_run_id: workflowRunId };
      },
    )
    .get(
      '/api/errordetect/candidates',
      {
        summary:
          'Error candidates, highest score first; filter by error_run_id, kind, state (open|confirmed|dismissed), frame_id, min_score; paged by next_cursor',
        access: 'annotator',
        query: CandidatesQuery,
        statuses: { 404: 'no such error run' },
      },
      async ({ query }) => listCandidates(db, query),
    )
    .post(
      '/api/errordetect/candidates/{candidate_id}/confirm',
      {
        summary:
          'Confirm a candidate; with apply_proposed its fix goes through the annotation store (relabel and move as review edits, delete as the object delete, create as a human accepted object) and `applied` says what changed. 409 when already decided, or when an object it names changed or went since detection (nothing applied)',
        access: 'reviewer',
        params: uuidParams('candidate_id'),
        body: { name: 'ConfirmIn', schema: ConfirmIn },
        statuses: {
          404: 'no such candidate, or user_id names no user',
          409: 'already decided, or an object it names changed or is gone',
          422: 'the proposed class is retired or gone',
        },
      },
      async ({ params, body, principal, req }) =>
        decideCandidate(
          db,
          masks,
          {
            candidateId: params.candidate_id,
            verdict: 'confirm',
            applyProposed: body.apply_proposed,
            reviewer: body.reviewer,
            userId: body.user_id,
            note: null,
          },
          actorOf(principal, req),
        ),
    )
    .post(
      '/api/errordetect/candidates/{candidate_id}/dismiss',
      {
        summary: 'Dismiss a candidate (not an error), with an optional note; 409 when already decided',
        access: 'reviewer',
        params: uuidParams('candidate_id'),
        body: { name: 'DismissIn', schema: DismissIn },
        statuses: { 404: 'no such candidate, or user_id names no user', 409: 'already decided' },
      },
      async ({ params, body, principal, req }) =>
        decideCandidate(
          db,
          masks,
          {
            candidateId: params.candidate_id,
            verdict: 'dismiss',
            applyProposed: false,
            reviewer: body.reviewer,
            userId: body.user_id,
            note: body.note,
          },
          actorOf(principal, req),
        ),
    )
    .post(
      '/api/errordetect/candidates/bulk',
      {
        summary:
          'Confirm or dismiss up to 1000 candidates, each in its own transaction: the answer reports every id (decided, not_found, conflict, refused); one that cannot be decided does not hold back the others',
        access: 'reviewer',
        body: { name: 'BulkVerdictIn', schema: BulkVerdictIn },
      },
      async ({ body, principal, req }) => bulkDecide(db, masks, body, actorOf(principal, req)),
    )
    .get(
      '/api/errordetect/precision',
      {
        summary: `The detector's precision from the verdicts, confirmed / (confirmed + dismissed) Laplace-smoothed, overall and per kind (per error run with by_run); reported from ${MIN_CONTROL_SAMPLE} verdicts up, "not yet measurable" below with how many candidates await a verdict`,
        access: 'annotator',
        query: PrecisionQuery,
        statuses: { 404: 'no such error run' },
      },
      async ({ query }) => detectorPrecision(db, query),
    )
    .get(
      '/api/errordetect/summary',
      {
        summary:
          'Candidates per kind × state, overall and per error run (newest first, with each run’s status), and the class thresholds of the latest completed run',
        access: 'annotator',
        query: SummaryQuery,
        statuses: { 404: 'no such error run' },
      },
      async ({ query }) => errorDetectSummary(db, query),
    );
}
