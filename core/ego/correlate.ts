/**
 * Time spans of timeline and driving events (docs/ego-state.md): overlaps, the driving event a
 * timeline event is tied to, and which detected events are already kept.
 */

/** A span on the frames' clock; a point event has no end. */
export interface Span {
  tStartMs: number;
  tEndMs: number | null;
}

const endOf = (s: Span) => s.tEndMs ?? s.tStartMs;

/** How long two spans share (0 when they only touch or a point lies inside); null when apart. */
export function overlapMs(a: Span, b: Span): number | null {
  const shared = Math.min(endOf(a), endOf(b)) - Math.max(a.tStartMs, b.tStartMs);
  return shared >= 0 ? shared : null;
}

export interface TimelineSpan extends Span {
  id: string;
  drivingEventId: string | null;
}

export interface DrivingSpan extends Span {
  id: string;
  state: string;
}

export interface CorrelateOptions {
  /** Each timeline event is widened by this much on both sides before it is compared (ms). */
  toleranceMs: number;
  /** Also re-tie events that are tied already (otherwise they are left as they are). */
  replace: boolean;
}

export interface Correlation {
  eventId: string;
  drivingEventId: string;
  /** Overlap of the widened timeline event with the driving event (ms). */
  overlapMs: number;
  previous: string | null;
}

/**
 * Ties each timeline event to the driving event it overlaps most (ties: the nearer start, then the
 * smaller id). Rejected driving events are not candidates: a reviewer said they did not happen.
 */
export function correlateEvents(
  events: readonly TimelineSpan[],
  driving: readonly DrivingSpan[],
  opts: CorrelateOptions,
): { tied: Correlation[]; kept: string[]; unmatched: string[] } {
  const candidates = driving.filter((d) => d.state !== 'rejected');
  const tied: Correlation[] = [];
  const kept: string[] = [];
  const unmatched: string[] = [];
  for (const e of events) {
    if (e.drivingEventId && !opts.replace) {
      kept.push(e.id);
      continue;
    }
    const widened = { tStartMs: e.tStartMs - opts.toleranceMs, tEndMs: endOf(e) + opts.toleranceMs };
    const best = candidates
      .map((d) => ({ d, overlap: overlapMs(widened, d) }))
      .filter((c): c is { d: DrivingSpan; overlap: number } => c.overlap !== null)
      .sort(
        (x, y) =>
          y.overlap - x.overlap ||
          Math.abs(x.d.tStartMs - e.tStartMs) - Math.abs(y.d.tStartMs - e.tStartMs) ||
          x.d.id.localeCompare(y.d.id),
      )[0];
    if (!best) unmatched.push(e.id);
    else
      tied.push({
        eventId: e.id,
        drivingEventId: best.d.id,
        overlapMs: best.overlap,
        previous: e.drivingEventId,
      });
  }
  return { tied, kept, unmatched };
}

/**
 * A detected event is kept already when a kept event of the same kind overlaps it: running the
 * detector again (or with other thresholds) does not add a second event for the same moment. The
 * detectors never yield two overlapping events of one kind, so the detected need no check among
 * themselves.
 */
export function partitionDetected<
  D extends Span & { kind: string },
  K extends Span & { kind: string; id: string },
>(
  detected: readonly D[],
  kept: readonly K[],
): { fresh: D[]; existing: Array<{ detected: D; eventId: string }> } {
  const fresh: D[] = [];
  const existing: Array<{ detected: D; eventId: string }> = [];
  for (const d of detected) {
    const match = kept.find((k) => k.kind === d.kind && overlapMs(k, d) !== null);
    if (match) existing.push({ detected: d, eventId: match.id });
    else fresh.push(d);
  }
  return { fresh, existing };
}
