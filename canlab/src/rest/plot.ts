/**
 * Time series for the window's plot: one signal decoded over the whole capture (through the DBC
 * codec), then cut to the visible time range and reduced per pixel column so that a million-frame
 * capture plots as quickly as a short one.
 */
import { compileDecoder } from '../dbc/codec';
import type { DbcDatabase } from '../dbc/model';
import type { CanFrame } from '../frame';

/** A signal's samples in time order: `t` in the capture's time base (seconds), `v` physical values. */
export interface Series {
  t: Float64Array;
  v: Float64Array;
}

/** The samples to draw for one view: at most four per pixel column, in time order. */
export interface DecimatedSeries {
  t: number[];
  v: number[];
  /** Samples inside [from, to] before reduction. */
  inView: number;
  /** Whether any column held more samples than it kept. */
  decimated: boolean;
}

/**
 * Every value of `signalName` in `frames`, decoded with `db`, a database of the one message that
 * holds the signal. Frames of other ids, error and remote frames, frames too short for the signal,
 * frames whose multiplexer selects another group and values that are not finite numbers (a float
 * signal's NaN) give no sample. Samples are sorted by time: a capture merged from several channels
 * need not be.
 */
export function decodeSeries(frames: readonly CanFrame[], db: DbcDatabase, signalName: string): Series {
  const message = db.messages[0];
  if (db.messages.length !== 1 || message === undefined)
    throw new RangeError('decodeSeries decodes with a database of exactly one message');
  // Without multiplexing the other signals of the message do not matter: decode only this one.
  const multiplexed = message.signals.some(
    (s) => s.isMultiplexer || s.multiplexerValue !== undefined || s.extendedMultiplexing !== undefined,
  );
  const decode = compileDecoder(
    multiplexed
      ? db
      : { ...db, messages: [{ ...message, signals: message.signals.filter((s) => s.name === signalName) }] },
  );
  // Sized for every frame, cut to the samples found: no growing arrays over a million frames.
  const t = new Float64Array(frames.length);
  const v = new Float64Array(frames.length);
  let n = 0;
  let ordered = true;
  for (const f of frames) {
    if (f.id !== message.id || f.extended !== message.extended || f.error || f.remote) continue;
    const decoded = decode(f.id, f.extended, f.data);
    const signal = decoded?.signals.find((s) => s.name === signalName);
    if (signal === undefined || !Number.isFinite(signal.value)) continue;
    if (n > 0 && f.timestamp < t[n - 1]!) ordered = false;
    t[n] = f.timestamp;
    v[n] = signal.value;
    n++;
  }
  if (ordered) return { t: t.slice(0, n), v: v.slice(0, n) };
  const order = Array.from({ length: n }, (_, i) => i).sort((a, b) => t[a]! - t[b]! || a - b);
  return { t: Float64Array.from(order, (i) => t[i]!), v: Float64Array.from(order, (i) => v[i]!) };
}

/** First index whose time is >= `time` (`strict`: > `time`). */
function bound(t: Float64Array, time: number, strict: boolean): number {
  let lo = 0;
  let hi = t.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (strict ? t[mid]! <= time : t[mid]! < time) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * The samples of `series` needed to draw [from, to] on `columns` pixel columns: per column its
 * first, lowest, highest and last sample (M4 aggregation, Jugel et al., VLDB 2014), which draws the
 * same pixels as the full polyline; a column with four samples or fewer keeps them all. The sample
 * just before `from` and just after `to` come along so the line runs to the plot's edges.
 */
export function decimate(series: Series, from: number, to: number, columns: number): DecimatedSeries {
  const { t, v } = series;
  const lo = bound(t, from, false);
  const hi = bound(t, to, true);
  const out: DecimatedSeries = { t: [], v: [], inView: hi - lo, decimated: false };
  const push = (i: number): void => {
    out.t.push(t[i]!);
    out.v.push(v[i]!);
  };
  if (lo > 0) push(lo - 1);
  const perColumn = columns / (to - from);
  let column = -1;
  let first = 0;
  let last = 0;
  let min = 0;
  let max = 0;
  const flush = (): void => {
    if (column < 0) return;
    // Indices are kept in time order so the polyline never runs backwards inside a column.
    const keep = [...new Set([first, min, max, last])].sort((a, b) => a - b);
    if (last - first + 1 > keep.length) out.decimated = true;
    for (const i of keep) push(i);
  };
  for (let i = lo; i < hi; i++) {
    const c = Math.min(columns - 1, Math.floor((t[i]! - from) * perColumn));
    if (c !== column) {
      flush();
      column = c;
      first = last = min = max = i;
      continue;
    }
    last = i;
    if (v[i]! < v[min]!) min = i;
    if (v[i]! > v[max]!) max = i;
  }
  flush();
  if (hi < t.length) push(hi);
  return out;
}
