import type { Response } from 'express';
import { z } from 'zod';
import type { RedetectCorpusParams } from '../../activities/agent-runs/redetect-corpus';
import { lastLedgerFrame, runInterruption, sessionsRecorded } from '../../activities/agent-runs/list';
import { beginRevert, revertWorkflowId } from '../../activities/agent-runs/revert';
import { agentRunOut, queueAgentRun } from '../../activities/agent-runs/runs';
import type { Actor } from '../../activities/annotations/objects';
import { recordAudit } from '../../activities/audit';
import { DRIVABLE_BACKFILL_KIND } from '../../activities/drivable/backfill';
import { forgetSpend, gateCorpusRun } from '../../activities/govern/spend';
import { assertWorkMayStart } from '../../activities/govern/start-guard';
import { PII_BACKFILL_KIND, PII_RECHECK_KIND } from '../../activities/pii-recheck/recheck';
import { TRACK_RELABEL_KIND } from '../../activities/tracks/relabel';
import type { PiiRunParams } from '../../activities/pii-recheck/runs';
import {
  RELABEL_IMPORT_KIND,
  RELABEL_KIND,
  type RelabelImportParams,
  type RelabelRunParams,
} from '../../activities/relabel';
import { ConflictError, NotAllowedError, NotFoundError, RefusedError } from '../../core/errors';
import { emptyPiiTally } from '../../core/pii-recheck/tally';
import { emptyRelabelTally } from '../../core/relabel/decide';
import type { AgentRun, Prisma } from '../../generated/prisma/client';
import { drivableBackfillWorkflow } from '../../workflows/drivable-backfill';
import { piiRunWorkflow } from '../../workflows/pii-recheck';
import { REDETECT_CORPUS_WORKFLOW_ID, redetectCorpusWorkflow } from '../../workflows/redetect-corpus';
import {
  RELABEL_CORPUS_WORKFLOW_ID,
  relabelCorpusWorkflow,
  relabelImportWorkflow,
  relabelImportWorkflowId,
} from '../../workflows/relabel';
import { revertAgentRunWorkflow } from '../../workflows/revert-agent-run';
import { roleAtLeast, type Principal } from '../auth/principal';
import type { AppDeps } from '../deps';
import { startWorkflow, startWorkflowFor } from './start-workflow';

/**
 * Starting, reverting and resuming AgentRuns (docs/agent-runs.md, docs/relabel.md), shared by the
 * `agent` and `relabel` groups.
 */

type Started = Awaited<ReturnType<typeof startWorkflow>>;

/** A run's start, audited and announced (`agent.run.started`), as every start route answers it. */
export async function announceRunStarted(
  deps: AppDeps,
  run: AgentRun,
  started: Started,
  actor: Actor,
  detail: Record<string, unknown>,
) {
  await recordAudit(deps.db, {
    actorId: actor.userId,
    action: 'agent_run.started',
    subjectType: 'agent_run',
    subjectId: run.id,
    detail: { kind: run.kind, ...detail } as Prisma.InputJsonValue,
    requestId: actor.requestId,
  });
  await deps.events.publish('jobs', 'agent.run.started', agentRunOut(run));
  // `run_id` is the AgentRun's; the workflow's own run id is `workflow_run_id`.
  const { run_id: workflowRunId, ...workflow } = started;
  return { ...agentRunOut(run), ...workflow, workflow_run_id: workflowRunId, events_url: '/api/events/jobs' };
}

/**
 * Starts the undo of a finished run (202, Location: the run); `kinds` narrows which runs this
 * route reverts (another kind is a 404 there). The run is `reverting` before the workflow starts
 * and goes back to what it was when the start fails.
 */
/**
 * Who may undo a run: an admin any run; anyone else only a track relabel they made themselves (a
 * reviewer undoes their own relabel, docs/track-relabel.md). 404 for an unknown run comes first,
 * so the answer does not tell a caller which runs exist beyond their reach.
 */
export async function assertMayRevert(db: AppDeps['db'], runId: string, principal: Principal): Promise<void> {
  if (roleAtLeast(principal.role, 'admin')) return;
  const run = await db.agentRun.findUnique({ where: { id: runId }, select: { kind: true, createdBy: true } });
  if (!run) throw new NotFoundError(`no agent run ${runId}`);
  if (run.kind !== TRACK_RELABEL_KIND || run.createdBy !== principal.userId)
    throw new NotAllowedError(
      `only an admin reverts this run; a ${principal.role} may revert only a ${TRACK_RELABEL_KIND} run they made`,
    );
}

