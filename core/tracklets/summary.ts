import { normaliseSource } from '../objects/sources';
import { attributeTimeline, type TimelineFrame } from '../tracking/timeline';
import { inFrameOrder, round } from './points';

/** A track's object as the summary reads it. */
export interface TrackletObject extends TimelineFrame {
  source: string;
  conf: number | null;
  keyframe: boolean;
}

const countBy = <T>(xs: readonly T[], key: (x: T) => string): Record<string, number> => {
  const out: Record<string, number> = {};
  for (const x of xs) out[key(x)] = (out[key(x)] ?? 0) + 1;
  return Object.fromEntries(Object.entries(out).sort(([a], [b]) => (a < b ? -1 : 1)));
};

/**
 * What a track holds (docs/tracklets.md): its span, keyframes, sources (canonical spellings; an
 * unknown one is counted as written), states, mean confidence (objects without one — a person's —
 * are left out) and the attribute timeline's spans.
 */
export function summariseTracklet(objects: readonly TrackletObject[]) {
  const ordered = inFrameOrder(objects);
  const first = ordered[0];
  const last = ordered.at(-1);
  const confs = ordered.flatMap((o) => (o.conf === null ? [] : [o.conf]));
  const { frames: _frames, ...timeline } = attributeTimeline(ordered);
  return {
    objects: ordered.length,
    first_frame_id: first?.frame_id ?? null,
    last_frame_id: last?.frame_id ?? null,
    first_frame_index: first?.frame_index ?? null,
    last_frame_index: last?.frame_index ?? null,
    span_frames: first && last ? last.frame_index - first.frame_index + 1 : 0,
    duration_ms: first && last ? last.ts_ms - first.ts_ms : 0,
    classes: countBy(ordered, (o) => o.class_name),
    keyframes: ordered
      .filter((o) => o.keyframe)
      .map((o) => ({ object_id: o.object_id, frame_id: o.frame_id, frame_index: o.frame_index })),
    sources: countBy(ordered, (o) => normaliseSource(o.source) ?? o.source),
    states: countBy(ordered, (o) => o.state),
    mean_conf: confs.length ? round(confs.reduce((s, c) => s + c, 0) / confs.length, 4) : null,
    conf_objects: confs.length,
    attribute_timeline: timeline,
  };
}

/** One track as the corpus statistics read it. */
export interface TrackRow {
  class_name: string | null;
  tracker_version: string;
  objects: number;
  keyframes: number;
}

/** Track lengths (objects linked) are counted in these bins: [from, to] inclusive, to null = open. */
export const LENGTH_BINS: ReadonlyArray<readonly [number, number | null]> = [
  [0, 0],
  [1, 1],
  [2, 4],
  [5, 9],
  [10, 29],
  [30, 99],
  [100, null],
];

const quantile = (sorted: readonly number[], q: number): number | null => {
  if (!sorted.length) return null;
  const pos = (sorted.length - 1) * q;
  const lo = Math.floor(pos);
  return round(sorted[lo]! + (sorted[Math.ceil(pos)]! - sorted[lo]!) * (pos - lo));
};

function lengths(rows: readonly TrackRow[]) {
  const sorted = rows.map((r) => r.objects).sort((a, b) => a - b);
  const objects = sorted.reduce((s, n) => s + n, 0);
  return {
    objects,
    mean: sorted.length ? round(objects / sorted.length) : null,
    min: sorted[0] ?? null,
    p50: quantile(sorted, 0.5),
    p90: quantile(sorted, 0.9),
    max: sorted.at(-1) ?? null,
  };
}

const group = (rows: readonly TrackRow[], key: (r: TrackRow) => string) => {
  const by = new Map<string, TrackRow[]>();
  for (const r of rows) by.set(key(r), [...(by.get(key(r)) ?? []), r]);
  return Object.fromEntries(
    [...by]
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([k, rs]) => {
        const l = lengths(rs);
        return [k, { tracks: rs.length, objects: l.objects, mean_length: l.mean }];
      }),
  );
};

/** Corpus statistics of tracks: lengths and their distribution, per class and tracker, keyframe coverage. */
export function trackletStats(rows: readonly TrackRow[]) {
  const keyed = rows.filter((r) => r.keyframes > 0);
  const keyframes = rows.reduce((s, r) => s + r.keyframes, 0);
  const { objects, ...length } = lengths(rows);
  return {
    tracks: rows.length,
    objects,
    length,
    length_distribution: LENGTH_BINS.map(([from, to]) => ({
      from,
      to,
      tracks: rows.filter((r) => r.objects >= from && (to === null || r.objects <= to)).length,
    })),
    per_class: group(rows, (r) => r.class_name ?? 'unknown'),
    per_tracker_version: group(rows, (r) => r.tracker_version),
    keyframes: {
      total: keyframes,
      tracks_with_keyframes: keyed.length,
      track_coverage: rows.length ? round(keyed.length / rows.length) : null,
      object_share: objects ? round(keyframes / objects, 4) : null,
    },
  };
}
