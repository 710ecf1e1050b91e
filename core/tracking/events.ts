import { InputError } from '../errors';

/**
 * Track events (docs/track-events.md): what one tracked object does over a span of its session's
 * frames. The vocabulary is closed so that slices can select on it (spec: export by track-event
 * presence); `other` with a note in `attrs` covers what it does not name.
 */
export const TRACK_EVENT_KINDS = [
  'lane_change',
  'cut_in',
  'cut_out',
  'braking',
  'stop',
  'turn_left',
  'turn_right',
  'u_turn',
  'crossing',
  'parked',
  'occluded',
  'other',
] as const;
export type TrackEventKind = (typeof TRACK_EVENT_KINDS)[number];

export const TRACK_EVENT_KIND_INFO: Record<TrackEventKind, string> = {
  lane_change: 'moves from one lane to a neighbouring one',
  cut_in: "enters the ego vehicle's lane ahead of it",
  cut_out: "leaves the ego vehicle's lane ahead of it",
  braking: 'decelerates markedly',
  stop: 'comes to a halt (traffic, a light, a sign)',
  turn_left: 'turns left at a junction or into a road',
  turn_right: 'turns right at a junction or into a road',
  u_turn: 'reverses its direction of travel',
  crossing: "crosses the ego vehicle's path (a pedestrian on a crossing, a vehicle at a junction)",
  parked: 'stands parked for the span',
  occluded: 'is hidden, wholly or mostly, by something else',
  other: 'anything else; say what in attrs',
};

/** Who wrote an event: a person through the API, or a machine producer. */
export const TRACK_EVENT_SOURCES = ['human', 'machine'] as const;

/**
 * Bounds of an event's `attrs`: a small flat-ish note, not a store for blobs. Depth counts the
 * object itself as level 1.
 */
export const EVENT_ATTRS_LIMITS = { maxKeys: 32, maxBytes: 4096, maxDepth: 3 } as const;

function depthOf(value: unknown): number {
  if (value === null || typeof value !== 'object') return 0;
  const children = Array.isArray(value) ? value : Object.values(value);
  return 1 + children.reduce<number>((d, c) => Math.max(d, depthOf(c)), 0);
}

/** Why `attrs` breaks the bounds, or null when it keeps them. */
export function eventAttrsProblem(attrs: Record<string, unknown>): string | null {
  const { maxKeys, maxBytes, maxDepth } = EVENT_ATTRS_LIMITS;
  if (Object.keys(attrs).length > maxKeys) return `at most ${maxKeys} keys`;
  if (Buffer.byteLength(JSON.stringify(attrs)) > maxBytes) return `at most ${maxBytes} bytes as JSON`;
  if (depthOf(attrs) > maxDepth) return `nested at most ${maxDepth} levels deep`;
  return null;
}

/** A frame as the span check reads it. */
export interface SpanFrame {
  id: string;
  sessionId: string;
  index: number;
}

export interface EventSpan {
  startFrameId: string;
  endFrameId: string;
  startIndex: number;
  endIndex: number;
}

/**
 * Checks an event's span against the frames found for its two ids: both must be frames of the
 * track's session, the start no later than the end. A frame of another session is refused like a
 * missing one, so the answer does not tell which sessions hold which frames.
 */
export function resolveEventSpan(
  sessionId: string,
  startFrameId: string,
  endFrameId: string,
  frames: readonly SpanFrame[],
  fieldPrefix = 'body',
): EventSpan {
  const byId = new Map(frames.filter((f) => f.sessionId === sessionId).map((f) => [f.id, f]));
  const start = byId.get(startFrameId);
  const end = byId.get(endFrameId);
  const errors = [
    ...(start
      ? []
      : [{ field: `${fieldPrefix}.start_frame_id`, message: "not a frame of the track's session" }]),
    ...(end ? [] : [{ field: `${fieldPrefix}.end_frame_id`, message: "not a frame of the track's session" }]),
  ];
  if (start && end && start.index > end.index)
    errors.push({
      field: `${fieldPrefix}.end_frame_id`,
      message: `frame ${end.index} comes before the start frame ${start.index}`,
    });
  if (errors.length)
    throw new InputError(`invalid span: ${errors.map((e) => `${e.field}: ${e.message}`).join('; ')}`, errors);
  return { startFrameId, endFrameId, startIndex: start!.index, endIndex: end!.index };
}