export async function startRunRevert(
  deps: AppDeps,
  res: Response,
  runId: string,
  actor: Actor,
  kinds?: readonly string[],
) {
  const { db } = deps;
  if (kinds) {
    const found = await db.agentRun.findUnique({ where: { id: runId }, select: { kind: true } });
    if (!found || !kinds.includes(found.kind))
      throw new NotFoundError(`no ${kinds.join(' or ')} run ${runId}`);
  }
  const { run, previousStatus } = await beginRevert(db, runId);
  try {
    const started = await startRevertWorkflow(deps, res, run.id, actor.userId);
    await recordAudit(db, {
      actorId: actor.userId,
      action: 'agent_run.revert.started',
      subjectType: 'agent_run',
      subjectId: run.id,
      detail: { kind: run.kind },
      requestId: actor.requestId,
    });
    const { run_id: workflowRunId, ...workflow } = started;
    return {
      run_id: run.id,
      status: 'reverting',
      ...workflow,
      workflow_run_id: workflowRunId,
      events_url: '/api/events/jobs',
    };
  } catch (err) {
    await db.agentRun.update({ where: { id: run.id }, data: { status: previousStatus } });
    throw err;
  }
}

const startRevertWorkflow = (deps: AppDeps, res: Response, runId: string, actorId: string | null) =>
  startWorkflow(deps, res, {
    workflow: revertAgentRunWorkflow,
    workflowId: revertWorkflowId(runId),
    args: [{ runId, actorId }],
    location: `/api/agent/runs/${runId}`,
    what: `a revert of agent run ${runId}`,
  });

/** The body of a corpus relabel (the spec shows none; docs/relabel.md). */
export const RelabelStartIn = z.strictObject({
  session_ids: z
    .array(z.uuid())
    .min(1)
    .max(500)
    .optional()
    .meta({ description: 'the sessions to relabel; absent, the whole corpus' }),
  classes: z
    .array(z.string().min(1).max(64))
    .min(1)
    .max(100)
    .optional()
    .meta({ description: 'only objects of these ontology classes are reclassified; absent, every class' }),
  min_score: z.number().min(0).max(1).optional().meta({ description: 'default APP_RELABEL__MIN_SCORE' }),
  min_margin: z.number().min(0).max(1).optional().meta({ description: 'default APP_RELABEL__MIN_MARGIN' }),
  limit: z
    .int()
    .min(1)
    .max(1_000_000)
    .optional()
    .meta({ description: 'frames at most; absent, every frame with a machine-made object' }),
});

/** Names that are not ontology classes (retired ones included: nothing moves to them). */
async function unknownClasses(deps: AppDeps, names: readonly string[]): Promise<string[]> {
  const found = await deps.db.ontologyClass.findMany({
    where: { name: { in: [...names] }, retiredAt: null },
    select: { name: true },
  });
  const known = new Set(found.map((c) => c.name));
  return [...new Set(names)].filter((n) => !known.has(n));
}

/**
 * Starts a corpus relabel (one at a time, workflow relabel-corpus): the closed-set detector
 * reclassifies the machine-made boxes of the listed sessions or of the corpus on the GPU slot,
 * priced and gated like any corpus run; one revertible AgentRun of kind relabel.
 */
export async function startRelabelCorpus(
  deps: AppDeps,
  res: Response,
  body: z.infer<typeof RelabelStartIn>,
  actor: Actor,
) {
  const { db, config } = deps;
  await assertWorkMayStart(db, 'corpus_run');
  const unknown = await unknownClasses(deps, body.classes ?? []);
  if (unknown.length) throw new RefusedError(`not ontology classes: ${unknown.join(', ')}`);
  const params: RelabelRunParams = {
    session_ids: body.session_ids ? [...new Set(body.session_ids)] : null,
    classes: body.classes ? [...new Set(body.classes)] : null,
    min_score: body.min_score ?? config.relabel.minScore,
    min_margin: body.min_margin ?? config.relabel.minMargin,
    limit: body.limit ?? null,
  };
  const run = await queueAgentRun(db, RELABEL_KIND, params, actor.userId, RELABEL_CORPUS_WORKFLOW_ID);
  const started = await startWorkflowFor(deps, res, {
    check: () => gateCorpusRun(deps, run, params.session_ids),
    workflow: relabelCorpusWorkflow,
    workflowId: RELABEL_CORPUS_WORKFLOW_ID,
    args: [relabelCorpusInput(deps, run.id, params, null)],
    location: `/api/agent/runs/${run.id}`,
    what: 'a corpus relabel',
    forget: async () => {
      await forgetSpend(db, run.id);
      await db.agentRun.delete({ where: { id: run.id } });
    },
  });
  return announceRunStarted(deps, run, started, actor, { params: { ...params } });
}

