import { Context } from '@temporalio/activity';
import { UnavailableError } from '../../core/errors';
import type { Box } from '../../core/geometry';
import { MACHINE_SOURCE_SPELLINGS } from '../../core/objects/sources';
import {
  countDecision,
  decideRelabel,
  emptyRelabelTally,
  RELABEL_FAILURES_KEPT,
  type RelabelTally,
} from '../../core/relabel/decide';
import type { Db } from '../db';
import type { ActivityDeps } from '../deps';
import { loadFrameImage } from '../annotations/crops';
import { settleAgentRun, type RevertTally } from '../agent-runs/runs';
import { ledgerObjectCount } from '../agent-runs/list';
import { boxClassifierOn } from '../detect/box-classifier';
import { releaseSlot, takeSlot } from '../autolabel/slot';
import { residentClosedSetDetector } from '../detect/closed-set';
import { writeRelabelFrame, type RelabelSkip, type RelabelWrite } from './frames';

/** A corpus relabel: the closed-set detector reclassifies machine-made boxes on the GPU slot. */
export const RELABEL_KIND = 'relabel';
/** An external relabel brought in as a run (POST /api/relabel/ingest). */
export const RELABEL_IMPORT_KIND = 'relabel-import';
export const RELABEL_KINDS: readonly string[] = [RELABEL_KIND, RELABEL_IMPORT_KIND];

/** What a corpus relabel was asked (AgentRun.params). */
export interface RelabelRunParams {
  /** null: every session. */
  session_ids: string[] | null;
  /** Only objects of these classes are reclassified; null: every class. */
  classes: string[] | null;
  min_score: number;
  min_margin: number;
  /** Frames at most; null: every frame with a machine-made object. */
  limit: number | null;
}

/** What an imported relabel brought (AgentRun.params): one new class per object. */
export interface RelabelImportParams {
  session_ids: null;
  /** Where the relabel came from (a tool, a vendor), as the caller names it. */
  source: string;
  changes: Array<{ object_id: string; class_name: string; conf: number | null }>;
}

/** A relabel run's `changes`: its tally, the objects an import could not move, and what a revert did. */
export interface RelabelRunSummary extends RelabelTally {
  skipped?: RelabelSkip[];
  reverted: RevertTally | null;
}

const MACHINE = JSON.stringify(MACHINE_SOURCE_SPELLINGS);

/** Classes a relabel may move an object to: named in the ontology and not retired. */
const knownClasses = async (db: Db) =>
  new Map(
    (await db.ontologyClass.findMany({ where: { retiredAt: null }, select: { id: true, name: true } })).map(
      (c) => [c.name, c.id],
    ),
  );

const paramsOf = async <P>(db: Db, runId: string) => {
  const run = await db.agentRun.findUniqueOrThrow({ where: { id: runId } });
  return { run, params: run.params as unknown as P };
};

/** The steps of a corpus relabel (`relabelCorpusWorkflow`) and of an imported relabel, and their end. */
export function createRelabelCpuActivities(deps: ActivityDeps) {
  const { db } = deps;
  return {
    /** The next frames after `after` (keyset on the frame id) carrying a machine-made object the run would weigh. */
    async nextRelabelFrames(input: { runId: string; after: string | null; take: number }): Promise<string[]> {
      const { params } = await paramsOf<RelabelRunParams>(db, input.runId);
      const rows = await db.$queryRaw<Array<{ id: string }>>`
        SELECT fr.id::text FROM frames fr
         WHERE (${input.after}::uuid IS NULL OR fr.id > ${input.after}::uuid)
           AND (${params.session_ids}::uuid[] IS NULL OR fr.session_id = ANY(${params.session_ids}::uuid[]))
           AND EXISTS (SELECT 1 FROM objects o JOIN ontology_classes c ON c.id = o.class_id
                        WHERE o.frame_id = fr.id AND o.state <> 'rejected'
                          AND o.source IN (SELECT value FROM jsonb_array_elements_text(${MACHINE}::jsonb))
                          AND (${params.classes}::text[] IS NULL OR c.name = ANY(${params.classes}::text[])))
         ORDER BY fr.id LIMIT ${input.take}::int`;
      return rows.map((r) => r.id);
    },

    /**
     * Applies an imported relabel, frame by frame (each frame one transaction, so a retried attempt
     * skips the frames already written). Objects that are gone, human-made or rejected are listed
     * as skipped; classes were checked when the import was accepted.
     */
    async applyRelabelImport(input: { runId: string }): Promise<RelabelRunSummary> {
      const ctx = Context.current();
      const { params } = await paramsOf<RelabelImportParams>(db, input.runId);
      const classes = await knownClasses(db);
      const objects = await db.annoObject.findMany({
        where: { id: { in: params.changes.map((c) => c.object_id) } },
        select: { id: true, frameId: true },
      });
      const frameOf = new Map(objects.map((o) => [o.id, o.frameId]));
      const byFrame = new Map<string, RelabelWrite[]>();
      const tally: RelabelRunSummary = { ...emptyRelabelTally(), skipped: [], reverted: null };
      for (const change of params.changes) {
        const frameId = frameOf.get(change.object_id);
        if (!frameId) {
          tally.skipped!.push({ object_id: change.object_id, reason: 'not_found' });
          continue;
        }
        const write: RelabelWrite = {
          objectId: change.object_id,
          classId: classes.get(change.class_name)!,
          className: change.class_name,
          conf: change.conf,
          trace: { import_source: params.source, to: change.class_name },
        };
        byFrame.set(frameId, [...(byFrame.get(frameId) ?? []), write]);
      }
      for (const [frameId, writes] of byFrame) {
        const { written, skipped } = await writeRelabelFrame(db, input.runId, frameId, writes);
        tally.frames_checked++;
        tally.objects_checked += writes.length;
        tally.objects_relabelled += written;
        tally.skipped!.push(...skipped);
        ctx.heartbeat(tally.frames_checked);
      }
      return tally;
    },

    /** Ends a relabel run: its summary, status, audit and the jobs stream (`agent.run.completed|failed`). */
    async finishRelabelRun(input: {
      runId: string;
      status: 'completed' | 'failed';
      error?: string;
      tally: RelabelRunSummary | RelabelTally;
    }) {
      const run = await db.agentRun.findUniqueOrThrow({ where: { id: input.runId } });
      const reverted = (run.changes as Partial<RelabelRunSummary> | null)?.reverted ?? null;
      // A retried page finds its earlier frames written and counts their objects as kept: the
      // objects moved are what the ledger holds.
      const objects_relabelled = await ledgerObjectCount(db, input.runId);
      await settleAgentRun(deps, input, { ...input.tally, objects_relabelled, reverted });
    },
  };
}

