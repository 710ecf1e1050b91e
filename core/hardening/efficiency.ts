/**
 * GPU-slot efficiency from the job records (docs/hardening.md): how much of a period the slot was
 * busy, with what, and the idle gaps between. Pure: the activity reads the spans.
 */

/** One piece of work that held the slot, from its start to its end (null: still running). */
export interface SlotSpan {
  kind: string;
  id: string;
  start: Date;
  end: Date | null;
}

export interface SlotEfficiency {
  from: string;
  to: string;
  period_seconds: number;
  busy_seconds: number;
  /** Busy share of the period, 0..1. */
  utilisation: number;
  idle_seconds: number;
  by_kind: Record<string, { jobs: number; busy_seconds: number }>;
  /** Time two spans held the slot at once: 0 on a single slot, unless the records disagree. */
  overlap_seconds: number;
  /** The longest idle gaps of at least `minGapSeconds`, longest first. */
  idle_gaps: Array<{ from: string; to: string; seconds: number }>;
  idle_gaps_counted: number;
}

const seconds = (ms: number) => Math.round(ms) / 1000;

export function slotEfficiency(
  spans: readonly SlotSpan[],
  period: { from: Date; to: Date; now: Date },
  opts: { minGapSeconds: number; topGaps: number },
): SlotEfficiency {
  const from = period.from.getTime();
  const to = period.to.getTime();
  const clipped = spans
    .map((s) => ({
      kind: s.kind,
      start: Math.max(from, s.start.getTime()),
      end: Math.min(to, (s.end ?? period.now).getTime()),
    }))
    .filter((s) => s.end > s.start)
    .sort((a, b) => a.start - b.start || a.end - b.end);
  const byKind: SlotEfficiency['by_kind'] = {};
  for (const s of clipped) {
    const k = (byKind[s.kind] ??= { jobs: 0, busy_seconds: 0 });
    k.jobs += 1;
    k.busy_seconds = seconds(k.busy_seconds * 1000 + (s.end - s.start));
  }
  // The union of the spans, and the gaps between its pieces.
  let busy = 0;
  let summed = 0;
  const gaps: Array<{ from: number; to: number }> = [];
  let cursor = from;
  let pieceEnd = -Infinity;
  for (const s of clipped) {
    summed += s.end - s.start;
    if (s.start > pieceEnd) {
      if (s.start > cursor) gaps.push({ from: cursor, to: s.start });
      pieceEnd = s.end;
      busy += s.end - s.start;
    } else if (s.end > pieceEnd) {
      busy += s.end - pieceEnd;
      pieceEnd = s.end;
    }
    cursor = Math.max(cursor, pieceEnd);
  }
  if (to > cursor) gaps.push({ from: cursor, to });
  const counted = gaps.filter((g) => g.to - g.from >= opts.minGapSeconds * 1000);
  const periodMs = to - from;
  return {
    from: period.from.toISOString(),
    to: period.to.toISOString(),
    period_seconds: seconds(periodMs),
    busy_seconds: seconds(busy),
    utilisation: periodMs > 0 ? busy / periodMs : 0,
    idle_seconds: seconds(periodMs - busy),
    by_kind: byKind,
    overlap_seconds: seconds(summed - busy),
    idle_gaps: counted
      .sort((a, b) => b.to - b.from - (a.to - a.from) || a.from - b.from)
      .slice(0, opts.topGaps)
      .map((g) => ({
        from: new Date(g.from).toISOString(),
        to: new Date(g.to).toISOString(),
        seconds: seconds(g.to - g.from),
      })),
    idle_gaps_counted: counted.length,
  };
}
