import {
  CLASS_SHARE_SQL,
  LIGHTING_SQL,
  rarityBand,
  sliceFrom,
  sliceSql,
  type SlicePredicate,
} from '../../core/curation/slice';
import type { Counts } from '../../core/export/datasheet';
import { splitOf, type SplitSpec } from '../../core/export/splits';
import type { SqlQuery } from './sql';

/**
 * What the datasheet and the commit say about an export, measured over the slice in the
 * database with GROUP BY queries (never by holding the rows).
 */
export interface SliceAggregates {
  totals: { objects: number; frames: number; sessions: number };
  perClass: Counts;
  perL1: Counts;
  perLighting: Counts;
  perRarityBand: Counts;
  perState: Counts;
  perSource: Counts;
  perSplit: Record<string, { frames: number; objects: number }>;
  verification: { human_verified: number; auto_accepted: number; other: number };
  pii: { frames_audited: number; frames: number; faces: number; plates: number };
  sessions: Array<{ id: string; name: string; frames: number }>;
  /** `<path>:<model file@hash>` of the auto-label jobs that labelled these sessions. */
  modelVersions: string[];
}

const toCounts = (rows: Array<{ k: string | null; n: number }>): Counts =>
  Object.fromEntries(rows.map((r) => [r.k ?? 'unknown', r.n]));

export async function sliceAggregates(
  sql: SqlQuery,
  predicate: SlicePredicate,
  split: SplitSpec,
): Promise<SliceAggregates> {
  const slice = sliceSql(predicate, 1);
  const from = sliceFrom(slice);
  const where = slice.where;
  const p = slice.params;
  const grouped = (expr: string) =>
    sql<{ k: string | null; n: number }>(
      `SELECT ${expr} AS k, count(*)::int AS n FROM ${from} WHERE ${where} GROUP BY 1 ORDER BY 2 DESC`,
      p,
    );
  const [perClass, perL1, perState, perSource, classShares, perSession, lighting, pii] = await Promise.all([
    grouped('c.name'),
    grouped('c.l1'),
    grouped('o.state'),
    grouped('o.source'),
    sql<{ k: string; share: number; n: number }>(
      `SELECT c.name AS k, sh.share, count(*)::int AS n FROM ${from} JOIN (${CLASS_SHARE_SQL}) sh ON sh.class_id = o.class_id
        WHERE ${where} GROUP BY c.name, sh.share`,
      p,
    ),
    sql<{ id: string; name: string; frames: number; objects: number }>(
      `SELECT f.session_id AS id, s.name, count(DISTINCT o.frame_id)::int AS frames, count(*)::int AS objects
         FROM ${from} JOIN sessions s ON s.id = f.session_id WHERE ${where} GROUP BY f.session_id, s.name ORDER BY s.name, f.session_id`,
      p,
    ),
    sql<{ k: string; n: number }>(
      `SELECT k, count(*)::int AS n FROM (SELECT DISTINCT ON (f.id) ${LIGHTING_SQL} AS k FROM ${from} WHERE ${where}) x GROUP BY k`,
      p,
    ),
    sql<{ frames: number; audited: number; faces: number; plates: number }>(
      `SELECT count(*)::int AS frames, count(a.id)::int AS audited,
              COALESCE(sum(a.n_faces), 0)::int AS faces, COALESCE(sum(a.n_plates), 0)::int AS plates
         FROM (SELECT DISTINCT o.frame_id FROM ${from} WHERE ${where}) sel LEFT JOIN pii_audits a ON a.frame_id = sel.frame_id`,
      p,
    ),
  ]);
  const perRarityBand: Counts = {};
  for (const row of classShares) {
    const band = rarityBand(row.share);
    perRarityBand[band] = (perRarityBand[band] ?? 0) + row.n;
  }
  const perSplit: Record<string, { frames: number; objects: number }> = {};
  for (const s of perSession) {
    const name = splitOf(split, s.id);
    const entry = (perSplit[name] ??= { frames: 0, objects: 0 });
    entry.frames += s.frames;
    entry.objects += s.objects;
  }
  const states = toCounts(perState);
  const sources = toCounts(perSource);
  const objects = perSession.reduce((n, s) => n + s.objects, 0);
  const humanVerified = sources.human ?? 0;
  const autoAccepted = states.auto_accept ?? 0;
  const sessionIds = perSession.map((s) => s.id);
  const models = sessionIds.length
    ? await sql<{ v: string }>(
        `SELECT DISTINCT e.key || ':' || e.value AS v FROM autolabel_jobs j, jsonb_each_text(j.paths) e
          WHERE j.session_id = ANY($1::uuid[]) ORDER BY 1`,
        [sessionIds],
      )
    : [];
  const piiRow = pii[0] ?? { frames: 0, audited: 0, faces: 0, plates: 0 };
  return {
    totals: { objects, frames: piiRow.frames, sessions: perSession.length },
    perClass: toCounts(perClass),
    perL1: toCounts(perL1),
    perLighting: toCounts(lighting),
    perRarityBand,
    perState: states,
    perSource: sources,
    perSplit,
    verification: {
      human_verified: humanVerified,
      auto_accepted: autoAccepted,
      other: Math.max(0, objects - humanVerified - autoAccepted),
    },
    pii: {
      frames_audited: piiRow.audited,
      frames: piiRow.frames,
      faces: piiRow.faces,
      plates: piiRow.plates,
    },
    sessions: perSession.map((s) => ({ id: s.id, name: s.name, frames: s.frames })),
    modelVersions: models.map((m) => m.v),
  };
}
