import { z } from 'zod';
import { recordAudit } from '../../../activities/audit';
import { retentionPlan, sweepOut } from '../../../activities/govern/retention';
import { retentionSweepWorkflow } from '../../../workflows/retention-sweep';
import type { AppDeps } from '../../deps';
import { actorOf } from '../../http/actor';
import { RouteGroup } from '../../http/route-group';
import { limitParam } from '../../http/session-reads';
import { beginWorkflow } from '../../http/start-workflow';
import type { Actor } from '../../../activities/annotations/objects';

const DueQuery = z.strictObject({
  limit: limitParam(100, 1000).meta({ description: 'due sessions listed, oldest retention first' }),
});

/** The manual sweep (the spec does not show its body; docs/erasure.md): a dry run unless asked otherwise. */
export const RetentionSweepIn = z.strictObject({
  dry_run: z.boolean().default(true).meta({
    description: 'true (the default): record what a sweep would erase now and erase nothing',
  }),
});

/** Sweeps shown beside the due sessions. */
const RECENT_SWEEPS = 10;

/** Retention in the `govern` group (docs/erasure.md). */
export function createGovernRetentionRoutes(deps: AppDeps): RouteGroup {
  const { db, config } = deps;
  const recentSweeps = async () =>
    (
      await db.governanceRun.findMany({
        where: { kind: 'retention-sweep' },
        orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
        take: RECENT_SWEEPS,
      })
    ).map(sweepOut);
  return new RouteGroup('govern')
    .get(
      '/api/govern/retention/due',
      {
        summary:
          'Sessions past their retention_until, oldest first, each with what erasing it would delete and what blocks it; the plan the next sweep would follow, the schedule, and the latest sweeps',
        access: 'admin',
        query: DueQuery,
      },
      async ({ query }) => ({
        ...(await retentionPlan(db, new Date(), Math.min(query.limit, config.retention.sweepLimit))),
        schedule: {
          enabled: config.retention.enabled,
          spec: config.retention.schedule,
          limit: config.retention.sweepLimit,
        },
        recent_sweeps: await recentSweeps(),
      }),
    )
    .post(
      '/api/govern/retention/sweep',
      {
        summary:
          'Runs the retention sweep now as workflow retention-sweep-<sweep_id>: a dry run (dry_run, the default) records what it would erase and erases nothing; otherwise each due session is erased as erase-session-<session_id>. 202, Location: the due list, which shows the sweep and its result',
        access: 'admin',
        body: { name: 'RetentionSweepIn', schema: RetentionSweepIn },
        successStatus: 202,
        statuses: { 503: 'the workflow service does not answer' },
      },
      async ({ body, principal, req, res }) => {
        const sweep = await startRetentionSweep(deps, {
          dryRun: body.dry_run,
          actor: actorOf(principal, req),
          trigger: 'request',
        });
        res.status(202).location('/api/govern/retention/due');
        return sweep;
      },
    );
}

/**
 * Starts a retention sweep (workflow retention-sweep-<sweep_id>) for a request or a controller tick;
 * a start that fails removes its record, so a refused start leaves no trace.
 */
export async function startRetentionSweep(
  deps: AppDeps,
  opts: { dryRun: boolean; actor: Actor; trigger: 'request' | 'controller' },
) {
  const { db, config } = deps;
  const limit = config.retention.sweepLimit;
  const run = await db.governanceRun.create({
    data: {
      kind: 'retention-sweep',
      dryRun: opts.dryRun,
      requestedBy: opts.actor.userId,
      params: { trigger: opts.trigger, limit },
    },
  });
  const workflowId = `retention-sweep-${run.id}`;
  let started: Awaited<ReturnType<typeof beginWorkflow>>;
  try {
    started = await beginWorkflow(deps, {
      workflow: retentionSweepWorkflow,
      workflowId,
      args: [{ runId: run.id, actorId: opts.actor.userId, dryRun: opts.dryRun }],
      what: 'a retention sweep',
    });
  } catch (err) {
    await db.governanceRun.delete({ where: { id: run.id } });
    throw err;
  }
  const recorded = await db.governanceRun.update({ where: { id: run.id }, data: { workflowId } });
  await recordAudit(db, {
    actorId: opts.actor.userId,
    action: 'retention.sweep_requested',
    subjectType: 'governance_run',
    subjectId: run.id,
    detail: { limit, dry_run: opts.dryRun, trigger: opts.trigger },
    requestId: opts.actor.requestId,
  });
  return { ...sweepOut(recorded), workflow_run_id: started.run_id, status_url: '/api/govern/retention/due' };
}
