import { LIGHTING_SQL, RARITY_BANDS, RARITY_SHARE, rarityBand } from '../../core/curation/slice';
import type { Db } from '../db';

const counted = <K extends string>(rows: Array<Record<K, string> & { n: bigint }>, key: K) =>
  Object.fromEntries(rows.map((r) => [r[key], Number(r.n)]));

/**
 * The corpus at a glance: sessions, frames, objects; objects per state, l1, class (the `top`
 * largest), rarity band, lighting and source; frames with a PII audit, redacted, hashed and
 * embedded (per model); saved slices. Rarity bands use the same per-class share as slices
 * (core/curation/slice.ts), so a band's count here is what a `rarity_bands` slice selects.
 */
export async function corpusSummary(db: Db, top: number) {
  const [sessions, frames, audited, redacted, hashed, objects, slices] = await Promise.all([
    db.session.count(),
    db.frame.count(),
    db.piiAudit.count(),
    db.frame.count({ where: { redactedUri: { not: null } } }),
    db.frame.count({ where: { phash: { not: null } } }),
    db.annoObject.count(),
    db.slice.count(),
  ]);
  const [byState, bySource, byClass, objectsByLighting, framesByLighting, embedded] = await Promise.all([
    db.$queryRaw<Array<{ state: string; n: bigint }>>`
      SELECT state, count(*) AS n FROM objects GROUP BY state ORDER BY state`,
    db.$queryRaw<Array<{ source: string; n: bigint }>>`
      SELECT source, count(*) AS n FROM objects GROUP BY source ORDER BY source`,
    db.$queryRaw<Array<{ class_name: string; l0: string; l1: string; n: bigint }>>`
      SELECT c.name AS class_name, c.l0, c.l1, count(*) AS n
        FROM objects o JOIN ontology_classes c ON c.id = o.class_id
       GROUP BY c.id ORDER BY n DESC, c.name`,
    db.$queryRawUnsafe<Array<{ lighting: string; n: bigint }>>(
      `SELECT ${LIGHTING_SQL} AS lighting, count(*) AS n
         FROM objects o JOIN frames f ON f.id = o.frame_id GROUP BY 1 ORDER BY 1`,
    ),
    db.$queryRawUnsafe<Array<{ lighting: string; n: bigint }>>(
      `SELECT ${LIGHTING_SQL} AS lighting, count(*) AS n FROM frames f GROUP BY 1 ORDER BY 1`,
    ),
    db.$queryRaw<Array<{ model: string; n: bigint }>>`
      SELECT model, count(*) AS n FROM frame_embeddings GROUP BY model ORDER BY model`,
  ]);

  const classes = byClass.map((c) => ({
    class_name: c.class_name,
    l0: c.l0,
    l1: c.l1,
    count: Number(c.n),
    share: objects ? Number(c.n) / objects : 0,
  }));
  const byL1 = new Map<string, number>();
  const bands = Object.fromEntries(RARITY_BANDS.map((b) => [b, { classes: 0, objects: 0 }]));
  for (const c of classes) {
    byL1.set(c.l1, (byL1.get(c.l1) ?? 0) + c.count);
    const band = bands[rarityBand(c.share)]!;
    band.classes++;
    band.objects += c.count;
  }
  return {
    sessions,
    frames: {
      total: frames,
      pii_audited: audited,
      redacted,
      hashed,
      embedded: counted(embedded, 'model'),
      by_lighting: counted(framesByLighting, 'lighting'),
    },
    objects: {
      total: objects,
      by_state: counted(byState, 'state'),
      by_l1: Object.fromEntries([...byL1].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))),
      by_class: classes.slice(0, top).map((c) => ({ ...c, band: rarityBand(c.share) })),
      classes_present: classes.length,
      by_rarity_band: bands,
      by_lighting: counted(objectsByLighting, 'lighting'),
      by_source: counted(bySource, 'source'),
    },
    rarity_share: RARITY_SHARE,
    slices,
  };
}
