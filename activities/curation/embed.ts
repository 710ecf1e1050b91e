import { Context } from '@temporalio/activity';
import {
  EMBEDDING_MODELS,
  tinyImageDescriptor,
  type EmbeddingModelName,
} from '../../core/curation/embedding';
import { Prisma } from '../../generated/prisma/client';
import { recordAudit } from '../audit';
import type { ActivityDeps } from '../deps';
import { decodeFrame } from '../detect/frame-image';
import { mapLimit } from '../../core/map-limit';
import { isMissingObject, objectLocation, readObject } from '../inspector/frame-objects';

export interface CurationEmbedInput {
  model: EmbeddingModelName;
  /** Only these sessions' frames; null: the whole corpus. */
  sessionIds: string[] | null;
  /** Who asked (the audit entry's actor) and the request that did. */
  actorId: string | null;
  requestId: string | null;
  /** Frames read per page (one write and one heartbeat each). */
  pageSize?: number;
}

/** Counts of a run; the heartbeat carries them with the keyset cursor (the last frame id of a finished page). */
export interface CurationEmbedTally {
  model: EmbeddingModelName;
  session_ids: string[] | null;
  /** Frames without an embedding of the model when they were read. */
  considered: number;
  embedded: number;
  /** Frames with no redacted copy yet: never embedded from the original. */
  skipped_unredacted: number;
  /** Frames whose redacted image is missing from storage or does not decode. */
  skipped_unreadable: number;
}

export interface CurationEmbedHeartbeat {
  after: string | null;
  considered: number;
  embedded: number;
  skipped_unredacted: number;
  skipped_unreadable: number;
}

export const CURATION_EMBED_PAGE = 200;
/** Frames fetched and decoded at once within a page. */
const DECODE_CONCURRENCY = 8;

interface PendingFrame {
  id: string;
  redacted_uri: string | null;
}

