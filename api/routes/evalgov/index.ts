import {
  estimateAudit,
  getAudit,
  listAudits,
  markLabeled,
  scoreAudit,
  seedAudit,
} from '../../../activities/evalgov/blind-audits';
import {
  evaluateRun,
  evaluationMatrix,
  evaluationPairs,
  hierarchicalEvaluation,
  modelEvaluations,
} from '../../../activities/evalgov/evaluate';
import { safetyRecallOf } from '../../../activities/evalgov/safety';
import { shadowTriage } from '../../../activities/evalgov/shadow';
import { bootstrapValues, significance } from '../../../activities/evalgov/stats';
import { NotAllowedError } from '../../../core/errors';
import type { AppDeps } from '../../deps';
import { actorOf } from '../../http/actor';
import { RouteGroup, uuidParams } from '../../http/route-group';
import {
  BlindAuditQuery,
  BlindAuditSeedIn,
  BlindAuditsQuery,
  BootstrapIn,
  EstimateQuery,
  EvaluateIn,
  HierarchicalQuery,
  MarkLabeledIn,
  MatrixQuery,
  ModelEvalsQuery,
  ModelParams,
  PairsQuery,
  SafetyRecallIn,
  ScoreIn,
  ShadowTriageIn,
  SignificanceIn,
} from './validators';

const RECONSTRUCTED = 'a reconstructed run (null confidences) is refused by name (reason: reconstructed)';

/**
 * The `evaluation governance` group (docs/quality-evalgov.md): evaluations of runs against gold per
 * slice with both COCO harnesses, the views over them (matrix, hierarchy, pairs, a model's
 * evaluations), statistics (bootstrap, paired significance), safety-class recall floors, shadow
 * triage and blind audits. Computations and reads are open to annotators (they only add to the
 * evaluation log); blind-audit writes need a reviewer, revealing hidden sources an admin.
 */
