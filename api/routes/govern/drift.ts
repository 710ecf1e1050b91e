import { z } from 'zod';
import { scanDrift } from '../../../activities/govern/drift';
import { commitIdSchema } from '../../../activities/datasets/read';
import { DRIFT_DEFAULTS } from '../../../core/govern/drift';
import type { AppDeps } from '../../deps';
import { actorOf } from '../../http/actor';
import { RouteGroup } from '../../http/route-group';

/** The drift scan's request (the spec does not show its body; docs/drift.md). */
export const DriftScanIn = z.strictObject({
  baseline_commit_id: commitIdSchema.optional().meta({
    description:
      'the training data to compare with; absent, the dataset commit the detection champion was trained on',
  }),
  session_ids: z.array(z.uuid()).min(1).max(200).optional().meta({
    description:
      'the sessions to compare; absent, every session ready within window_days outside the baseline',
  }),
  window_days: z.int().min(1).max(365).default(DRIFT_DEFAULTS.windowDays),
  alpha: z
    .number()
    .gt(0)
    .max(0.2)
    .default(DRIFT_DEFAULTS.alpha)
    .meta({ description: 'family-wise significance level (Bonferroni over the tests run)' }),
  min_samples: z
    .int()
    .min(5)
    .max(10_000)
    .default(DRIFT_DEFAULTS.minSamples)
    .meta({ description: 'observations a side needs for a feature to be tested' }),
});

/** The drift scan of the `govern` group (docs/drift.md). */
export function createGovernDriftRoutes(deps: AppDeps): RouteGroup {
  return new RouteGroup('govern').post(
    '/api/govern/drift/scan',
    {
      summary:
        "Compares recent sessions with the champion's training data (its dataset commit's sessions) feature by feature — object classes, lighting and weather by the chi-square test of homogeneity, confidences, brightness and sharpness by the two-sample Kolmogorov–Smirnov test — against alpha over the number of tests; records the scan as a governance run with one finding per feature and notifies reviewers when a feature drifted",
      access: 'reviewer',
      body: { name: 'DriftScanIn', schema: DriftScanIn },
      statuses: {
        404: 'no such dataset commit or session',
        422: 'no baseline (a champion trained elsewhere, or every session erased) or no recent session to compare',
      },
    },
    async ({ body, principal, req }) =>
      scanDrift(deps.db, {
        ...(body.baseline_commit_id ? { baselineCommitId: body.baseline_commit_id } : {}),
        ...(body.session_ids ? { sessionIds: body.session_ids } : {}),
        windowDays: body.window_days,
        alpha: body.alpha,
        minSamples: body.min_samples,
        requestedBy: actorOf(principal, req).userId,
      }),
  );
}
