import { z } from 'zod';
import { campaignOut } from '../../../activities/campaigns';
import { recordAudit } from '../../../activities/audit';
import { assertWorkMayStart } from '../../../activities/govern/start-guard';
import { CAMPAIGN_METRICS, CAMPAIGN_STAGES } from '../../../core/campaigns/plan';
import { ConflictError, NotFoundError, RefusedError } from '../../../core/errors';
import { idCursorArgs, idPage } from '../../../core/pagination';
import type { Campaign } from '../../../generated/prisma/client';
import {
  approveCampaignSignal,
  campaignWorkflow,
  campaignWorkflowId,
  stopCampaignSignal,
  tickCampaignSignal,
} from '../../../workflows/campaign';
import type { AppDeps } from '../../deps';
import { actorOf } from '../../http/actor';
import { RouteGroup, uuidParams } from '../../http/route-group';
import { limitParam } from '../../http/session-reads';
import { startWorkflowFor } from '../../http/start-workflow';

/** The spec's CampaignIn, with its defaults; the limits are the project's (docs/campaigns.md). */
export const CampaignIn = z.strictObject({
  name: z.string().min(1).max(120),
  class_name: z.string().min(1).max(64).meta({ description: 'the ontology class the campaign improves' }),
  autopilot_stages: z
    .array(z.enum(CAMPAIGN_STAGES))
    .max(CAMPAIGN_STAGES.length)
    .default([])
    .meta({ description: 'stages that run without approval (only select and train ever wait for it)' }),
  label_budget: z
    .int()
    .min(1)
    .max(1_000_000)
    .default(2000)
    .meta({ description: 'frames sent to review, at most' }),
  max_iterations: z.int().min(1).max(100).default(6),
  notes: z.string().max(2000).nullable().default(null),
  patience: z.int().min(1).max(100).default(2),
  require_approval: z.boolean().default(true),
  target_metric: z.enum(CAMPAIGN_METRICS).default('recall'),
  target_value: z.number().min(0).max(1).default(0.6),
  task_type: z.string().default('detection').meta({
    description: 'detection only: the trainer trains 2D detection; anything else is refused by name',
  }),
});

const CampaignApproveIn = z.strictObject({
  autopilot_stages: z
    .array(z.enum(CAMPAIGN_STAGES))
    .max(CAMPAIGN_STAGES.length)
    .optional()
    .meta({ description: 'stages that run without approval from now on (added to the campaign’s own)' }),
});

const CampaignsQuery = z.strictObject({
  status: z.enum(['running', 'completed', 'stopped', 'failed']).optional(),
  limit: limitParam(50, 200),
  cursor: z.uuid().optional().meta({ description: 'next_cursor of the previous page' }),
});

/**
 * The `campaigns` group's campaign routes (docs/campaigns.md): start a campaign (its workflow
 * `campaign-<id>`), read them, and the signals a person sends it. Its lineage routes are
 * ./lineage.ts.
 */
