import { CLASS_SHARE_SQL, rarityBand } from '../../core/curation/slice';
import type { Counts } from '../../core/export/datasheet';
import type { ExportTally } from '../../core/export/tally';
import type { SqlQuery } from './sql';

/**
 * What the tally of an export's pages cannot know by itself: each class's rarity band (its share
 * of the whole corpus), the sessions' names, and the model versions that labelled those sessions.
 */
export interface TallyContext {
  perRarityBand: Counts;
  sessions: Array<{ id: string; name: string; frames: number }>;
  /** `<path>:<model file@hash>` of the auto-label jobs that labelled these sessions. */
  modelVersions: string[];
}

export async function tallyContext(sql: SqlQuery, tally: ExportTally): Promise<TallyContext> {
  const sessionIds = Object.keys(tally.sessions);
  const [shares, names, models] = await Promise.all([
    sql<{ name: string; share: number }>(
      `SELECT c.name, s.share FROM (${CLASS_SHARE_SQL}) s JOIN ontology_classes c ON c.id = s.class_id
        WHERE c.name = ANY($1::text[])`,
      [Object.keys(tally.perClass)],
    ),
    sql<{ id: string; name: string }>(`SELECT id, name FROM sessions WHERE id = ANY($1::uuid[])`, [
      sessionIds,
    ]),
    sql<{ v: string }>(
      `SELECT DISTINCT e.key || ':' || e.value AS v FROM autolabel_jobs j, jsonb_each_text(j.paths) e
        WHERE j.session_id = ANY($1::uuid[]) ORDER BY 1`,
      [sessionIds],
    ),
  ]);
  const perRarityBand: Counts = {};
  for (const { name, share } of shares) {
    const band = rarityBand(share);
    perRarityBand[band] = (perRarityBand[band] ?? 0) + (tally.perClass[name] ?? 0);
  }
  const nameOf = new Map(names.map((n) => [n.id, n.name]));
  return {
    perRarityBand,
    sessions: sessionIds
      .map((id) => ({ id, name: nameOf.get(id) ?? '', frames: tally.sessions[id]!.frames }))
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : a.id < b.id ? -1 : 1)),
    modelVersions: models.map((m) => m.v),
  };
}
