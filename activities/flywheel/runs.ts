import { ApplicationFailure } from '@temporalio/common';
import { NotFoundError, RefusedError } from '../../core/errors';
import { onceEventId } from '../../core/events/notify';
import {
  endRunningStage,
  moveStage,
  type FlywheelKind,
  type FlywheelStage,
  type StageRecord,
  type StageState,
} from '../../core/flywheel/stages';
import { idCursorArgs, idPage } from '../../core/pagination';
import type { FlywheelRun, GoldSet, Prisma } from '../../generated/prisma/client';
import { autolabelRefusal, createAutolabelJob } from '../autolabel/jobs';
import { recordAudit } from '../audit';
import { refusedAs } from '../refusal';
import type { Db } from '../db';
import type { ActivityDeps } from '../deps';
import { emitEvent } from '../events/emit';
import { assertWorkMayStart } from '../govern/start-guard';
import type { PromotionRequest } from '../registry/gate';
import {
  exportedCommit,
  queueChallengerTraining,
  queueTrainingExport,
  trainedModel,
  type QueuedChild,
} from '../training/challenger';

/**
 * Flywheel runs (docs/flywheel.md): the row of each run, and the steps its parent workflow
 * (workflows/flywheel.ts) takes between the platform's own workflows, which it runs as children.
 * Every step is written to be retried: what it made is kept on the run (`outputs`) and found again.
 */

/** What a run was asked (FlywheelRunIn / TrainingCycleIn with defaults filled in, and the gold set chosen). */
export interface FlywheelParams {
  gold_id: string;
  relabel: boolean;
  wait_for_review: boolean;
  training_epochs: number;
}

/** What a run made, stage by stage; absent until made. */
export interface FlywheelOutputs {
  autolabel_job_id?: string;
  autolabel_reused?: boolean;
  export_job_id?: string;
  commit_id?: string;
  training_job_id?: string;
  model_version?: string;
  parent_version?: string;
  promotion_id?: string;
  gate_outcome?: string;
  gate_rule?: string | null;
}

export const flywheelWorkflowId = (kind: FlywheelKind, id: string, sessionId: string | null): string =>
  kind === 'session' ? `flywheel-session-${sessionId}` : `training-cycle-${id}`;

export const flywheelRunLocation = (id: string) => `/api/flywheel/stages?run_id=${id}`;

const stagesOf = (r: FlywheelRun) => r.stages as unknown as StageRecord[];
const outputsOf = (r: FlywheelRun) => r.outputs as unknown as FlywheelOutputs;

export const flywheelRunOut = (r: FlywheelRun) => ({
  run_id: r.id,
  kind: r.kind,
  session_id: r.sessionId,
  params: r.params as unknown as FlywheelParams,
  status: r.status,
  stage: r.stage,
  stages: stagesOf(r),
  outputs: outputsOf(r),
  error: r.error,
  workflow_id: r.workflowId,
  created_by: r.createdBy,
  created_at: r.createdAt.toISOString(),
  updated_at: r.updatedAt.toISOString(),
  finished_at: r.finishedAt?.toISOString() ?? null,
});

/**
 * The gold set a run is judged on: the one named, else the newest sealed one. Without one the gate
 * has nothing to measure on, so the run is refused before it starts.
 */
export async function flywheelGold(db: Db, goldId: string | null): Promise<GoldSet> {
  if (goldId) {
    const gold = await db.goldSet.findUnique({ where: { id: goldId } });
    if (!gold) throw new NotFoundError(`no gold set ${goldId}`);
    if (!gold.sealedAt)
      throw new RefusedError(`gold set ${goldId} is not sealed: the gate measures on sealed sets only`);
    return gold;
  }
  const gold = await db.goldSet.findFirst({
    where: { sealedAt: { not: null } },
    orderBy: [{ sealedAt: 'desc' }, { id: 'desc' }],
  });
  if (!gold)
    throw new RefusedError(
      'no sealed gold set to judge a challenger on: seal one (POST /api/quality/gold/seal) or name gold_id',
    );
  return gold;
}

const refusal = refusedAs('FlywheelRefused');