export function createEvalgovRoutes(deps: AppDeps): RouteGroup {
  const { db, config } = deps;
  return new RouteGroup('evaluation governance')
    .post(
      '/api/evalgov/stats/bootstrap',
      {
        summary:
          'Percentile bootstrap interval of the mean of values (BootstrapIn; the same seed gives the same interval); recorded as a `bootstrap` operation',
        access: 'annotator',
        body: { name: 'BootstrapIn', schema: BootstrapIn },
        statuses: { 422: 'values × n_boot beyond one request' },
      },
      async ({ body, principal, req }) => bootstrapValues(db, body, actorOf(principal, req)),
    )
    .post(
      '/api/evalgov/stats/significance',
      {
        summary:
          'Paired test between two runs on the same gold frames: per-frame F1 through sign-flip permutation, Wilcoxon and a bootstrap of the mean difference, and a paired frame bootstrap of the mAP difference; recorded as a `significance` operation',
        access: 'annotator',
        body: { name: 'SignificanceIn', schema: SignificanceIn },
        statuses: {
          404: 'no such run, gold set or slice',
          409: 'a run is not completed, or the gold set is not sealed',
          422: `${RECONSTRUCTED}; the same run twice; an empty slice`,
        },
      },
      async ({ body, principal, req }) => significance(db, body, actorOf(principal, req)),
    )
    .post(
      '/api/evalgov/evaluate',
      {
        summary:
          'Evaluate a run against a sealed gold set, whole and per slice: COCO figures from both harnesses with their divergence, per-class counts; one `evalgov_evaluate` operation per scope',
        access: 'annotator',
        body: { name: 'EvaluateIn', schema: EvaluateIn },
        statuses: {
          404: 'no such run, gold set or slice',
          409: 'the run is not completed, or the gold set is not sealed',
          422: RECONSTRUCTED,
        },
      },
      async ({ body, principal, req }) => evaluateRun(db, config, body, actorOf(principal, req)),
    )
    .get(
      '/api/evalgov/matrix',
      {
        summary:
          'Model × slice: the latest evaluation of each model version on the whole gold set and on each slice (mAP, AP50, recall and its operation)',
        access: 'annotator',
        query: MatrixQuery,
      },
      async ({ query }) => evaluationMatrix(db, query),
    )
    .get(
      '/api/evalgov/hierarchical',
      {
        summary:
          "An evaluation's per-class figures rolled up by the ontology's l0 and l1, micro (pooled counts) and macro (mean over classes); the operation named or a model version's latest",
        access: 'annotator',
        query: HierarchicalQuery,
        statuses: { 404: 'no such evaluation' },
      },
      async ({ query }) => hierarchicalEvaluation(db, query),
    )
    .post(
      '/api/evalgov/safety/recall',
      {
        summary:
          'Recall of the safety classes (l1 vru, animal, two_wheeler) of a run against gold, each against its floor (by class, else by l1, else default): pass or fail per class and overall; recorded as a `safety_recall` operation',
        access: 'annotator',
        body: { name: 'SafetyRecallIn', schema: SafetyRecallIn },
        statuses: {
          404: 'no such run, gold set or slice',
          409: 'the run is not completed, or the gold set is not sealed',
          422: `${RECONSTRUCTED}; a floor on a class that is not a safety class`,
        },
      },
      async ({ body, principal, req }) => safetyRecallOf(db, body, actorOf(principal, req)),
    )
    .post(
      '/api/evalgov/shadow/triage',
      {
        summary:
          'A shadow (challenger) run against the production (champion) run on the same frames, no gold: frames ranked by disagreement (unmatched confident boxes, class and confidence disagreements) for human triage; recorded as a `shadow_triage` operation',
        access: 'annotator',
        body: { name: 'ShadowTriageIn', schema: ShadowTriageIn },
        statuses: {
          404: 'no such run or frame',
          409: 'a run is not completed',
          422: `${RECONSTRUCTED}; the same run twice`,
        },
      },
      async ({ body, principal, req }) => shadowTriage(db, body, actorOf(principal, req)),
    )
    .get(
      '/api/evalgov/pairs',
      {
        summary:
          'Champion/challenger pairs: every two model versions evaluated on the same gold set and scope (the earlier evaluated is the champion), with challenger − champion deltas and their latest significance result',
        access: 'annotator',
        query: PairsQuery,
      },
      async ({ query }) => evaluationPairs(db, query),
    )
    .get(
      '/api/evalgov/model/{model_version}/evals',
      {
        summary: "A model version's evaluations, newest first (paged)",
        access: 'annotator',
        params: ModelParams,
        query: ModelEvalsQuery,
        statuses: { 404: 'the model is neither registered nor evaluated' },
      },
      async ({ params, query }) => modelEvaluations(db, params.model_version, query),
    )
    .post(
      '/api/evalgov/blind-audit/seed',
      {
        summary:
          "Seed a blind audit: a seeded sample of objects per class (of a slice or predicate, of classes), frozen with each object's source and confidence hidden from reviewers",
        access: 'reviewer',
        body: { name: 'BlindAuditSeedIn', schema: BlindAuditSeedIn },
        successStatus: 201,
        statuses: {
          404: 'no such slice',
          422: 'unknown class or predicate value; an empty or oversized sample',
        },
      },
      async ({ body, principal, req }) => seedAudit(db, body, actorOf(principal, req)),
    )
    .get(
      '/api/evalgov/blind-audits',
      {
        summary: 'Blind audits, newest first, with how many items are labelled',
        access: 'annotator',
        query: BlindAuditsQuery,
      },
      async ({ query }) => listAudits(db, query),
    )
    .get(
      '/api/evalgov/blind-audit/{audit_id}',
      {
        summary:
          'A blind audit and its items without their hidden source and confidence; `reveal=true` (admin) shows them',
        access: 'annotator',
        params: uuidParams('audit_id'),
        query: BlindAuditQuery,
        statuses: { 403: 'reveal asked below admin', 404: 'no such audit' },
      },
      async ({ params, query, principal }) => {
        if (query.reveal && principal.role !== 'admin')
          throw new NotAllowedError('only an admin may reveal the hidden sources of a blind audit');
        return getAudit(db, params.audit_id, { reveal: query.reveal });
      },
    )
    .post(
      '/api/evalgov/blind-audit/{audit_id}/mark-labeled',
      {
        summary:
          'Record verdicts (correct | incorrect) on items, with the labeller; an item already labelled answers 409 unless overwrite',
        access: 'reviewer',
        params: uuidParams('audit_id'),
        body: { name: 'MarkLabeledIn', schema: MarkLabeledIn },
        statuses: {
          404: 'no such audit, or an object that is not one of its items',
          409: 'already labelled, or the audit is scored',
        },
      },
      async ({ params, body, principal, req }) =>
        markLabeled(db, params.audit_id, body, actorOf(principal, req)),
    )
    .post(
      '/api/evalgov/blind-audit/{audit_id}/score',
      {
        summary:
          'Score the audit: precision overall, per class and per hidden source with Wilson intervals; the audit becomes scored; recorded as a `blind_audit_score` operation',
        access: 'reviewer',
        params: uuidParams('audit_id'),
        body: { name: 'BlindAuditScoreIn', schema: ScoreIn },
        statuses: {
          404: 'no such audit',
          409: 'already scored, no verdict yet, or items unlabelled without partial',
        },
      },
      async ({ params, body, principal, req }) =>
        scoreAudit(db, params.audit_id, body, actorOf(principal, req)),
    )
    .get(
      '/api/evalgov/blind-audit/{audit_id}/estimate',
      {
        summary:
          'The current precision estimate from the verdicts so far, overall and per class, with its Wilson interval and how many items remain',
        access: 'annotator',
        params: uuidParams('audit_id'),
        query: EstimateQuery,
        statuses: { 404: 'no such audit' },
      },
      async ({ params, query }) => estimateAudit(db, params.audit_id, query.alpha),
    );
}
