import { Context } from '@temporalio/activity';
import { UnavailableError } from '../../core/errors';
import { COVERAGE_L1 } from '../../core/export/gate-report';
import { settleAgentRun, type RevertTally } from '../agent-runs/runs';
import { emptyPiiTally, FAILURES_KEPT, type PiiRunTally } from '../../core/pii-recheck/tally';
import type { Db } from '../db';
import type { ActivityDeps } from '../deps';
import { piiPassFrame } from './frames';
import { applyRecheck, PII_BACKFILL_KIND, PII_RECHECK_KIND } from './recheck';

/** What a PII run was asked (AgentRun.params). */
export interface PiiRunParams {
  /** null: the whole corpus. */
  session_ids: string[] | null;
  /** Frames at most (a backfill's pii_limit); null: no bound. */
  limit: number | null;
  /** `frame`: one frame's re-check applied by POST /api/agent/frames/{frame_id}/reanalyze. */
  scope: 'corpus' | 'frame';
  frame_id?: string;
}

/** A run's `changes`. */
export interface PiiRunSummary {
  frames_checked: number;
  frames_changed: number;
  regions_added: { face: number; plate: number };
  frames_failed: number;
  failures: PiiRunTally['failures'];
  reverted: RevertTally | null;
}

export async function summarisePiiRun(db: Db, runId: string, tally: PiiRunTally): Promise<PiiRunSummary> {
  const [rows, run] = await Promise.all([
    db.$queryRaw<Array<{ frames: number; face: number; plate: number }>>`
      SELECT count(DISTINCT f.frame_id)::int AS frames,
             count(r.v) FILTER (WHERE r.v->>'kind' = 'face')::int AS face,
             count(r.v) FILTER (WHERE r.v->>'kind' = 'plate')::int AS plate
        FROM agent_run_frames f LEFT JOIN LATERAL jsonb_array_elements(f.replaced->'added') r(v) ON true
       WHERE f.run_id = ${runId}::uuid`,
    db.agentRun.findUniqueOrThrow({ where: { id: runId }, select: { changes: true } }),
  ]);
  const { frames = 0, face = 0, plate = 0 } = rows[0] ?? {};
  return {
    frames_checked: tally.checked,
    frames_changed: frames,
    regions_added: { face, plate },
    frames_failed: tally.failed,
    failures: tally.failures,
    reverted: (run.changes as Partial<PiiRunSummary> | null)?.reverted ?? null,
  };
}

/**
 * The steps of a PII corpus run (`piiRunWorkflow`): the next page of frames, the page's frames
 * (the re-check on the GPU slot, the backfill on the `cpu` queue) and the end. Registered on both
 * queues; each step goes where its workflow sends it.
 */
export function createPiiRunActivities(deps: ActivityDeps) {
  const { db } = deps;
  const paramsOf = async (runId: string) => {
    const run = await db.agentRun.findUniqueOrThrow({ where: { id: runId } });
    return { kind: run.kind, params: run.params as unknown as PiiRunParams };
  };
  return {
    /**
     * The next frames after `after` (keyset on the frame id): for a re-check, frames with an
     * annotated person or vehicle; for a backfill, frames lacking an audit or not examined.
     */
    async nextPiiFrames(input: { runId: string; after: string | null; take: number }): Promise<string[]> {
      const { kind, params } = await paramsOf(input.runId);
      const sessions = params.session_ids;
      const rows = await db.$queryRaw<Array<{ id: string }>>`
        SELECT fr.id::text FROM frames fr LEFT JOIN pii_audits a ON a.frame_id = fr.id
         WHERE (${input.after}::uuid IS NULL OR fr.id > ${input.after}::uuid)
           AND (${sessions}::uuid[] IS NULL OR fr.session_id = ANY(${sessions}::uuid[]))
           AND CASE WHEN ${kind} = ${PII_BACKFILL_KIND} THEN a.id IS NULL OR NOT a.examined
                    ELSE EXISTS (SELECT 1 FROM objects o JOIN ontology_classes c ON c.id = o.class_id
                                  WHERE o.frame_id = fr.id AND c.l1 = ANY(${[...COVERAGE_L1]}::text[])
                                    AND o.state <> 'rejected') END
         ORDER BY fr.id LIMIT ${input.take}::int`;
      return rows.map((r) => r.id);
    },

    /**
     * One page of frames, heartbeating after each (a retry skips the frames the run already
     * wrote). A frame that fails (its image gone, say) is counted with why and the page goes on;
     * a model that is not there fails the run by name.
     */
    async runPiiFrames(input: { runId: string; frameIds: string[] }): Promise<PiiRunTally> {
      const ctx = Context.current();
      const { kind } = await paramsOf(input.runId);
      const tally = emptyPiiTally();
      for (const frameId of input.frameIds) {
        try {
          if (kind === PII_RECHECK_KIND) await applyRecheck(deps, input.runId, frameId);
          else
            await piiPassFrame(
              deps,
              input.runId,
              await db.frame.findUniqueOrThrow({ where: { id: frameId } }),
            );
        } catch (err) {
          if (err instanceof UnavailableError) throw err;
          tally.failed++;
          if (tally.failures.length < FAILURES_KEPT)
            tally.failures.push({ frame_id: frameId, reason: (err as Error).message });
        }
        tally.checked++;
        ctx.heartbeat(tally.checked);
      }
      return tally;
    },

    /** Ends a PII run: its summary, status, audit and the jobs stream (`agent.run.completed|failed`). */
    async finishPiiRun(input: {
      runId: string;
      status: 'completed' | 'failed';
      error?: string;
      tally: PiiRunTally;
    }) {
      await settleAgentRun(deps, input, await summarisePiiRun(db, input.runId, input.tally));
    },
  };
}
