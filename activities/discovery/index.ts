import { EMBEDDING_MODELS, type EmbeddingModelName } from '../../core/curation/embedding';
import { ambiguityScore, sceneOutliers } from '../../core/discovery/outliers';
import { MACHINE_SOURCE_SPELLINGS } from '../../core/objects/sources';
import type { Prisma } from '../../generated/prisma/client';
import { recordAudit } from '../audit';
import { readEmbeddings } from '../curation/diverse';
import { sliceQuery } from '../curation/slice-query';
import type { Db } from '../db';
import type { ActivityDeps } from '../deps';

/** Frames whose embeddings one run compares (every pair once: about 3000² / 2 distances of 576 dimensions). */
export const DISCOVERY_MAX_FRAMES = 3000;
/** The neighbour whose distance says how alone a frame is. */
export const DISCOVERY_NEIGHBOUR = 5;

/** What a discovery run was asked (DiscoveryRun.params). */
export interface DiscoveryParams {
  session_ids: string[] | null;
  min_entropy: number;
  min_conf: number;
  min_z: number;
  model: EmbeddingModelName;
}

export interface DiscoverySummary {
  objects_weighed: number;
  ambiguous_class: number;
  frames_embedded: number;
  novel_scene: number;
}

/** The frames of a run's scope, as a condition over `fr`. */
const scopeOf =
  (params: DiscoveryParams) =>
  (param: (value: unknown) => string): string =>
    params.session_ids ? `fr.session_id = ANY(${param(params.session_ids)}::uuid[])` : 'TRUE';

/** Embedded frames of the model in a scope: what a run would compare. */
export async function embeddedFrames(db: Db, params: DiscoveryParams): Promise<number> {
  const [row] = await sliceQuery({}).rows<{ n: bigint }>(
    db,
    (param) =>
      `SELECT count(*) AS n FROM frames fr JOIN frame_embeddings e ON e.frame_id = fr.id AND e.model = ${param(params.model)}
        WHERE ${scopeOf(params)(param)}`,
  );
  return Number(row?.n ?? 0);
}

/**
 * Writes a finding, or refreshes one an earlier run made: the run, score and evidence move on, what
 * a person decided about it (state, tag) stays.
 */
async function upsertCandidate(
  db: Db,
  runId: string,
  c: { kind: string; subjectId: string; frameId: string; sessionId: string; score: number; evidence: object },
) {
  const fields = { runId, score: c.score, evidence: c.evidence as Prisma.InputJsonValue };
  await db.discoveryCandidate.upsert({
    where: { kind_subjectId: { kind: c.kind, subjectId: c.subjectId } },
    create: { kind: c.kind, subjectId: c.subjectId, frameId: c.frameId, sessionId: c.sessionId, ...fields },
    update: fields,
  });
}

