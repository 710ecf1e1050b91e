import { LIGHTING_SQL, type SlicePredicate } from '../../core/curation/slice';
import { materializeSlice } from '../curation/slices';
import { sliceQuery } from '../curation/slice-query';
import type { Db } from '../db';

/**
 * Facet counts of what a slice predicate selects (POST /api/explore/facets). Nothing here re-states
 * the predicate's SQL: the totals and the per-class and per-state counts are the curation
 * materialisation's own (`materializeSlice`), and every other facet is one GROUP BY over the same
 * compiled predicate (`sliceQuery`) with the same derived lighting (`LIGHTING_SQL`), so a facet's
 * count is what a slice adding that facet's value selects.
 */

const counted = <K extends string>(rows: Array<Record<K, string> & { n: bigint }>, key: K) =>
  Object.fromEntries(rows.map((r) => [r[key], Number(r.n)]));

export async function exploreFacets(db: Db, predicate: SlicePredicate, opts: { top: number }) {
  const q = sliceQuery(predicate);
  const grouped = <T>(select: string, join = '', tail = '') =>
    q.rows<T>(db, () => `SELECT ${select} FROM ${q.from}${join} WHERE ${q.where} ${tail}`);
  const [materialized, bySource, byLighting, bySession, objectTags, frameTags] = await Promise.all([
    materializeSlice(db, predicate, { limit: 1 }),
    grouped<{ source: string; n: bigint }>(
      'o.source, count(*) AS n',
      '',
      'GROUP BY o.source ORDER BY o.source',
    ),
    grouped<{ lighting: string; n: bigint }>(
      `${LIGHTING_SQL} AS lighting, count(*) AS n`,
      '',
      'GROUP BY 1 ORDER BY 1',
    ),
    q.rows<{ session_id: string; name: string; n: bigint }>(
      db,
      (param) => `SELECT f.session_id::text, s.name, count(*) AS n
                    FROM ${q.from} JOIN sessions s ON s.id = f.session_id
                   WHERE ${q.where}
                   GROUP BY f.session_id, s.name ORDER BY n DESC, f.session_id LIMIT ${param(opts.top)}::int`,
    ),
    grouped<{ tag: string; n: bigint }>(
      't.tag, count(*) AS n',
      ` JOIN explore_tags t ON t.target_kind = 'object' AND t.target_id = o.id`,
      'GROUP BY t.tag',
    ),
    grouped<{ tag: string; n: bigint; frames: bigint }>(
      't.tag, count(*) AS n, count(DISTINCT o.frame_id) AS frames',
      ` JOIN explore_tags t ON t.target_kind = 'frame' AND t.target_id = o.frame_id`,
      'GROUP BY t.tag',
    ),
  ]);
  const { counts, unmatchable } = materialized;
  const byL1 = new Map<string, number>();
  for (const c of counts.by_class) byL1.set(c.l1, (byL1.get(c.l1) ?? 0) + c.count);
  const tags = new Map<string, { tag: string; objects: number; frames: number; objects_on_frames: number }>();
  const tag = (name: string) => {
    let t = tags.get(name);
    if (!t) tags.set(name, (t = { tag: name, objects: 0, frames: 0, objects_on_frames: 0 }));
    return t;
  };
  for (const r of objectTags) tag(r.tag).objects = Number(r.n);
  for (const r of frameTags) {
    tag(r.tag).frames = Number(r.frames);
    tag(r.tag).objects_on_frames = Number(r.n);
  }
  return {
    predicate,
    objects: counts.objects,
    frames: counts.frames,
    sessions: counts.sessions,
    by_class: counts.by_class,
    by_state: counts.by_state,
    by_source: counted(bySource, 'source'),
    by_l1: Object.fromEntries([...byL1].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))),
    by_lighting: counted(byLighting, 'lighting'),
    by_session: bySession.map((s) => ({ session_id: s.session_id, name: s.name, count: Number(s.n) })),
    by_tag: [...tags.values()].sort(
      (a, b) =>
        b.objects + b.objects_on_frames - (a.objects + a.objects_on_frames) || (a.tag < b.tag ? -1 : 1),
    ),
    unmatchable,
  };
}
