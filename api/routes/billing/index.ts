import { z } from 'zod';
import { billingInvoice, billingUsage, certifyCommitCost } from '../../../activities/billing';
import { commitIdSchema } from '../../../activities/datasets/read';
import { PERIODS } from '../../../core/billing/spend';
import { InputError } from '../../../core/errors';
import type { AppDeps } from '../../deps';
import { actorOf } from '../../http/actor';
import { RouteGroup } from '../../http/route-group';

const DAY_MS = 86_400_000;

export const UsageQuery = z.strictObject({
  period: z.enum(PERIODS).default('day'),
  from: z.iso
    .datetime({ offset: true })
    .optional()
    .meta({ description: 'inclusive; default: APP_COST__WINDOW_DAYS days before `to`' }),
  to: z.iso.datetime({ offset: true }).optional().meta({ description: 'exclusive; default: now' }),
});

export const InvoiceQuery = z.strictObject({
  month: z
    .string()
    .regex(/^\d{4}-(0[1-9]|1[0-2])$/, 'a month, YYYY-MM')
    .optional()
    .meta({ description: 'YYYY-MM (UTC); default: the current month' }),
});

const CertifyParams = z.object({ commit_id: commitIdSchema });

/** The `billing` group (docs/billing.md): usage, the month's invoice, a commit's cost certificate. */
export function createBillingRoutes(deps: AppDeps): RouteGroup {
  const { db, config } = deps;
  return new RouteGroup('billing')
    .get(
      '/api/billing/usage',
      {
        summary:
          'Spend per day, week (from Monday) or month, in all and per kind (training, cloud, corpus_run), from the spend records: each subject counted once, by its actual once it ended, else by the estimate the cost gate let it start with; every period listed, empty ones too',
        access: 'reviewer',
        query: UsageQuery,
        statuses: { 422: 'from after to, or more periods than one answer lists' },
      },
      async ({ query }) => {
        const to = query.to ? new Date(query.to) : new Date();
        const from = query.from
          ? new Date(query.from)
          : new Date(to.getTime() - config.cost.windowDays * DAY_MS);
        if (from >= to)
          throw new InputError('from must be before to', [{ field: 'query.from', message: 'not before to' }]);
        return billingUsage(db, { period: query.period, from, to });
      },
    )
    .get(
      '/api/billing/invoice',
      {
        summary:
          "A month's invoice: one line per training job or sweep, cloud session and corpus run whose spend counts in the month (GPU hours × price, actual or still an estimate), totals per kind and in all",
        access: 'admin',
        query: InvoiceQuery,
      },
      async ({ query }) => billingInvoice(db, query.month ?? new Date().toISOString().slice(0, 7)),
    )
    .post(
      '/api/billing/certify/{commit_id}',
      {
        summary:
          "Certifies a dataset commit's cost, signed with the dataset-certificate key: compute (the GPU hours of the completed auto-label jobs of its sessions before it was made, at APP_COST__GPU_HOURLY_USD) and labelling (the review time recorded on its objects before then, at APP_COST__LABEL_HOURLY_USD); kept and audited",
        access: 'reviewer',
        params: CertifyParams,
        statuses: { 404: 'no such dataset commit' },
      },
      async ({ params, principal, req }) =>
        certifyCommitCost(deps, params.commit_id, actorOf(principal, req)),
    );
}