/** The steps of a discovery run (`discoveryWorkflow`), on the `cpu` queue. */
export function createDiscoveryActivities(deps: ActivityDeps) {
  const { db } = deps;
  return {
    /**
     * Mines the run's scope (docs/discovery.md): machine-made objects whose fusion paths disagree on
     * their class while they are surely there (`ambiguous_class`), and frames far from every other
     * in embedding space (`novel_scene`). A retried step writes the same findings again.
     */
    async mineDiscoveryCandidates(input: { runId: string }): Promise<DiscoverySummary> {
      const run = await db.discoveryRun.findUniqueOrThrow({ where: { id: input.runId } });
      const params = run.params as unknown as DiscoveryParams;
      const disputed = await db.$queryRaw<
        Array<{
          id: string;
          frameId: string;
          sessionId: string;
          className: string;
          conf: number | null;
          entropy: number;
          paths: unknown;
          raw: unknown;
        }>
      >`
        SELECT o.id::text, o.frame_id::text AS "frameId", f.session_id::text AS "sessionId", c.name AS "className",
               o.conf, p.entropy, p.paths, p.raw_confidences AS raw
          FROM objects o
          JOIN frames f ON f.id = o.frame_id
          JOIN ontology_classes c ON c.id = o.class_id
          JOIN LATERAL (SELECT entropy, paths, raw_confidences FROM provenance
                         WHERE object_id = o.id AND entropy IS NOT NULL ORDER BY created_at DESC LIMIT 1) p ON true
         WHERE o.state <> 'rejected'
           AND o.source = ANY(${[...MACHINE_SOURCE_SPELLINGS]}::text[])
           AND (${params.session_ids}::uuid[] IS NULL OR f.session_id = ANY(${params.session_ids}::uuid[]))
           AND p.entropy >= ${params.min_entropy}`;
      let ambiguous = 0;
      for (const o of disputed) {
        const score = ambiguityScore(o, { minEntropy: params.min_entropy, minConf: params.min_conf });
        if (score === null) continue;
        ambiguous++;
        await upsertCandidate(db, run.id, {
          kind: 'ambiguous_class',
          subjectId: o.id,
          frameId: o.frameId,
          sessionId: o.sessionId,
          score,
          evidence: {
            class_name: o.className,
            conf: o.conf,
            entropy_bits: o.entropy,
            paths: o.paths,
            raw_confidences: o.raw,
          },
        });
      }
      const count = Math.min(await embeddedFrames(db, params), DISCOVERY_MAX_FRAMES);
      const { ids, frames, points } = await readEmbeddings(
        db,
        sliceQuery({}),
        scopeOf(params),
        params.model,
        count,
      );
      const outliers = sceneOutliers(
        { ids, dims: EMBEDDING_MODELS[params.model].dims, data: points },
        DISCOVERY_NEIGHBOUR,
        params.min_z,
      );
      for (const o of outliers) {
        const frame = frames.get(o.id)!;
        await upsertCandidate(db, run.id, {
          kind: 'novel_scene',
          subjectId: o.id,
          frameId: o.id,
          sessionId: frame.session_id,
          score: o.robust_z,
          evidence: {
            model: params.model,
            neighbour: DISCOVERY_NEIGHBOUR,
            knn_distance: o.knn_distance,
            robust_z: o.robust_z,
            frame_index: frame.index,
            frames_compared: ids.length,
          },
        });
      }
      return {
        objects_weighed: disputed.length,
        ambiguous_class: ambiguous,
        frames_embedded: ids.length,
        novel_scene: outliers.length,
      };
    },

    /** Ends a discovery run: its summary and status, audited, on the jobs stream. */
    async finishDiscoveryRun(input: {
      runId: string;
      status: 'completed' | 'failed';
      summary?: DiscoverySummary;
      error?: string;
    }) {
      const run = await db.discoveryRun.update({
        where: { id: input.runId },
        data: {
          status: input.status,
          summary: (input.summary ?? {}) as Prisma.InputJsonValue,
          error: input.error ?? null,
          finishedAt: new Date(),
        },
      });
      await recordAudit(db, {
        actorId: null,
        action: `discovery.run.${input.status}`,
        subjectType: 'discovery_run',
        subjectId: run.id,
        detail: { summary: input.summary ?? null, error: input.error ?? null } as Prisma.InputJsonValue,
      });
      await deps.events.publish('jobs', `discovery.run.${input.status}`, discoveryRunOut(run));
    },
  };
}

export const discoveryRunOut = (r: {
  id: string;
  status: string;
  params: unknown;
  summary: unknown;
  error: string | null;
  workflowId: string | null;
  createdAt: Date;
  finishedAt: Date | null;
}) => ({
  run_id: r.id,
  status: r.status,
  params: r.params,
  summary: r.summary,
  error: r.error,
  workflow_id: r.workflowId,
  created_at: r.createdAt.toISOString(),
  finished_at: r.finishedAt?.toISOString() ?? null,
});
