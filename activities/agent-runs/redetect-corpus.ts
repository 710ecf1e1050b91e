import { MACHINE_SOURCE_SPELLINGS } from '../../core/objects/sources';
import type { Prisma } from '../../generated/prisma/client';
import type { ActivityDeps } from '../deps';
import { autolabelRefusal, createAutolabelJob } from '../autolabel/jobs';
import { agentRunOut, summariseRun } from './runs';

/** What a redetect-all run was asked (AgentRun.params). */
export interface RedetectCorpusParams {
  /** The sessions to walk; null: every machine-labelled session, found page by page. */
  session_ids: string[] | null;
  compute_target: string;
}

export type PreparedSession = { jobId: string } | { skipped: string };

export type SessionOutcome = { outcome: 'completed' } | { outcome: 'failed' | 'skipped'; reason: string };

/**
 * The steps of a redetect-all corpus run (`redetectCorpusWorkflow`), on the `cpu` queue: which
 * sessions come next, a job per session, and the ledger of what happened to each.
 */
export function createRedetectCorpusActivities(deps: ActivityDeps) {
  const { db, config } = deps;
  const paramsOf = async (runId: string) => {
    const run = await db.agentRun.findUniqueOrThrow({ where: { id: runId } });
    return { run, params: run.params as unknown as RedetectCorpusParams };
  };

  return {
    /**
     * The next sessions after `after` (keyset on the session id, so a corpus of any size is
     * walked to its end and a session labelled meanwhile is not visited twice): the listed ones,
     * or every session that carries a machine-source object.
     */
    async nextRedetectSessions(input: { runId: string; after: string | null; pageSize: number }) {
      const { params } = await paramsOf(input.runId);
      if (params.session_ids) {
        return [...params.session_ids]
          .sort()
          .filter((id) => input.after === null || id > input.after)
          .slice(0, input.pageSize);
      }
      const rows = await db.$queryRaw<Array<{ id: string }>>`
        SELECT s.id::text AS id FROM sessions s
        WHERE (${input.after}::uuid IS NULL OR s.id > ${input.after}::uuid)
          AND EXISTS (
            SELECT 1 FROM frames f JOIN objects o ON o.frame_id = f.id
            WHERE f.session_id = s.id
              AND o.source IN (SELECT value FROM jsonb_array_elements_text(${JSON.stringify(MACHINE_SOURCE_SPELLINGS)}::jsonb)))
        ORDER BY s.id LIMIT ${input.pageSize}::int`;
      return rows.map((r) => r.id);
    },

    /**
     * A redetect job of the session for this run, or why the session is skipped (recorded in the
     * ledger). A retried step finds the job it made the first time.
     */
    async prepareRedetectSession(input: { runId: string; sessionId: string }): Promise<PreparedSession> {
      const existing = await db.autolabelJob.findFirst({
        where: { agentRunId: input.runId, sessionId: input.sessionId },
        select: { id: true },
      });
      if (existing) return { jobId: existing.id };
      const { run, params } = await paramsOf(input.runId);
      const refused = await autolabelRefusal(db, input.sessionId);
      if (refused) {
        await record(input.runId, input.sessionId, null, { outcome: 'skipped', reason: refused.reason });
        return { skipped: refused.reason };
      }
      const job = await createAutolabelJob(db, config, {
        sessionId: input.sessionId,
        mode: 'redetect',
        computeTarget: params.compute_target,
        limit: null,
        onlyUnlabelled: false,
        actorId: run.createdBy,
        agentRunId: run.id,
      });
      return { jobId: job.id };
    },

    /** Records what happened to a session; a job whose workflow never started is removed again. */
    async recordRedetectSession(
      input: { runId: string; sessionId: string; jobId: string } & SessionOutcome,
    ): Promise<void> {
      const { runId, sessionId, jobId, ...outcome } = input;
      if (outcome.outcome === 'skipped')
        await db.autolabelJob.deleteMany({ where: { id: jobId, state: 'queued', attempts: 0 } });
      const kept = await db.autolabelJob.count({ where: { id: jobId } });
      await record(runId, sessionId, kept ? jobId : null, outcome);
    },
  };

  /** The ledger row, the run's summary and a progress event. */
  async function record(runId: string, sessionId: string, jobId: string | null, outcome: SessionOutcome) {
    const row = {
      jobId,
      outcome: outcome.outcome,
      reason: outcome.outcome === 'completed' ? null : outcome.reason,
      finishedAt: new Date(),
    };
    await db.agentRunSession.upsert({
      where: { runId_sessionId: { runId, sessionId } },
      create: { runId, sessionId, ...row },
      update: row,
    });
    const changes = await summariseRun(db, runId);
    const run = await db.agentRun.update({
      where: { id: runId },
      data: { changes: changes as unknown as Prisma.InputJsonValue },
    });
    await deps.events.publish('jobs', 'agent.run.progress', {
      ...agentRunOut(run),
      session_id: sessionId,
      outcome: outcome.outcome,
    });
  }
}
