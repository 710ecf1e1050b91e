import { Context } from '@temporalio/activity';
import { UnavailableError } from '../../core/errors';
import type { Box } from '../../core/geometry';
import { missedDetections, type RecallDetection } from '../../core/recall/missed';
import { emptyRecallTally, RECALL_FAILURES_KEPT, type RecallTally } from '../../core/recall/tally';
import type { Db } from '../db';
import type { ActivityDeps } from '../deps';
import { settleAgentRun, type RevertTally } from '../agent-runs/runs';
import { ledgerObjectCount } from '../agent-runs/list';
import { releaseSlot, takeSlot } from '../autolabel/slot';
import { residentClosedSetDetector } from '../detect/closed-set';
import { decodeFrame } from '../detect/frame-image';
import { objectLocation, readObject } from '../inspector/frame-objects';

/** A recall run: a more sensitive detector pass over a session that queues what the first pass missed. */
export const RECALL_KIND = 'recall';

/** What a recall run was asked (AgentRun.params). */
export interface RecallRunParams {
  session_ids: [string];
  min_score: number;
  tile_min_score: number;
  match_iou: number;
}

export interface RecallRunSummary extends RecallTally {
  reverted: RevertTally | null;
}

const paramsOf = async (db: Db, runId: string) =>
  (await db.agentRun.findUniqueOrThrow({ where: { id: runId } })).params as unknown as RecallRunParams;

/**
 * Writes one frame's candidates as part of run `runId`, in one transaction: each missed detection
 * becomes an object with source `recall` and state `review` (the review queue is the candidates'
 * queue), its provenance naming the view that found it and the run, and the frame's ledger row
 * lists them so the run's revert takes back the ones nobody reviewed. A frame the run already wrote
 * is left as it is (a retried page).
 */
async function queueCandidates(
  db: Db,
  input: { runId: string; frameId: string; model: string; minScore: number; sliced: boolean },
  missed: ReadonlyArray<RecallDetection & { classId: number }>,
): Promise<number> {
  return db.$transaction(async (tx) => {
    if (
      await tx.agentRunFrame.findUnique({
        where: { runId_frameId: { runId: input.runId, frameId: input.frameId } },
      })
    )
      return 0;
    const created: string[] = [];
    for (const m of missed) {
      const o = await tx.annoObject.create({
        data: {
          frameId: input.frameId,
          bbox: [...m.box],
          classId: m.classId,
          conf: m.score,
          source: 'recall',
          state: 'review',
          provenance: {
            create: {
              paths: ['recall'],
              rawConfidences: { recall: m.score },
              reasonerTrace: {
                run_id: input.runId,
                model: input.model,
                sliced: input.sliced,
                min_score: input.minScore,
              },
            },
          },
        },
      });
      created.push(o.id);
    }
    await tx.agentRunFrame.create({
      data: { runId: input.runId, frameId: input.frameId, jobId: input.runId, created, replaced: [] },
    });
    return created.length;
  });
}

/** The steps of a recall run (`recallWorkflow`) on the `cpu` queue: the next frames and the end. */
export function createRecallCpuActivities(deps: ActivityDeps) {
  const { db } = deps;
  return {
    /** The session's next frames after `after`, by id. */
    async nextRecallFrames(input: { runId: string; after: string | null; take: number }): Promise<string[]> {
      const { session_ids } = await paramsOf(db, input.runId);
      const rows = await db.frame.findMany({
        where: { sessionId: session_ids[0], ...(input.after ? { id: { gt: input.after } } : {}) },
        orderBy: { id: 'asc' },
        take: input.take,
        select: { id: true },
      });
      return rows.map((r) => r.id);
    },

    /** Ends a recall run: its summary, status, audit and the jobs stream (`agent.run.completed|failed`). */
    async finishRecallRun(input: {
      runId: string;
      status: 'completed' | 'failed';
      error?: string;
      tally: RecallTally;
    }) {
      const run = await db.agentRun.findUniqueOrThrow({ where: { id: input.runId } });
      const reverted = (run.changes as Partial<RecallRunSummary> | null)?.reverted ?? null;
      const summary: RecallRunSummary = {
        ...input.tally,
        candidates: await ledgerObjectCount(db, input.runId),
        reverted,
      };
      await settleAgentRun(deps, input, summary);
    },
  };
}

