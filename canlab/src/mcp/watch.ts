/**
 * Live-watch events: the changes of watched ids (a payload that differs from the id's previous
 * one) and of watched signals (a decoded value that differs from the previous one), after a cursor.
 *
 * The cursor is a capture time in seconds: events strictly after it are returned, and the answer
 * carries the cursor to pass next time. The watch list travels with each call instead of living in
 * the server, so any session (or a reconnecting client) reads the same events. When `limit` cuts the
 * list, it cuts between timestamps, so no event sharing the next cursor's time is skipped.
 */
import { formatId } from '../analysis/bits';
import type { DecodedSignal } from '../dbc/codec';
import type { CanFrame } from '../frame';
import { hexBytes } from './common';

export type WatchEvent =
  | {
      kind: 'frame';
      timestamp: number;
      id: string;
      data: string;
      previous: string | null;
      changedBytes: number[];
    }
  | {
      kind: 'signal';
      timestamp: number;
      id: string;
      signal: string;
      value: number;
      previous: number | null;
      unit: string;
      label?: string;
    };

export interface DecodedRow {
  timestamp: number;
  /** `0x123` style key of the frame's id. */
  id: string;
  signals: DecodedSignal[];
}

export interface WatchQuery {
  /** Id keys (`0x123`) whose payload changes are reported. */
  ids: ReadonlySet<string>;
  /** Signal selectors: a name (on any id) or `0x123:Name`. */
  signals: readonly string[];
  cursor?: number;
  limit: number;
}

export interface WatchResult {
  events: WatchEvent[];
  /** Pass back as `cursor` to read what follows. */
  cursor: number | null;
  /** More events follow the returned cursor already. */
  more: boolean;
}

function frameEvents(frames: readonly CanFrame[], ids: ReadonlySet<string>): WatchEvent[] {
  const previous = new Map<string, Uint8Array>();
  const out: WatchEvent[] = [];
  for (const f of frames) {
    if (f.error || f.remote) continue;
    const id = formatId(f.id, f.extended);
    if (!ids.has(id)) continue;
    const prev = previous.get(id);
    previous.set(id, f.data);
    const changedBytes: number[] = [];
    const n = Math.max(f.data.length, prev?.length ?? 0);
    for (let i = 0; i < n; i++) if (!prev || prev[i] !== f.data[i]) changedBytes.push(i);
    if (prev && changedBytes.length === 0) continue;
    out.push({
      kind: 'frame',
      timestamp: f.timestamp,
      id,
      data: hexBytes(f.data),
      previous: prev ? hexBytes(prev) : null,
      changedBytes,
    });
  }
  return out;
}

function signalEvents(rows: readonly DecodedRow[], selectors: readonly string[]): WatchEvent[] {
  const watched = (id: string, name: string): boolean =>
    selectors.some((s) => s === name || s.toLowerCase() === `${id}:${name}`.toLowerCase());
  const previous = new Map<string, number>();
  const out: WatchEvent[] = [];
  for (const row of rows) {
    for (const s of row.signals) {
      if (!watched(row.id, s.name)) continue;
      const key = `${row.id}:${s.name}`;
      const prev = previous.get(key);
      previous.set(key, s.value);
      if (prev === s.value) continue;
      out.push({
        kind: 'signal',
        timestamp: row.timestamp,
        id: row.id,
        signal: s.name,
        value: s.value,
        previous: prev ?? null,
        unit: s.unit,
        ...(s.label === undefined ? {} : { label: s.label }),
      });
    }
  }
  return out;
}

/** Events after the cursor, oldest first. `newest` is the newest frame time (the cursor when nothing is new). */
export function watchEvents(
  frames: readonly CanFrame[],
  rows: readonly DecodedRow[],
  query: WatchQuery,
  newest: number | undefined,
): WatchResult {
  const after = query.cursor ?? -Infinity;
  const all = [...frameEvents(frames, query.ids), ...signalEvents(rows, query.signals)]
    .filter((e) => e.timestamp > after)
    .sort((a, b) => a.timestamp - b.timestamp);
  const fallback = newest ?? query.cursor ?? null;
  if (all.length <= query.limit)
    return {
      events: all,
      cursor: fallback === null ? null : Math.max(fallback, query.cursor ?? -Infinity),
      more: false,
    };
  let cut = query.limit;
  const boundary = all[cut]!.timestamp;
  while (cut > 0 && all[cut - 1]!.timestamp === boundary) cut--;
  // A single timestamp with more events than the limit: return them all rather than none.
  if (cut === 0) while (cut < all.length && all[cut]!.timestamp === boundary) cut++;
  const events = all.slice(0, cut);
  return { events, cursor: events[events.length - 1]!.timestamp, more: cut < all.length };
}