/** The GPU-slot step of a corpus relabel: the detector over one page of frames. */
export function createRelabelGpuActivities(deps: ActivityDeps) {
  const { db, storage, config } = deps;
  const classifier = boxClassifierOn(deps.closedSet ?? residentClosedSetDetector(config), false);
  return {
    /**
     * One page of frames, heartbeating after each: every machine-made, unrejected object of the
     * run's classes is reclassified on its box, and the moves the rule allows are written (one
     * transaction a frame; a frame the run already wrote is skipped on a retry). A frame that
     * fails (its image gone, say) is counted with why and the page goes on; a model that is not
     * there fails the run by name.
     */
    async runRelabelFrames(input: { runId: string; frameIds: string[] }): Promise<RelabelTally> {
      const ctx = Context.current();
      const { params } = await paramsOf<RelabelRunParams>(db, input.runId);
      const classes = await knownClasses(db);
      const known = new Set(classes.keys());
      const rule = { minScore: params.min_score, minMargin: params.min_margin };
      const tally = emptyRelabelTally();
      const device = config.workers.gpuDevice;
      await takeSlot(db, {
        device,
        holderKind: 'relabel',
        holderId: input.runId,
        workflowId: ctx.info.workflowExecution?.workflowId ?? input.runId,
        sessionId: null,
      });
      try {
        await relabelPage();
      } finally {
        await releaseSlot(db, device, input.runId);
      }
      return tally;

      async function relabelPage() {
        for (const frameId of input.frameIds) {
          try {
            const frame = await db.frame.findUniqueOrThrow({ where: { id: frameId } });
            const objects = await db.$queryRaw<Array<{ id: string; className: string; bbox: number[] }>>`
            SELECT o.id::text, c.name AS "className", o.bbox FROM objects o JOIN ontology_classes c ON c.id = o.class_id
             WHERE o.frame_id = ${frameId}::uuid AND o.state <> 'rejected'
               AND o.source IN (SELECT value FROM jsonb_array_elements_text(${MACHINE}::jsonb))
               AND (${params.classes}::text[] IS NULL OR c.name = ANY(${params.classes}::text[]))
             ORDER BY o.id`;
            const image = await loadFrameImage(storage, frame);
            const { model, candidates } = await classifier.classifyBoxes(
              image,
              objects.map((o) => o.bbox as Box),
            );
            const writes: RelabelWrite[] = [];
            objects.forEach((o, i) => {
              const decision = decideRelabel(o.className, candidates[i]!, known, rule);
              countDecision(tally, decision);
              if (decision.move)
                writes.push({
                  objectId: o.id,
                  classId: classes.get(decision.to)!,
                  className: decision.to,
                  conf: decision.score,
                  trace: { model, ...decision, candidates: candidates[i]!.slice(0, 3) },
                });
            });
            if (writes.length > 0) await writeRelabelFrame(db, input.runId, frameId, writes);
          } catch (err) {
            if (err instanceof UnavailableError) throw err;
            tally.frames_failed++;
            if (tally.failures.length < RELABEL_FAILURES_KEPT)
              tally.failures.push({ frame_id: frameId, reason: (err as Error).message });
          }
          tally.frames_checked++;
          ctx.heartbeat(tally.frames_checked);
        }
      }
    },
  };
}