const relabelCorpusInput = (
  deps: AppDeps,
  runId: string,
  params: RelabelRunParams,
  after: string | null,
) => ({
  runId,
  gpuTaskQueue: deps.config.temporal.gpuTaskQueue,
  heartbeatTimeoutSeconds: deps.config.autolabel.heartbeatTimeoutSeconds,
  pageFrames: deps.config.relabel.pageFrames,
  limit: params.limit,
  after,
  tally: emptyRelabelTally(),
});

/** The body of POST /api/relabel/ingest (the spec shows none; docs/relabel.md). */
export const RelabelIngestIn = z.strictObject({
  source: z.string().min(1).max(64).meta({
    description: 'where the relabel comes from (a tool, a vendor), kept on the run and each object',
  }),
  changes: z
    .array(
      z.strictObject({
        object_id: z.uuid(),
        class_name: z.string().min(1).max(64),
        conf: z.number().min(0).max(1).nullable().optional(),
      }),
    )
    .min(1)
    .max(10_000),
});

/**
 * Accepts an external relabel as a run (kind relabel-import, workflow relabel-import-<run_id> on
 * the `cpu` queue): every object and class must exist, each object named once; objects a person
 * made or that are rejected are skipped by the run with the reason, as a corpus relabel skips them.
 */
export async function startRelabelImport(
  deps: AppDeps,
  res: Response,
  body: z.infer<typeof RelabelIngestIn>,
  actor: Actor,
) {
  const { db } = deps;
  await assertWorkMayStart(db, 'corpus_run');
  const ids = body.changes.map((c) => c.object_id);
  const repeated = ids.filter((id, i) => ids.indexOf(id) !== i);
  if (repeated.length)
    throw new RefusedError(`objects named more than once: ${[...new Set(repeated)].join(', ')}`);
  const unknown = await unknownClasses(
    deps,
    body.changes.map((c) => c.class_name),
  );
  if (unknown.length) throw new RefusedError(`not ontology classes: ${unknown.join(', ')}`);
  const found = new Set(
    (await db.annoObject.findMany({ where: { id: { in: ids } }, select: { id: true } })).map((o) => o.id),
  );
  const missing = ids.filter((id) => !found.has(id));
  if (missing.length)
    throw new RefusedError(`no such objects (${missing.length}): ${missing.slice(0, 20).join(', ')}`);
  const params: RelabelImportParams = {
    session_ids: null,
    source: body.source,
    changes: body.changes.map((c) => ({
      object_id: c.object_id,
      class_name: c.class_name,
      conf: c.conf ?? null,
    })),
  };
  const run = await queueAgentRun(db, RELABEL_IMPORT_KIND, params, actor.userId, null);
  const workflowId = relabelImportWorkflowId(run.id);
  await db.agentRun.update({ where: { id: run.id }, data: { workflowId } });
  const started = await startWorkflowFor(deps, res, {
    workflow: relabelImportWorkflow,
    workflowId,
    args: [{ runId: run.id }],
    location: `/api/agent/runs/${run.id}`,
    what: 'an imported relabel',
    forget: () => db.agentRun.delete({ where: { id: run.id } }),
  });
  return announceRunStarted(deps, { ...run, workflowId }, started, actor, {
    source: body.source,
    changes: body.changes.length,
  });
}

/**
 * Restarts an interrupted run's workflow from where its ledger says it stopped (docs/agent-runs.md
 * "Interrupted runs"): every kind walks in id order and skips what it already wrote, so the
 * resumed walk changes nothing twice. A run interrupted while reverting resumes its revert.
 */
export async function resumeAgentRun(deps: AppDeps, res: Response, runId: string, actor: Actor) {
  const { db } = deps;
  const run = await db.agentRun.findUnique({ where: { id: runId } });
  if (!run) throw new NotFoundError(`no agent run ${runId}`);
  const interruption = await runInterruption(db, deps.temporal.client.workflow, run);
  if (!interruption)
    throw new ConflictError(
      `agent run ${runId} is ${run.status}${run.status === 'running' || run.status === 'reverting' ? ' and its workflow is running' : ''}: only an interrupted run is resumed`,
    );
  const resume = run.status === 'reverting' ? undefined : RESUMERS[run.kind];
  if (run.status !== 'reverting' && (!resume || !run.workflowId))
    throw new ConflictError(
      `a ${run.kind} run ${run.workflowId ? 'has no resume' : 'applied inside a request cannot be resumed'}: revert it or start it again`,
    );
  const started =
    run.status === 'reverting'
      ? await startRevertWorkflow(deps, res, run.id, actor.userId)
      : await resume!(deps, res, run);
  await recordAudit(db, {
    actorId: actor.userId,
    action: 'agent_run.resumed',
    subjectType: 'agent_run',
    subjectId: run.id,
    detail: { kind: run.kind, status: run.status, ...interruption },
    requestId: actor.requestId,
  });
  await deps.events.publish('jobs', 'agent.run.resumed', agentRunOut(run));
  const { run_id: workflowRunId, ...workflow } = started;
  return {
    ...agentRunOut(run),
    resumed_from: interruption,
    ...workflow,
    workflow_run_id: workflowRunId,
    events_url: '/api/events/jobs',
  };
}

