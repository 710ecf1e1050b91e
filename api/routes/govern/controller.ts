import { z } from 'zod';
import { recordAudit } from '../../../activities/audit';
import { scanDrift } from '../../../activities/govern/drift';
import { dueSessions } from '../../../activities/govern/retention';
import { spentInWindow } from '../../../activities/govern/spend';
import { RefusedError } from '../../../core/errors';
import { roundUsd } from '../../../core/govern/cost';
import { DRIFT_DEFAULTS } from '../../../core/govern/drift';
import type { Prisma } from '../../../generated/prisma/client';
import type { AppDeps } from '../../deps';
import { actorOf } from '../../http/actor';
import { RouteGroup } from '../../http/route-group';
import { startRetentionSweep } from './retention';

/** The tick's request (the spec does not show its body; docs/governance-controller.md). */
export const ControllerTickIn = z.strictObject({
  dry_run: z.boolean().default(true).meta({
    description: 'true (the default): the retention sweep it starts erases nothing and records what it would',
  }),
});

/** The governance controller's tick of the `govern` group (docs/governance-controller.md). */
export function createGovernControllerRoutes(deps: AppDeps): RouteGroup {
  const { db, config } = deps;
  return new RouteGroup('govern').post(
    '/api/govern/controller/tick',
    {
      summary:
        "Runs the governance controller once: retention (a retention sweep started when sessions are past their retention_until; a dry run unless dry_run is false), cost (the window's effective spend against the window cap) and drift (a drift scan of the sessions of the last 7 days against the champion's training data, or why none could run); recorded as a governance run, audited",
      access: 'admin',
      body: { name: 'ControllerTickIn', schema: ControllerTickIn },
      statuses: { 503: 'the workflow service does not answer (the retention sweep could not start)' },
    },
    async ({ body, principal, req }) => {
      const actor = actorOf(principal, req);
      const now = new Date();
      const run = await db.governanceRun.create({
        data: { kind: 'controller-tick', dryRun: body.dry_run, requestedBy: actor.userId, params: body },
      });
      try {
        const due = await dueSessions(db, now, config.retention.sweepLimit);
        const retention = {
          due: due.total,
          sweep:
            due.total > 0
              ? await startRetentionSweep(deps, { dryRun: body.dry_run, actor, trigger: 'controller' })
              : null,
        };
        const window = await spentInWindow(deps, now);
        const cap = config.cost.windowCapUsd ?? null;
        const cost = {
          window_days: config.cost.windowDays,
          from: window.from.toISOString(),
          spent_usd: window.usd,
          by_kind: window.by_kind,
          window_cap_usd: cap,
          headroom_usd: cap === null ? null : roundUsd(cap - window.usd),
          over: cap !== null && window.usd > cap,
        };
        let drift:
          { scanned: true; run_id: string; drifted_features: string[] } | { scanned: false; reason: string };
        try {
          const scan = await scanDrift(db, { ...DRIFT_DEFAULTS, requestedBy: actor.userId }, now);
          drift = { scanned: true, run_id: scan.run_id, drifted_features: scan.drifted_features };
        } catch (err) {
          if (!(err instanceof RefusedError)) throw err;
          drift = { scanned: false, reason: err.message };
        }
        const result = { retention, cost, drift };
        const done = await db.governanceRun.update({
          where: { id: run.id },
          data: {
            status: 'completed',
            result: result as unknown as Prisma.InputJsonValue,
            finishedAt: new Date(),
          },
        });
        await recordAudit(db, {
          actorId: actor.userId,
          action: 'govern.controller_tick',
          subjectType: 'governance_run',
          subjectId: run.id,
          detail: {
            due: retention.due,
            sweep_id: retention.sweep?.sweep_id ?? null,
            cost_over: cost.over,
            drift: drift.scanned ? drift.drifted_features : drift.reason,
          },
          requestId: actor.requestId,
        });
        return {
          tick_id: run.id,
          dry_run: body.dry_run,
          ...result,
          created_at: done.createdAt.toISOString(),
        };
      } catch (err) {
        await db.governanceRun.update({
          where: { id: run.id },
          data: { status: 'failed', error: (err as Error).message, finishedAt: new Date() },
        });
        throw err;
      }
    },
  );
}
