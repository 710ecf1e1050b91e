import { createHash } from 'node:crypto';

/**
 * Gold sets (spec "What the service does" 6, Other records): a sealed, frozen list of objects from
 * human-verified frames. The rules that decide what may be sealed, and the content hash that makes
 * "sealed" checkable, live here; the store copies the objects into gold items in one transaction.
 */

/** Object states that mean "a human has decided about this object". */
const DECIDED_STATES = new Set(['accepted', 'rejected']);
/** Sources the store writes for machine proposals (spec Object: observed `source` values). */
const MACHINE_SOURCES = new Set([
  'fused',
  'auto_accept',
  'recall',
  'interpolated',
  'interp',
  'propagated',
  'relabel',
]);

export const isMachineSource = (source: string): boolean => MACHINE_SOURCES.has(source);

export interface FrameObjectState {
  id: string;
  source: string;
  state: string;
}

/**
 * Why a frame is not human-verified, or null when it is: every object on it carries a human
 * decision (accepted or rejected, by a human), and at least one object is accepted. A frame with an
 * object still in review, waiting for annotation, auto-accepted or merely submitted is not verified:
 * measuring against it would count the machine's own unreviewed output as truth.
 */
export function unverifiedReason(objects: readonly FrameObjectState[]): string | null {
  const open = objects.filter((o) => !DECIDED_STATES.has(o.state) || o.source !== 'human');
  if (open.length)
    return `${open.length} object${open.length === 1 ? '' : 's'} without a human decision (${[
      ...new Set(open.map((o) => `${o.source}/${o.state}`)),
    ].join(', ')})`;
  if (!objects.some((o) => o.state === 'accepted')) return 'no accepted object';
  return null;
}

export type GoldOrigin = 'confirmed' | 'drawn';

/** The earliest review's `before` snapshot of an object, when it has one. */
export interface FirstReview {
  before: { source?: unknown; class_id?: unknown; conf?: unknown; bbox?: unknown } | null;
}

/**
 * A gold object is a `confirmed` detection when its first review found it with a machine source
 * (the spec's review `before` snapshot keeps the prior source, conf and provenance), and `drawn`
 * when it was human from the start (created by a person, no machine proposal behind it).
 */
export function goldOrigin(first: FirstReview | null): {
  origin: GoldOrigin;
  proposed: { source: string; class_id: number | null; conf: number | null; bbox: number[] | null } | null;
} {
  const before = first?.before;
  if (before && typeof before.source === 'string' && isMachineSource(before.source))
    return {
      origin: 'confirmed',
      proposed: {
        source: before.source,
        class_id: typeof before.class_id === 'number' ? before.class_id : null,
        conf: typeof before.conf === 'number' ? before.conf : null,
        bbox:
          Array.isArray(before.bbox) &&
          before.bbox.length === 4 &&
          before.bbox.every((v) => typeof v === 'number')
            ? (before.bbox as number[])
            : null,
      },
    };
  return { origin: 'drawn', proposed: null };
}

export interface GoldItemContent {
  object_id: string;
  frame_id: string;
  class_id: number;
  bbox: readonly number[];
  rot_deg: number;
  polygons: readonly (readonly number[])[] | null;
  polyline: unknown;
}

/** Coordinates are frozen at micro-pixel precision: what the store round-trips exactly. */
const micro = (v: number): number => Math.round(v * 1e6) / 1e6;

/** An item with its coordinates at the precision it is frozen and hashed at. */
export function canonicalGoldItem(item: GoldItemContent): GoldItemContent {
  return {
    ...item,
    bbox: item.bbox.map(micro),
    rot_deg: micro(item.rot_deg),
    polygons: item.polygons?.map((ring) => ring.map(micro)) ?? null,
  };
}

/**
 * SHA-256 over the items in canonical form (sorted by object id, fixed key order), so the same
 * content always hashes the same and any change to a frozen item would show.
 */
export function goldContentHash(items: readonly GoldItemContent[]): string {
  const hash = createHash('sha256');
  for (const it of items
    .map(canonicalGoldItem)
    .sort((a, b) => (a.object_id < b.object_id ? -1 : a.object_id > b.object_id ? 1 : 0)))
    hash.update(
      JSON.stringify([
        it.object_id,
        it.frame_id,
        it.class_id,
        it.bbox,
        it.rot_deg,
        it.polygons,
        it.polyline ?? null,
      ]) + '\n',
    );
  return hash.digest('hex');
}

/** At most this many objects in one gold set: sealing and measuring stay one bounded request. */
export const GOLD_MAX_OBJECTS = 50_000;
