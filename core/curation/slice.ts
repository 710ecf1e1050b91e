import { z } from 'zod';
import { OBJECT_STATES } from '../objects/states';

/**
 * A slice: a predicate over annotation objects (docs/datasets.md). It is compiled to one SQL
 * condition over `objects o`, `frames f` and `ontology_classes c` so that materialising, counting
 * and exporting a slice all select exactly the same rows, and the database does the filtering.
 *
 * Predicates whose data does not exist yet are accepted and match nothing, never ignored:
 * - `region` (frames carry no GPS position yet);
 * - `track_event: true` (no track events are recorded yet; `false` therefore matches every object).
 */

export const RARITY_BANDS = ['rare', 'uncommon', 'common'] as const;
export type RarityBand = (typeof RARITY_BANDS)[number];

/** A class whose share of the corpus's objects is under 1 % is rare; 10 % or more is common. */
export const RARITY_SHARE = { rare: 0.01, common: 0.1 } as const;

export function rarityBand(share: number): RarityBand {
  if (share < RARITY_SHARE.rare) return 'rare';
  if (share >= RARITY_SHARE.common) return 'common';
  return 'uncommon';
}

/** Frame context derived from the ingest exposure statistics: mean luma under 60 is dark, over 190 bright. */
export const LIGHTING_VALUES = ['dark', 'normal', 'bright', 'unknown'] as const;
export const LIGHTING_SQL = `CASE
  WHEN f.context->'exposure'->>'mean_luma' IS NULL THEN 'unknown'
  WHEN (f.context->'exposure'->>'mean_luma')::float8 < 60 THEN 'dark'
  WHEN (f.context->'exposure'->>'mean_luma')::float8 > 190 THEN 'bright'
  ELSE 'normal' END`;

const scalar = z.union([z.string().max(200), z.number(), z.boolean()]);
const CONTEXT_KEY = /^[a-z][a-z0-9_]{0,63}$/;

export const SlicePredicate = z.strictObject({
  /** Object states; omitted means every state. */
  states: z.array(z.enum(OBJECT_STATES)).min(1).max(OBJECT_STATES.length).optional(),
  /** Ontology class names; a class selects its descendants in the hierarchy too. */
  classes: z.array(z.string().min(1).max(64)).min(1).max(200).optional(),
  /** Class groups by their l1 value (e.g. `vru`). */
  l1: z.array(z.string().min(1).max(64)).min(1).max(20).optional(),
  sources: z.array(z.string().min(1).max(16)).min(1).max(20).optional(),
  session_ids: z.array(z.uuid()).min(1).max(1000).optional(),
  /** Sessions left out; an export adds those whose consent blocks it (docs/consent.md). */
  exclude_session_ids: z.array(z.uuid()).min(1).max(100_000).optional(),
  min_conf: z.number().min(0).max(1).optional(),
  /**
   * Frame context: `lighting` (derived, one of LIGHTING_VALUES) or a top-level key of the frame's
   * recorded context, each to a value or a list of values (any of them matches).
   */
  context: z
    .record(
      z.string().regex(CONTEXT_KEY, 'context keys are lower_snake_case'),
      z.union([scalar, z.array(scalar).min(1).max(50)]),
    )
    .optional(),
  rarity_bands: z.array(z.enum(RARITY_BANDS)).min(1).max(3).optional(),
  /** A geographic box [min_lon, min_lat, max_lon, max_lat]; frames carry no GPS yet, so it matches nothing. */
  region: z
    .strictObject({
      bbox: z.tuple([
        z.number().min(-180).max(180),
        z.number().min(-90).max(90),
        z.number().min(-180).max(180),
        z.number().min(-90).max(90),
      ]),
    })
    .optional(),
  /** Objects whose track has (true) or has no (false) track event; none are recorded yet. */
  track_event: z.boolean().optional(),
});
export type SlicePredicate = z.infer<typeof SlicePredicate>;

/** What an export selects when the caller names no slice: the trusted objects. */
export const DEFAULT_EXPORT_PREDICATE: SlicePredicate = { states: ['accepted', 'auto_accept'] };

export interface SliceSql {
  /** A boolean SQL condition over `o`, `f` and `c`, with `$n` placeholders. */
  where: string;
  params: unknown[];
  /** The condition reads `class_share` (rarity): the caller must join it as `cs` (see CLASS_SHARE_SQL). */
  needsClassShare: boolean;
}