export function createCampaignRoutes(deps: AppDeps): RouteGroup {
  const { db, config } = deps;
  const find = async (id: string): Promise<Campaign> => {
    const c = await db.campaign.findUnique({ where: { id } });
    if (!c) throw new NotFoundError(`no campaign ${id}`);
    return c;
  };
  const handle = (c: Campaign) => deps.temporal.client.workflow.getHandle(campaignWorkflowId(c.id));
  const running = (c: Campaign) => {
    if (c.status !== 'running') throw new ConflictError(`campaign ${c.id} is ${c.status}`);
  };

  return new RouteGroup('campaigns')
    .post(
      '/api/campaigns',
      {
        summary:
          'Start an active-learning campaign for a class (CampaignIn; 202, Location: the campaign): workflow campaign-<id> selects a batch, waits for its review, exports, trains a challenger, measures the target metric on gold and stops at the target, after max_iterations or when patience runs out',
        access: 'reviewer',
        body: { name: 'CampaignIn', schema: CampaignIn },
        successStatus: 202,
        statuses: {
          409: 'the kill switch is engaged',
          422: 'an unknown class or task type, or no sealed gold set holds the class',
          503: 'the workflow service does not answer',
        },
      },
      async ({ body, res, principal, req }) => {
        const actor = actorOf(principal, req);
        await assertWorkMayStart(db, 'campaign');
        if (body.task_type !== 'detection')
          throw new RefusedError(
            `task_type ${body.task_type} is refused: campaigns train 2D detection (the trainer's task)`,
          );
        const cls = await db.ontologyClass.findFirst({ where: { name: body.class_name, retiredAt: null } });
        if (!cls) throw new RefusedError(`${body.class_name} is not an ontology class`);
        // The newest sealed gold set holding the class: the one yardstick every iteration is measured on.
        const gold = await db.goldSet.findFirst({
          where: { sealedAt: { not: null }, items: { some: { classId: cls.id } } },
          orderBy: [{ sealedAt: 'desc' }, { id: 'desc' }],
        });
        if (!gold)
          throw new RefusedError(
            `no sealed gold set holds ${body.class_name}: seal one (POST /api/quality/gold/seal) to measure the campaign on`,
          );
        const campaign = await db.campaign.create({
          data: {
            name: body.name,
            className: cls.name,
            classId: cls.id,
            taskType: body.task_type,
            targetMetric: body.target_metric,
            targetValue: body.target_value,
            labelBudget: body.label_budget,
            maxIterations: body.max_iterations,
            patience: body.patience,
            requireApproval: body.require_approval,
            autopilotStages: [...new Set(body.autopilot_stages)],
            notes: body.notes,
            goldId: gold.id,
            createdBy: actor.userId,
          },
        });
        const workflowId = campaignWorkflowId(campaign.id);
        const started = await startWorkflowFor(deps, res, {
          workflow: campaignWorkflow,
          workflowId,
          args: [
            {
              campaignId: campaign.id,
              iteration: 1,
              gpuTaskQueue: config.temporal.gpuTaskQueue,
              inferenceHeartbeatSeconds: config.autolabel.heartbeatTimeoutSeconds,
              trainingHeartbeatSeconds: config.training.heartbeatTimeoutSeconds,
              exportHeartbeatSeconds: config.export.heartbeatTimeoutSeconds,
              reviewPollSeconds: config.campaigns.reviewPollSeconds,
              reminderHours: config.campaigns.reminderHours,
            },
          ],
          location: `/api/campaigns/${campaign.id}`,
          what: `campaign ${campaign.id}`,
          forget: () => db.campaign.delete({ where: { id: campaign.id } }),
        });
        const saved = await db.campaign.update({ where: { id: campaign.id }, data: { workflowId } });
        await recordAudit(db, {
          actorId: actor.userId,
          action: 'campaign.started',
          subjectType: 'campaign',
          subjectId: campaign.id,
          detail: { ...body, gold_id: gold.id },
          requestId: actor.requestId,
        });
        await deps.events.publish('jobs', 'campaign.started', campaignOut(saved));
        const { run_id: workflowRunId, ...workflow } = started;
        return {
          ...campaignOut(saved),
          ...workflow,
          workflow_run_id: workflowRunId,
          events_url: '/api/events/jobs',
        };
      },
    )
    .get(
      '/api/campaigns',
      {
        summary:
          'Campaigns, newest first, by id cursor (pass next_cursor back as cursor), filtered by status',
        access: 'annotator',
        query: CampaignsQuery,
      },
      async ({ query }) => {
        const rows = await db.campaign.findMany({
          where: query.status ? { status: query.status } : {},
          orderBy: { id: 'desc' },
          ...idCursorArgs(query),
        });
        const { page, next_cursor } = idPage(rows, query.limit);
        return { items: page.map(campaignOut), limit: query.limit, next_cursor };
      },
    )
    .get(
      '/api/campaigns/{campaign_id}',
      {
        summary:
          'A campaign: its settings, status and stage (what it waits for), iteration, labels used, best value, and what each finished iteration did (batch, commit, training job, model, measured value)',
        access: 'annotator',
        params: uuidParams('campaign_id'),
        statuses: { 404: 'no such campaign' },
      },
      async ({ params }) => campaignOut(await find(params.campaign_id)),
    )
    .post(
      '/api/campaigns/{campaign_id}/approve',
      {
        summary:
          'Approve the stage the campaign waits at (a signal); autopilot_stages, when given, run without approval from now on',
        access: 'reviewer',
        params: uuidParams('campaign_id'),
        body: { name: 'CampaignApproveIn', schema: CampaignApproveIn },
        statuses: { 404: 'no such campaign', 409: 'the campaign has ended, or waits for no approval' },
      },
      async ({ params, body, principal, req }) => {
        const c = await find(params.campaign_id);
        running(c);
        if (c.stage !== 'approval')
          throw new ConflictError(`campaign ${c.id} waits for no approval (stage ${c.stage})`);
        const autopilot = [...new Set([...c.autopilotStages, ...(body.autopilot_stages ?? [])])];
        const saved = await db.campaign.update({ where: { id: c.id }, data: { autopilotStages: autopilot } });
        await handle(c).signal(approveCampaignSignal);
        await recordAudit(db, {
          actorId: principal.userId,
          action: 'campaign.approved',
          subjectType: 'campaign',
          subjectId: c.id,
          detail: { iteration: c.iteration, autopilot_stages: autopilot },
          requestId: String(req.id),
        });
        return campaignOut(saved);
      },
    )
    .post(
      '/api/campaigns/{campaign_id}/stop',
      {
        summary:
          'Stop the campaign at its next safe point (a signal): a wait for review or approval ends at once; a running export, training or evaluation finishes first',
        access: 'reviewer',
        params: uuidParams('campaign_id'),
        successStatus: 202,
        statuses: { 404: 'no such campaign', 409: 'the campaign has ended' },
      },
      async ({ params, res, principal, req }) => {
        const c = await find(params.campaign_id);
        running(c);
        await handle(c).signal(stopCampaignSignal);
        await recordAudit(db, {
          actorId: principal.userId,
          action: 'campaign.stop_requested',
          subjectType: 'campaign',
          subjectId: c.id,
          detail: { iteration: c.iteration, stage: c.stage },
          requestId: String(req.id),
        });
        res.status(202).location(`/api/campaigns/${c.id}`);
        return { ...campaignOut(c), stop_requested: true, status_url: `/api/campaigns/${c.id}` };
      },
    )
    .post(
      '/api/campaigns/{campaign_id}/tick',
      {
        summary:
          'Advance a waiting stage now (a signal): a campaign waiting on review checks its batch at once instead of at its next poll',
        access: 'reviewer',
        params: uuidParams('campaign_id'),
        successStatus: 202,
        statuses: { 404: 'no such campaign', 409: 'the campaign has ended' },
      },
      async ({ params, res }) => {
        const c = await find(params.campaign_id);
        running(c);
        await handle(c).signal(tickCampaignSignal);
        res.status(202).location(`/api/campaigns/${c.id}`);
        return { ...campaignOut(c), ticked: true, status_url: `/api/campaigns/${c.id}` };
      },
    );
}
