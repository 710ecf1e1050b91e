import { agreementOfAnnotations } from '../../../activities/quality/agreement';
import { precisionAudit } from '../../../activities/quality/audit';
import { reconcileParity } from '../../../activities/quality/parity';
import { humanQueues } from '../../../activities/quality/queue';
import { MIN_CONTROL_SAMPLE } from '../../../core/control';
import type { AppDeps } from '../../deps';
import { actorOf } from '../../http/actor';
import { RouteGroup } from '../../http/route-group';
import { AgreementIn, AuditIn, ParityIn, QueueQuery } from './validators';

/** The quality routes of the `platform` group (docs/quality-measure.md). */
export function createPlatformQualityRoutes(deps: AppDeps): RouteGroup {
  const { db, config } = deps;
  return new RouteGroup('platform')
    .post(
      '/api/platform/quality/agreement',
      {
        summary:
          "Inter-annotator agreement of the annotations sent (AgreementIn): optimal IoU matching per frame, Cohen's kappa per pair, Fleiss' kappa, Krippendorff's alpha, mean IoU, unmatched objects per annotator and per-class agreement; recorded as eval operation `agreement`",
        access: 'annotator',
        body: { name: 'AgreementIn', schema: AgreementIn },
        statuses: { 422: 'fewer than two annotators, or a malformed annotation' },
      },
      async ({ body, principal, req }) => agreementOfAnnotations(db, body, actorOf(principal, req)),
    )
    .post(
      '/api/platform/quality/audit',
      {
        summary: `Per-class precision audit: a seeded sample of each class's auto-accepted machine objects becomes control samples for human verdicts (POST /api/govern/control/{sample_id}/verdict); each class's Laplace-smoothed precision is reported from ${MIN_CONTROL_SAMPLE} verdicts. The same seed, size and scope read the same audit back`,
        access: 'reviewer',
        body: { name: 'AuditIn', schema: AuditIn },
        statuses: {
          404: 'no such session or class',
          422: 'too many auto-accepted objects in scope for one draw',
        },
      },
      async ({ body, principal, req }) => precisionAudit(db, body, actorOf(principal, req)),
    )
    .get(
      '/api/platform/queue',
      {
        summary:
          'Every human work queue at a glance: objects waiting in review, annotate or submitted (by state, class and session), controls awaiting a verdict, open error candidates, unlabelled blind-audit items, each with its oldest waiting age',
        access: 'annotator',
        query: QueueQuery,
        statuses: { 404: 'no such session' },
      },
      async ({ query }) => humanQueues(db, query),
    )
    .post(
      '/api/platform/reconcile/parity',
      {
        summary:
          'Harness parity: a run against a gold set through both COCO harnesses (the pycocotools-equal evaluator and the independent streaming one), every headline figure and per-class AP compared at epsilon (default config quality.parityEpsilon); recorded as eval operation `parity`. A reconstructed run is refused',
        access: 'reviewer',
        body: { name: 'ParityIn', schema: ParityIn },
        statuses: {
          404: 'no such run or gold set',
          409: 'the run is not completed, or the gold set is not sealed',
          422: 'reconstructed run',
        },
      },
      async ({ body, principal, req }) =>
        reconcileParity(
          db,
          {
            run_id: body.run_id,
            gold_id: body.gold_id,
            epsilon: body.epsilon ?? config.quality.parityEpsilon,
          },
          actorOf(principal, req),
        ),
    );
}