type Resumer = (deps: AppDeps, res: Response, run: AgentRun) => Promise<Started>;

const location = (run: AgentRun) => `/api/agent/runs/${run.id}`;

/** How each kind of run picks up again, from its own ledger. */
const RESUMERS: Readonly<Record<string, Resumer>> = {
  'redetect-all': async (deps, res, run) => {
    const params = run.params as unknown as RedetectCorpusParams;
    // Sessions skipped when the run was asked are recorded too, but were never on its walk.
    const walked = (await sessionsRecorded(deps.db, run.id)).filter(
      (id) => !params.session_ids || params.session_ids.includes(id),
    );
    return startWorkflow(deps, res, {
      workflow: redetectCorpusWorkflow,
      workflowId: REDETECT_CORPUS_WORKFLOW_ID,
      args: [
        {
          runId: run.id,
          after: walked.sort().at(-1) ?? null,
          pageSize: deps.config.autolabel.corpusPageSize,
          gpuTaskQueue: deps.config.temporal.gpuTaskQueue,
          heartbeatTimeoutSeconds: deps.config.autolabel.heartbeatTimeoutSeconds,
        },
      ],
      location: location(run),
      what: 'a redetect-all run',
    });
  },
  [PII_RECHECK_KIND]: (deps, res, run) => resumePiiRun(deps, res, run, deps.config.temporal.gpuTaskQueue),
  [PII_BACKFILL_KIND]: (deps, res, run) => resumePiiRun(deps, res, run, deps.config.temporal.cpuTaskQueue),
  [RELABEL_KIND]: async (deps, res, run) =>
    startWorkflow(deps, res, {
      workflow: relabelCorpusWorkflow,
      workflowId: run.workflowId!,
      args: [
        relabelCorpusInput(
          deps,
          run.id,
          run.params as unknown as RelabelRunParams,
          await lastLedgerFrame(deps.db, run.id),
        ),
      ],
      location: location(run),
      what: 'a corpus relabel',
    }),
  [RELABEL_IMPORT_KIND]: (deps, res, run) =>
    startWorkflow(deps, res, {
      workflow: relabelImportWorkflow,
      workflowId: run.workflowId!,
      args: [{ runId: run.id }],
      location: location(run),
      what: 'an imported relabel',
    }),
  [DRIVABLE_BACKFILL_KIND]: async (deps, res, run) => {
    const done = new Set(await sessionsRecorded(deps.db, run.id));
    return startWorkflow(deps, res, {
      workflow: drivableBackfillWorkflow,
      workflowId: run.workflowId!,
      args: [
        {
          runId: run.id,
          sessionIds: (run.params as { session_ids: string[] }).session_ids.filter((id) => !done.has(id)),
          gpuTaskQueue: deps.config.temporal.gpuTaskQueue,
          heartbeatTimeoutSeconds: deps.config.autolabel.heartbeatTimeoutSeconds,
        },
      ],
      location: location(run),
      what: 'a drivable-area backfill',
    });
  },
};

/** A PII run walks frames in id order; its re-check of a frame already done adds nothing. */
async function resumePiiRun(deps: AppDeps, res: Response, run: AgentRun, taskQueue: string) {
  const params = run.params as unknown as PiiRunParams;
  return startWorkflow(deps, res, {
    workflow: piiRunWorkflow,
    workflowId: run.workflowId!,
    args: [
      {
        runId: run.id,
        taskQueue,
        heartbeatTimeoutSeconds: deps.config.autolabel.heartbeatTimeoutSeconds,
        pageFrames: deps.config.reanalyze.pageFrames,
        limit: params.limit,
        after: await lastLedgerFrame(deps.db, run.id),
        tally: emptyPiiTally(),
      },
    ],
    location: location(run),
    what: `a ${run.kind} run`,
  });
}