/** Per-class share of every object in the corpus, joined as `cs` on `cs.class_id = o.class_id`. */
export const CLASS_SHARE_SQL = `SELECT class_id, count(*)::float8 / sum(count(*)) OVER () AS share FROM objects GROUP BY class_id`;

/**
 * Compiles a predicate; `firstParam` numbers its placeholders after the caller's own. Values always
 * travel as parameters; only validated keys (CONTEXT_KEY) are spliced, as JSON-path literals.
 */
export function sliceSql(predicate: SlicePredicate, firstParam = 1): SliceSql {
  const parts: string[] = [];
  const params: unknown[] = [];
  const param = (value: unknown): string => {
    params.push(value);
    return `$${firstParam + params.length - 1}`;
  };
  if (predicate.states) parts.push(`o.state = ANY(${param(predicate.states)}::text[])`);
  if (predicate.classes)
    parts.push(
      `o.class_id IN (WITH RECURSIVE d AS (SELECT id FROM ontology_classes WHERE name = ANY(${param(predicate.classes)}::text[]) UNION SELECT k.id FROM ontology_classes k JOIN d ON k.parent_id = d.id) SELECT id FROM d)`,
    );
  if (predicate.l1) parts.push(`c.l1 = ANY(${param(predicate.l1)}::text[])`);
  if (predicate.sources) parts.push(`o.source = ANY(${param(predicate.sources)}::text[])`);
  if (predicate.session_ids) parts.push(`f.session_id = ANY(${param(predicate.session_ids)}::uuid[])`);
  if (predicate.exclude_session_ids)
    parts.push(`f.session_id <> ALL(${param(predicate.exclude_session_ids)}::uuid[])`);
  if (predicate.min_conf !== undefined) parts.push(`o.conf >= ${param(predicate.min_conf)}::float8`);
  for (const [key, value] of Object.entries(predicate.context ?? {})) {
    const values = (Array.isArray(value) ? value : [value]).map(String);
    const field = key === 'lighting' ? `(${LIGHTING_SQL})` : `f.context->>'${key}'`;
    parts.push(`${field} = ANY(${param(values)}::text[])`);
  }
  let needsClassShare = false;
  if (predicate.rarity_bands) {
    needsClassShare = true;
    const bands = predicate.rarity_bands.map((band) =>
      band === 'rare'
        ? `cs.share < ${RARITY_SHARE.rare}`
        : band === 'common'
          ? `cs.share >= ${RARITY_SHARE.common}`
          : `(cs.share >= ${RARITY_SHARE.rare} AND cs.share < ${RARITY_SHARE.common})`,
    );
    parts.push(`(${bands.join(' OR ')})`);
  }
  if (predicate.region) parts.push('FALSE');
  if (predicate.track_event === true) parts.push('FALSE');
  return { where: parts.length ? parts.join(' AND ') : 'TRUE', params, needsClassShare };
}

const RARITY_JOIN = ` JOIN (${CLASS_SHARE_SQL}) cs ON cs.class_id = o.class_id`;

/** The objects side of a slice query (objects and classes), for a subquery under an outer `frames f`. */
export const sliceObjectFrom = (sql: Pick<SliceSql, 'needsClassShare'>): string =>
  `objects o JOIN ontology_classes c ON c.id = o.class_id${sql.needsClassShare ? RARITY_JOIN : ''}`;

/** The FROM clause every slice query uses: objects, their frames and classes. */
export const sliceFrom = (sql: Pick<SliceSql, 'needsClassShare'>): string =>
  `objects o JOIN frames f ON f.id = o.frame_id JOIN ontology_classes c ON c.id = o.class_id${sql.needsClassShare ? RARITY_JOIN : ''}`;

/** Parts of a predicate that cannot match yet, so a client can show why a slice is empty. */
export function unmatchablePredicates(
  predicate: SlicePredicate,
): Array<{ predicate: string; reason: string }> {
  const out: Array<{ predicate: string; reason: string }> = [];
  if (predicate.region)
    out.push({ predicate: 'region', reason: 'frames carry no GPS position yet; a region matches nothing' });
  if (predicate.track_event === true)
    out.push({
      predicate: 'track_event',
      reason: 'no track events are recorded yet; track_event=true matches nothing',
    });
  return out;
}
