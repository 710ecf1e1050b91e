/**
 * A track's attribute timeline (docs/track-events.md): frame by frame, the object's class, state
 * and attributes, and the spans over which each of them holds one value. A reviewer reads where an
 * attribute flips (occluded on, off, on again) without stepping through the frames.
 */

/** The track's object on one frame. */
export interface TimelineFrame {
  frame_id: string;
  frame_index: number;
  ts_ms: number;
  object_id: string;
  class_name: string;
  state: string;
  attrs: Record<string, unknown>;
}

/** One value held over consecutive frames of the track (frames the track skips do not break it). */
export interface ValueSpan {
  value: unknown;
  start_frame_id: string;
  end_frame_id: string;
  start_frame_index: number;
  end_frame_index: number;
  frames: number;
}

export interface AttributeTimeline {
  frames: TimelineFrame[];
  class_spans: ValueSpan[];
  state_spans: ValueSpan[];
  /** Per attribute key found on any frame; a frame without the key holds `null` there. */
  attribute_spans: Record<string, ValueSpan[]>;
  /** Per attribute key, how often its value changes along the track. */
  changes: Record<string, number>;
}

/** Key order does not make two attribute values differ. */
function canonical(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : 1));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
}

/** Runs of equal values along frames already in order. */
export function valueSpans(
  frames: readonly TimelineFrame[],
  valueOf: (f: TimelineFrame) => unknown,
): ValueSpan[] {
  const spans: ValueSpan[] = [];
  let key: string | undefined;
  for (const f of frames) {
    const value = valueOf(f);
    const k = canonical(value);
    const last = spans.at(-1);
    if (last && k === key) {
      last.end_frame_id = f.frame_id;
      last.end_frame_index = f.frame_index;
      last.frames += 1;
    } else {
      spans.push({
        value,
        start_frame_id: f.frame_id,
        end_frame_id: f.frame_id,
        start_frame_index: f.frame_index,
        end_frame_index: f.frame_index,
        frames: 1,
      });
      key = k;
    }
  }
  return spans;
}

/** The timeline of a track's objects, ordered by frame index (ties by object id, so it is stable). */
export function attributeTimeline(objects: readonly TimelineFrame[]): AttributeTimeline {
  const frames = [...objects].sort(
    (a, b) =>
      a.frame_index - b.frame_index || (a.object_id < b.object_id ? -1 : a.object_id > b.object_id ? 1 : 0),
  );
  const keys = [...new Set(frames.flatMap((f) => Object.keys(f.attrs)))].sort();
  const attribute_spans = Object.fromEntries(
    keys.map((k) => [k, valueSpans(frames, (f) => (Object.hasOwn(f.attrs, k) ? f.attrs[k] : null))]),
  );
  return {
    frames,
    class_spans: valueSpans(frames, (f) => f.class_name),
    state_spans: valueSpans(frames, (f) => f.state),
    attribute_spans,
    changes: Object.fromEntries(keys.map((k) => [k, attribute_spans[k]!.length - 1])),
  };
}