export function createFlywheelActivities(deps: ActivityDeps) {
  const { db } = deps;
  const load = (runId: string) => db.flywheelRun.findUniqueOrThrow({ where: { id: runId } });

  /** A change of the run: its row, and the jobs stream (`flywheel.<what>`). */
  async function changed(runId: string, what: string, data: Prisma.FlywheelRunUpdateInput) {
    const r = await db.flywheelRun.update({ where: { id: runId }, data });
    await deps.events.publish('jobs', `flywheel.${what}`, flywheelRunOut(r));
    return r;
  }

  async function moved(
    runId: string,
    stage: FlywheelStage,
    to: StageState,
    detail: Record<string, unknown> = {},
    outputs: FlywheelOutputs = {},
  ) {
    const r = await load(runId);
    return changed(runId, 'stage', {
      stage,
      stages: moveStage(
        stagesOf(r),
        stage,
        to,
        new Date().toISOString(),
        detail,
      ) as unknown as Prisma.InputJsonValue,
      outputs: { ...outputsOf(r), ...outputs } as Prisma.InputJsonValue,
    });
  }

  /** Keeps what a step made on the run, so its retry finds it. */
  const keep = async (runId: string, outputs: FlywheelOutputs) => {
    const r = await load(runId);
    await db.flywheelRun.update({
      where: { id: runId },
      data: { outputs: { ...outputsOf(r), ...outputs } as Prisma.InputJsonValue },
    });
  };

  const paramsOf = async (runId: string) => {
    const r = await load(runId);
    return { run: r, params: r.params as unknown as FlywheelParams, outputs: outputsOf(r) };
  };

  return {
    async enterFlywheelStage(input: { runId: string; stage: FlywheelStage }) {
      await moved(input.runId, input.stage, 'running');
    },

    async finishFlywheelStage(input: {
      runId: string;
      stage: FlywheelStage;
      state: 'done' | 'skipped';
      detail: Record<string, unknown>;
    }) {
      await moved(input.runId, input.stage, input.state, input.detail);
    },

    /** Whether the session is ingested: ready, still coming in (the workflow waits), or failed (the run fails). */
    async flywheelIngestState(input: {
      runId: string;
    }): Promise<{ ready: boolean; detail: Record<string, unknown> }> {
      const { run } = await paramsOf(input.runId);
      const session = await db.session.findUnique({ where: { id: run.sessionId! } });
      if (!session)
        throw ApplicationFailure.nonRetryable(`session ${run.sessionId} is gone`, 'FlywheelRefused');
      if (session.state === 'failed')
        throw ApplicationFailure.nonRetryable(
          `session ${session.id}'s ingest failed: ${session.error ?? 'no reason recorded'}`,
          'FlywheelRefused',
        );
      return {
        ready: session.state === 'ready',
        detail: { session_state: session.state, frames: session.frameCount },
      };
    },

    /**
     * The auto-label job of the stage: the session's last completed one when it has one and no
     * relabel was asked (reused: nothing runs), else a new job for the child workflow. Refusals
     * (quarantine, no frames, the kill switch) end the run by name.
     */
    async prepareFlywheelAutolabel(input: {
      runId: string;
    }): Promise<{ reused: true; jobId: string } | ({ reused: false } & QueuedChild)> {
      const { run, params, outputs } = await paramsOf(input.runId);
      const sessionId = run.sessionId!;
      if (outputs.autolabel_job_id) {
        const job = await db.autolabelJob.findUniqueOrThrow({ where: { id: outputs.autolabel_job_id } });
        return outputs.autolabel_reused
          ? { reused: true, jobId: job.id }
          : { reused: false, jobId: job.id, workflowId: job.workflowId };
      }
      if (!params.relabel) {
        const done = await db.autolabelJob.findFirst({
          where: { sessionId, state: 'completed' },
          orderBy: [{ finishedAt: 'desc' }, { id: 'desc' }],
        });
        if (done) {
          await keep(run.id, { autolabel_job_id: done.id, autolabel_reused: true });
          return { reused: true, jobId: done.id };
        }
      }
      try {
        await assertWorkMayStart(db, 'autolabel');
        const refused = await autolabelRefusal(db, sessionId);
        if (refused) throw new RefusedError(refused.reason);
        const job = await createAutolabelJob(db, deps.config, {
          sessionId,
          mode: 'autolabel',
          computeTarget: 'local',
          limit: null,
          onlyUnlabelled: false,
          actorId: run.createdBy ?? '',
        });
        await keep(run.id, { autolabel_job_id: job.id, autolabel_reused: false });
        return { reused: false, jobId: job.id, workflowId: job.workflowId };
      } catch (err) {
        return refusal(err);
      }
    },

    /** What the auto-label job did, for the stage's record. */
    async flywheelAutolabelResult(input: { jobId: string }) {
      const job = await db.autolabelJob.findUniqueOrThrow({ where: { id: input.jobId } });
      if (job.state !== 'completed')
        throw ApplicationFailure.nonRetryable(`auto-label job ${job.id} is ${job.state}`, 'FlywheelRefused');
      return { job_id: job.id, frames_done: job.framesDone, frames_planned: job.framesPlanned };
    },

    /** How the session's objects stand: routed to review, auto-accepted, decided by people. */
    async flywheelReviewState(input: { runId: string }) {
      const { run } = await paramsOf(input.runId);
      const rows = await db.annoObject.groupBy({
        by: ['state'],
        where: { frame: { sessionId: run.sessionId! } },
        _count: { _all: true },
      });
      const byState = Object.fromEntries(rows.map((r) => [r.state, r._count._all])) as Record<string, number>;
      return { objects: byState, in_review: byState.review ?? 0 };
    },

    async prepareFlywheelExport(input: { runId: string }): Promise<QueuedChild> {
      const { run, params, outputs } = await paramsOf(input.runId);
      if (outputs.export_job_id) {
        const job = await db.exportJob.findUniqueOrThrow({ where: { id: outputs.export_job_id } });
        return { jobId: job.id, workflowId: job.workflowId! };
      }
      const gold = await db.goldSet.findUniqueOrThrow({ where: { id: params.gold_id } });
      const queued = await queueTrainingExport(deps, {
        name: `flywheel-${run.id.slice(0, 8)}`,
        goldSessionIds: gold.sessionIds,
        actorId: run.createdBy,
      }).catch(refusal);
      await keep(run.id, { export_job_id: queued.jobId });
      return queued;
    },

    async flywheelExportedCommit(input: { runId: string; jobId: string }): Promise<string> {
      const commitId = await exportedCommit(db, input.jobId).catch(refusal);
      await keep(input.runId, { commit_id: commitId });
      return commitId;
    },

    async prepareFlywheelTraining(input: { runId: string; commitId: string }): Promise<QueuedChild> {
      const { run, params, outputs } = await paramsOf(input.runId);
      if (outputs.training_job_id) {
        const job = await db.trainingJob.findUniqueOrThrow({ where: { id: outputs.training_job_id } });
        return { jobId: job.id, workflowId: job.workflowId };
      }
      const queued = await queueChallengerTraining(deps, {
        commitId: input.commitId,
        name: `flywheel ${run.kind} ${run.id.slice(0, 8)}`,
        epochs: params.training_epochs,
        actorId: run.createdBy,
      }).catch(refusal);
      await keep(run.id, { training_job_id: queued.jobId });
      return queued;
    },

    async flywheelTrainedModel(input: { runId: string; jobId: string }) {
      const trained = await trainedModel(db, input.jobId).catch(refusal);
      await keep(input.runId, { model_version: trained.modelVersion, parent_version: trained.parentVersion });
      return trained;
    },

    /** The gate's request: the challenger against the champion on the run's gold set, as its starter. */
    async planFlywheelGate(input: { runId: string; modelVersion: string }): Promise<PromotionRequest> {
      const { run, params } = await paramsOf(input.runId);
      return {
        challengerVersion: input.modelVersion,
        goldId: params.gold_id,
        challengerRunId: null,
        championRunId: null,
        sliceIds: [],
        actor: { userId: run.createdBy ?? '', role: 'reviewer', requestId: `flywheel-${run.id}` },
      };
    },

    /**
     * The end of a run: its status, the stage that was running ended alike, the audit entry and
     * `flywheel.finished` (once). Only a running run ends: a cancel settled first stays cancelled.
     */
    async finishFlywheelRun(input: {
      runId: string;
      status: 'completed' | 'failed' | 'cancelled';
      error?: string;
      gate?: { promotion_id: string; outcome: string; rule: string | null };
    }) {
      const r = await load(input.runId);
      if (r.status !== 'running') return;
      const now = new Date();
      const stages =
        input.status === 'completed'
          ? stagesOf(r)
          : endRunningStage(stagesOf(r), input.status, now.toISOString());
      const gate: FlywheelOutputs = input.gate
        ? {
            promotion_id: input.gate.promotion_id,
            gate_outcome: input.gate.outcome,
            gate_rule: input.gate.rule,
          }
        : {};
      const ended = await changed(r.id, input.status, {
        status: input.status,
        error: input.error ?? null,
        finishedAt: now,
        stages: stages as unknown as Prisma.InputJsonValue,
        outputs: { ...outputsOf(r), ...gate } as Prisma.InputJsonValue,
      });
      await recordAudit(db, {
        actorId: r.createdBy,
        action: `flywheel.${input.status}`,
        subjectType: 'flywheel_run',
        subjectId: r.id,
        detail: {
          kind: r.kind,
          session_id: r.sessionId,
          stage: r.stage,
          error: input.error ?? null,
          ...gate,
        },
      });
      await emitEvent(db, {
        id: onceEventId('flywheel.finished', r.id),
        kind: 'flywheel.finished',
        subjectType: 'flywheel_run',
        subjectId: r.id,
        payload: {
          run_id: r.id,
          kind: r.kind,
          session_id: r.sessionId,
          status: ended.status,
          stage: ended.stage,
          gate_outcome: gate.gate_outcome ?? null,
          error: ended.error,
          started_by: r.createdBy,
        },
      });
    },
  };
}

/** Runs newest first by id cursor, narrowed by run, session, kind or status; one named run that does not exist is 404. */
export async function listFlywheelRuns(
  db: Db,
  query: {
    run_id?: string | undefined;
    session_id?: string | undefined;
    kind?: FlywheelKind | undefined;
    status?: string | undefined;
    limit: number;
    cursor?: string | undefined;
  },
) {
  const rows = await db.flywheelRun.findMany({
    where: {
      ...(query.run_id ? { id: query.run_id } : {}),
      ...(query.session_id ? { sessionId: query.session_id } : {}),
      ...(query.kind ? { kind: query.kind } : {}),
      ...(query.status ? { status: query.status } : {}),
    },
    orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
    ...idCursorArgs(query),
  });
  if (query.run_id && !rows.length) throw new NotFoundError(`no flywheel run ${query.run_id}`);
  const { page, next_cursor } = idPage(rows, query.limit);
  return { runs: page.map(flywheelRunOut), limit: query.limit, next_cursor };
}
