import type { Span } from './correlate';

/** Who made a timeline event: a person, the inertial rules (events/auto), the scene rules (events/scene). */
export const TIMELINE_SOURCES = ['human', 'inertial', 'scene'] as const;
export type TimelineSource = (typeof TIMELINE_SOURCES)[number];

/** A frame as the timeline places it. */
export interface TimelineFrame {
  index: number;
  timestampMs: number;
}

/** First index whose time is past `t` (at or past it when `inclusive`); frames sorted by time. */
function firstAfter(frames: readonly TimelineFrame[], t: number, inclusive: boolean): number {
  let lo = 0;
  let hi = frames.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    const ts = frames[mid]!.timestampMs;
    if (ts < t || (!inclusive && ts === t)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * The frames a span shows, by index: those whose time lies inside it; null when none does (a point
 * event between two frames, an event before the camera started). `frames` sorted by time.
 */
export function frameRange(
  frames: readonly TimelineFrame[],
  span: Span,
): { first_index: number; last_index: number; frames: number } | null {
  const from = firstAfter(frames, span.tStartMs, true);
  const to = firstAfter(frames, span.tEndMs ?? span.tStartMs, false) - 1;
  if (to < from) return null;
  return { first_index: frames[from]!.index, last_index: frames[to]!.index, frames: to - from + 1 };
}

/** Whether a span meets the window [from, to] (either end open). */
export const inWindow = (span: Span, from: number | undefined, to: number | undefined): boolean =>
  (to === undefined || span.tStartMs <= to) && (from === undefined || (span.tEndMs ?? span.tStartMs) >= from);
