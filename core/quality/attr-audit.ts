/**
 * The attribute audit of a session (GET /api/quality/attr-audit/{session_id}, docs/quality-measure.md):
 * for each class and each attribute key its objects use,
 *
 * - `completeness`: the share of the class's objects that have a value for the key (a missing key
 *   and a null value both count as no value);
 * - `values`: how often each value occurs (values compared as canonical JSON, so `{"a":1,"b":2}`
 *   equals `{"b":2,"a":1}`), most frequent first, at most TOP_VALUES listed;
 * - `track_conflicts`: tracks whose objects of the class give the key two values or more. The
 *   track's value is its most frequent one (a tie goes to the value of its earliest frame); the
 *   objects holding another value are the conflicts;
 * - `class_deviants`: when one value dominates the class — held by at least DOMINANT_SHARE (80%) of
 *   the objects having the key, over at least MIN_DEVIANT_SAMPLE (5) of them — the objects holding
 *   another value. Below that the attribute simply varies (a colour, an occlusion level) and nothing
 *   is flagged.
 *
 * Object id lists stop at MAX_LISTED; the counts beside them are complete.
 */

export const TOP_VALUES = 20;
export const DOMINANT_SHARE = 0.8;
export const MIN_DEVIANT_SAMPLE = 5;
export const MAX_LISTED = 100;

export interface AttrObject {
  id: string;
  class_name: string;
  track_id: string | null;
  frame_index: number;
  attrs: unknown;
}

export interface AttrKeyAudit {
  present: number;
  completeness: number;
  distinct: number;
  values: Array<{ value: unknown; count: number }>;
  majority: { value: unknown; share: number } | null;
  track_conflicts: { tracks: number; objects: number; object_ids: string[] };
  class_deviants: { objects: number; object_ids: string[] };
}

export interface AttrClassAudit {
  class_name: string;
  objects: number;
  keys: Record<string, AttrKeyAudit>;
}

/** JSON with object keys sorted, so equal values compare equal as text. */
export function canonicalJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`;
  if (v !== null && typeof v === 'object') {
    const o = v as Record<string, unknown>;
    return `{${Object.keys(o)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson(o[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(v) ?? 'null';
}

const attrsOf = (v: unknown): Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};

const compareText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

interface Held {
  o: AttrObject;
  text: string;
  value: unknown;
}

/** The most frequent value; a tie goes to `tieBreak`'s smallest. */
function modeOf(held: readonly Held[], tieBreak: (h: Held) => number | string): string {
  const counts = new Map<string, { n: number; first: number | string }>();
  for (const h of held) {
    const c = counts.get(h.text);
    const key = tieBreak(h);
    if (!c) counts.set(h.text, { n: 1, first: key });
    else {
      c.n++;
      if (key < c.first) c.first = key;
    }
  }
  return [...counts.entries()].sort(
    ([ta, a], [tb, b]) => b.n - a.n || (a.first < b.first ? -1 : a.first > b.first ? 1 : compareText(ta, tb)),
  )[0]![0];
}

function auditKey(objects: readonly AttrObject[], key: string): AttrKeyAudit {
  const held: Held[] = [];
  for (const o of objects) {
    const a = attrsOf(o.attrs);
    if (!Object.hasOwn(a, key) || a[key] === null || a[key] === undefined) continue;
    held.push({ o, text: canonicalJson(a[key]), value: a[key] });
  }
  const counts = new Map<string, { value: unknown; count: number }>();
  for (const h of held) {
    const c = counts.get(h.text);
    if (c) c.count++;
    else counts.set(h.text, { value: h.value, count: 1 });
  }
  const ranked = [...counts.entries()].sort(([ta, a], [tb, b]) => b.count - a.count || compareText(ta, tb));
  const top = ranked[0];
  const majority = top ? { value: top[1].value, share: top[1].count / held.length } : null;

  const byTrack = new Map<string, Held[]>();
  for (const h of held) {
    if (h.o.track_id === null) continue;
    const list = byTrack.get(h.o.track_id);
    if (list) list.push(h);
    else byTrack.set(h.o.track_id, [h]);
  }
  let conflictTracks = 0;
  const conflicts: string[] = [];
  for (const [, list] of [...byTrack.entries()].sort(([a], [b]) => compareText(a, b))) {
    if (new Set(list.map((h) => h.text)).size < 2) continue;
    conflictTracks++;
    const trackValue = modeOf(list, (h) => h.o.frame_index);
    for (const h of [...list].sort(
      (a, b) => a.o.frame_index - b.o.frame_index || compareText(a.o.id, b.o.id),
    ))
      if (h.text !== trackValue) conflicts.push(h.o.id);
  }

  const deviants =
    top && held.length >= MIN_DEVIANT_SAMPLE && majority!.share >= DOMINANT_SHARE
      ? held
          .filter((h) => h.text !== top[0])
          .map((h) => h.o.id)
          .sort(compareText)
      : [];
  return {
    present: held.length,
    completeness: objects.length ? held.length / objects.length : 0,
    distinct: counts.size,
    values: ranked.slice(0, TOP_VALUES).map(([, v]) => v),
    majority,
    track_conflicts: {
      tracks: conflictTracks,
      objects: conflicts.length,
      object_ids: conflicts.slice(0, MAX_LISTED),
    },
    class_deviants: { objects: deviants.length, object_ids: deviants.slice(0, MAX_LISTED) },
  };
}

/** The audit of a session's objects, classes and keys in name order. */
export function attrAudit(objects: readonly AttrObject[]): AttrClassAudit[] {
  const byClass = new Map<string, AttrObject[]>();
  for (const o of objects) {
    const list = byClass.get(o.class_name);
    if (list) list.push(o);
    else byClass.set(o.class_name, [o]);
  }
  return [...byClass.entries()]
    .sort(([a], [b]) => compareText(a, b))
    .map(([class_name, list]) => {
      const keys = new Set<string>();
      for (const o of list) for (const k of Object.keys(attrsOf(o.attrs))) keys.add(k);
      return {
        class_name,
        objects: list.length,
        keys: Object.fromEntries([...keys].sort(compareText).map((k) => [k, auditKey(list, k)])),
      };
    });
}