/** The GPU-slot step of a recall run: the sensitive pass over one page of frames. */
export function createRecallGpuActivities(deps: ActivityDeps) {
  const { db, storage, config } = deps;
  // Its own detector: the same model, with the recall run's lower floors (kept loaded between pages).
  let sensitive: { key: string; detector: ReturnType<typeof residentClosedSetDetector> } | undefined;
  const detectorFor = (params: RecallRunParams) => {
    const key = `${params.min_score}/${params.tile_min_score}`;
    if (sensitive?.key !== key) {
      void sensitive?.detector.close();
      sensitive = {
        key,
        detector: residentClosedSetDetector({
          ...config,
          autolabel: { ...config.autolabel, minScore: params.min_score },
          detect: { ...config.detect, tileMinScore: params.tile_min_score },
        }),
      };
    }
    return sensitive.detector;
  };

  return {
    /**
     * One page of frames, holding the GPU slot and heartbeating after each frame: the detector runs
     * on the whole frame and on its tiles (slicing forced on) with the lower floors, and the
     * detections no existing object covers are queued as candidates. A frame that fails (its image
     * gone) is counted with why and the page goes on; a model that is not there fails the run by name.
     */
    async runRecallFrames(input: { runId: string; frameIds: string[] }): Promise<RecallTally> {
      const ctx = Context.current();
      const params = await paramsOf(db, input.runId);
      const model = await detectorFor(params).acquire();
      const classes = new Map(
        (
          await db.ontologyClass.findMany({ where: { retiredAt: null }, select: { id: true, name: true } })
        ).map((c) => [c.name, c.id]),
      );
      const tally = emptyRecallTally();
      const device = config.workers.gpuDevice;
      await takeSlot(db, {
        device,
        holderKind: 'recall',
        holderId: input.runId,
        workflowId: ctx.info.workflowExecution?.workflowId ?? input.runId,
        sessionId: params.session_ids[0],
      });
      try {
        for (const frameId of input.frameIds) {
          try {
            const frame = await db.frame.findUniqueOrThrow({ where: { id: frameId } });
            const image = await decodeFrame(
              await readObject(storage, objectLocation(storage, frame.uri, 'frames')),
            );
            const { run, slicing } = await model.detect(image, 'on');
            const detections = run.status === 'ran' ? run.detections : [];
            const existing = await db.annoObject.findMany({ where: { frameId }, select: { bbox: true } });
            const seen: RecallDetection[] = detections.flatMap((d) =>
              classes.has(d.className) ? [{ box: d.box, className: d.className, score: d.score }] : [],
            );
            const missed = missedDetections(
              seen,
              existing.map((o) => o.bbox as Box),
              params.match_iou,
            ).map((m) => ({ ...m, classId: classes.get(m.className)! }));
            tally.detections += seen.length;
            tally.candidates += await queueCandidates(
              db,
              {
                runId: input.runId,
                frameId,
                model: model.model,
                minScore: params.min_score,
                sliced: slicing?.sliced ?? false,
              },
              missed,
            );
          } catch (err) {
            if (err instanceof UnavailableError) throw err;
            tally.frames_failed++;
            if (tally.failures.length < RECALL_FAILURES_KEPT)
              tally.failures.push({ frame_id: frameId, reason: (err as Error).message });
          }
          tally.frames_checked++;
          ctx.heartbeat(tally.frames_checked);
        }
      } finally {
        await releaseSlot(db, device, input.runId);
      }
      return tally;
    },
  };
}
