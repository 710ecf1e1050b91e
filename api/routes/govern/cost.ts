import { z } from 'zod';
import { costGate } from '../../../core/govern/cost';
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
  const { cost } = deps.config;
  return new RouteGroup('govern').post(
    '/api/govern/cost/gate',
    {
      summary:
        'Prices a job (GPU hours × hourly price) and answers allow or refuse against the per-job cap and the window cap (spend so far plus the job), with every number and one sentence per cap that refuses; caps left null are the configured APP_COST__PER_JOB_CAP_USD and APP_COST__WINDOW_CAP_USD',
      access: 'reviewer',
      body: { name: 'CostGateIn', schema: CostGateIn },
    },
    async ({ body }) => {
      const perJob = body.per_job_cap_usd ?? cost.perJobCapUsd ?? null;
      const window = body.window_cap_usd ?? cost.windowCapUsd ?? null;
      const from = (given: number | null | undefined, configured: number | undefined) =>
        given != null ? 'request' : configured !== undefined ? 'config' : 'none';
      return {
        ...costGate({ ...body, per_job_cap_usd: perJob, window_cap_usd: window }),
        caps_from: {
          per_job: from(body.per_job_cap_usd, cost.perJobCapUsd),
          window: from(body.window_cap_usd, cost.windowCapUsd),
        },
      };
    },
  );
}