/** The curation embedding's activities (cpu queue), run by curationEmbedWorkflow. */
export function createCurationEmbedActivities({
  db,
  storage,
  events,
}: Pick<ActivityDeps, 'db' | 'storage' | 'events'>) {
  return {
    /**
     * Embeds every frame that lacks an embedding of the model (core/curation/embedding.ts) from its
     * redacted copy: pages through them in id order (keyset cursor), writes each page's vectors in
     * one transaction and heartbeats the cursor after it, so a retried attempt resumes after the last
     * page it reported (a page written before a lost heartbeat is not selected again, its frames
     * having their embedding). A frame without a redacted copy, or whose image is gone or broken, is skipped and counted.
     */
    async embedFrames(input: CurationEmbedInput): Promise<CurationEmbedTally> {
      const ctx = Context.current();
      const workflowId = ctx.info.workflowExecution?.workflowId ?? null;
      const model = EMBEDDING_MODELS[input.model];
      const pageSize = input.pageSize ?? CURATION_EMBED_PAGE;
      const state: CurationEmbedHeartbeat = (ctx.info.heartbeatDetails as
        CurationEmbedHeartbeat | undefined) ?? {
        after: null,
        considered: 0,
        embedded: 0,
        skipped_unredacted: 0,
        skipped_unreadable: 0,
      };
      const base = { workflow_id: workflowId, model: input.model, session_ids: input.sessionIds };
      const publish = async (type: string, data: Record<string, unknown>) => {
        try {
          await events.publish('jobs', type, { ...base, ...data });
        } catch (err) {
          ctx.log.warn(`could not publish ${type}`, { error: String(err) });
        }
      };
      const scope = input.sessionIds
        ? Prisma.sql`AND f.session_id = ANY(${input.sessionIds}::uuid[])`
        : Prisma.empty;
      ctx.heartbeat({ ...state });
      await publish('curation.embed.started', { resumed_after: state.after, ...counts(state) });
      for (;;) {
        const page = await db.$queryRaw<PendingFrame[]>`
          SELECT f.id::text, f.redacted_uri FROM frames f
           WHERE NOT EXISTS (SELECT 1 FROM frame_embeddings e WHERE e.frame_id = f.id AND e.model = ${input.model})
             ${scope}
             ${state.after ? Prisma.sql`AND f.id > ${state.after}::uuid` : Prisma.empty}
           ORDER BY f.id LIMIT ${pageSize}`;
        if (page.length === 0) break;
        const vectors = await mapLimit(page, DECODE_CONCURRENCY, async (frame) => {
          if (!frame.redacted_uri) return 'unredacted' as const;
          let bytes: Buffer;
          try {
            bytes = await readObject(storage, objectLocation(storage, frame.redacted_uri, 'redacted'));
          } catch (err) {
            // Storage that does not answer is worth a retry; an image that is gone is not.
            if (isMissingObject(err)) return 'unreadable' as const;
            throw err;
          }
          let rgb: Buffer;
          try {
            rgb = await (await decodeFrame(bytes)).scaled(model.width, model.height);
          } catch {
            return 'unreadable' as const;
          }
          return {
            frameId: frame.id,
            model: input.model,
            vector: Array.from(tinyImageDescriptor(rgb, model)),
          };
        });
        const rows = vectors.filter((v) => typeof v === 'object');
        // A frame keeps one embedding (frame_embeddings is keyed by frame): another model's is replaced.
        if (rows.length)
          await db.$transaction([
            db.frameEmbedding.deleteMany({ where: { frameId: { in: rows.map((r) => r.frameId) } } }),
            db.frameEmbedding.createMany({ data: rows }),
          ]);
        state.after = page[page.length - 1]!.id;
        state.considered += page.length;
        state.embedded += rows.length;
        state.skipped_unredacted += vectors.filter((v) => v === 'unredacted').length;
        state.skipped_unreadable += vectors.filter((v) => v === 'unreadable').length;
        ctx.heartbeat({ ...state });
        await publish('curation.embed.progress', { after: state.after, ...counts(state) });
        if (page.length < pageSize) break;
      }
      if (ctx.info.attempt > 1) {
        // A page an earlier attempt wrote after its last heartbeat got through is not selected again
        // (its frames have their embedding), so a retried run counts its embeddings by their time.
        const [since] = await db.$queryRaw<Array<{ n: bigint }>>`
          SELECT count(*) AS n FROM frame_embeddings e JOIN frames f ON f.id = e.frame_id
           WHERE e.model = ${input.model} AND e.created_at >= ${new Date(ctx.info.scheduledTimestampMs)} ${scope}`;
        state.embedded = Number(since!.n);
        state.considered = state.embedded + state.skipped_unredacted + state.skipped_unreadable;
      }
      const tally: CurationEmbedTally = {
        model: input.model,
        session_ids: input.sessionIds,
        ...counts(state),
      };
      await recordAudit(db, {
        actorId: input.actorId,
        action: 'curation.embedded',
        subjectType: 'frame_embedding',
        detail: { ...tally, workflow_id: workflowId },
        requestId: input.requestId,
      });
      await publish('curation.embed.completed', counts(state));
      return tally;
    },

    /** An embedding run that gave up: audited and announced, so it does not fail only in Temporal. */
    async failCurationEmbed(input: CurationEmbedInput & { error: string }): Promise<void> {
      const workflowId = Context.current().info.workflowExecution?.workflowId ?? null;
      const detail = {
        model: input.model,
        session_ids: input.sessionIds,
        error: input.error,
        workflow_id: workflowId,
      };
      await recordAudit(db, {
        actorId: input.actorId,
        action: 'curation.embed.failed',
        subjectType: 'frame_embedding',
        detail,
        requestId: input.requestId,
      });
      await events.publish('jobs', 'curation.embed.failed', detail);
    },
  };
}

const counts = (s: CurationEmbedHeartbeat) => ({
  considered: s.considered,
  embedded: s.embedded,
  skipped_unredacted: s.skipped_unredacted,
  skipped_unreadable: s.skipped_unreadable,
});
