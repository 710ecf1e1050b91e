import { z } from 'zod';
import { resolveCostGate } from '../../../activities/govern/spend';
import type { AppDeps } from '../../deps';
import { RouteGroup } from '../../http/route-group';

const usd = z.number().min(0).max(1e9);

/** The spec's CostGateIn; a cap left null (or absent) is the configured one, none when unset. */
export const CostGateIn = z.strictObject({
  gpu_hours: z.number().min(0).max(1e6),
  hourly_usd: usd,
  per_job_cap_usd: usd.nullable().optional(),
  window_cap_usd: usd.nullable().optional(),
  spent_usd: usd.default(0).meta({ description: 'spend so far in the window the window cap covers' }),
});

/** The cost gate of the `govern` group (docs/billing.md). */
export function createGovernCostRoutes(deps: AppDeps): RouteGroup {
  return new RouteGroup('govern').post(
    '/api/govern/cost/gate',
    {
      summary:
        'Prices a job (GPU hours × hourly price) and answers allow or refuse against the per-job cap and the window cap (spend so far plus the job), with every number and one sentence per cap that refuses; caps left null are the configured APP_COST__PER_JOB_CAP_USD and APP_COST__WINDOW_CAP_USD; the starts of training, cloud sessions and corpus runs ask the same gate with the spend recorded in the window (GET /api/billing/usage)',
      access: 'reviewer',
      body: { name: 'CostGateIn', schema: CostGateIn },
    },
    async ({ body }) => resolveCostGate(deps, body),
  );
}
