import { z } from 'zod';
import { gpuSlotEfficiency } from '../../../activities/hardening/efficiency';
import { systemResources } from '../../../activities/hardening/resources';
import type { AppDeps } from '../../deps';
import { RouteGroup } from '../../http/route-group';

const DAY_MS = 86_400_000;
/** The longest period one efficiency report reads. */
const MAX_DAYS = 366;

/** The efficiency request (the spec does not show its body; docs/hardening.md). */
export const EfficiencyIn = z
  .strictObject({
    from: z.iso.datetime({ offset: true }).optional().meta({ description: 'default: `days` before `to`' }),
    to: z.iso.datetime({ offset: true }).optional().meta({ description: 'default: now' }),
    days: z.number().gt(0).max(MAX_DAYS).default(7).meta({ description: 'the period when `from` is absent' }),
    min_gap_seconds: z
      .number()
      .min(0)
      .max(DAY_MS / 1000)
      .default(60),
    top_gaps: z.int().min(0).max(100).default(10),
  })
  .transform((b, ctx) => {
    const to = b.to ? new Date(b.to) : new Date();
    const from = b.from ? new Date(b.from) : new Date(to.getTime() - b.days * DAY_MS);
    if (from.getTime() >= to.getTime())
      ctx.addIssue({ code: 'custom', path: ['from'], message: 'from must be before to' });
    if (to.getTime() - from.getTime() > MAX_DAYS * DAY_MS)
      ctx.addIssue({ code: 'custom', path: ['from'], message: `at most ${MAX_DAYS} days` });
    return { from, to, minGapSeconds: b.min_gap_seconds, topGaps: b.top_gaps };
  });

/** The `hardening` group (docs/hardening.md): so far the system's resources and GPU-slot efficiency. */
export function createHardeningRoutes(deps: AppDeps): RouteGroup {
  return new RouteGroup('hardening')
    .post(
      '/api/hardening/efficiency',
      {
        summary:
          'GPU-slot utilisation over a period from the job records (local auto-label and training jobs, inference runs on the slot): busy and idle time, busy time per kind, overlaps, and the longest idle gaps',
        access: 'reviewer',
        body: { name: 'EfficiencyIn', schema: EfficiencyIn },
      },
      async ({ body }) => gpuSlotEfficiency(deps.db, body),
    )
    .get(
      '/api/system/resources',
      {
        summary:
          "The API host's CPU (cores, load) and memory, the disks of the models, temp and ingest folders, who holds the GPU slot, the auto-label, training, export and corpus jobs queued and running, and each Temporal task queue's workers and backlog (or why Temporal gave none)",
        access: 'admin',
      },
      async () => systemResources({ db: deps.db, config: deps.config, connection: deps.temporal.connection }),
    );
}
