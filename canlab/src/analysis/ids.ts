/**
 * Per-id statistics of a capture, accumulated frame by frame so that a capture of any size is
 * summarised in memory proportional to the number of ids, not frames.
 */
import type { CanFrame } from '../frame';
import { formatId } from './bits';

export interface IdStats {
  id: number;
  extended: boolean;
  /** `0x123` (standard) or `0x18DAF110x` (extended). */
  key: string;
  count: number;
  firstTimestamp: number;
  lastTimestamp: number;
  /** Frames per second over the id's span: (count - 1) / (last - first); 0 with fewer than 2 frames. */
  meanRateHz: number;
  /** Mean inter-arrival time in milliseconds. */
  meanPeriodMs: number;
  /** Standard deviation of the inter-arrival time in milliseconds (population). */
  jitterMs: number;
  /** DLC codes seen, ascending. */
  dlcs: number[];
  /** Largest payload length seen, bytes. */
  maxLength: number;
  remoteCount: number;
  fd: boolean;
  /** Per byte index: number of consecutive-frame changes of that byte. */
  byteChanges: number[];
  /** Per byte index: distinct values seen (capped at 256, exact). */
  byteDistinct: number[];
  /** Byte indices whose value changed at least once. */
  movingBytes: number[];
  /** Per DBC bit index (byte * 8 + bit): consecutive-frame flip count. */
  bitFlips: number[];
  /** Bit indices that flipped at least once. */
  movingBits: number[];
}

class IdAccumulator {
  count = 0;
  first = 0;
  last = 0;
  // Welford on inter-arrival times (seconds).
  gaps = 0;
  gapMean = 0;
  gapM2 = 0;
  dlcs = new Set<number>();
  maxLength = 0;
  remote = 0;
  fd = false;
  prev: Uint8Array | undefined;
  byteChanges: number[] = [];
  byteSeen: Uint8Array[] = [];
  bitFlips: number[] = [];

  constructor(
    readonly id: number,
    readonly extended: boolean,
  ) {}

  add(frame: CanFrame): void {
    if (this.count === 0) this.first = frame.timestamp;
    else {
      const gap = frame.timestamp - this.last;
      this.gaps++;
      const d = gap - this.gapMean;
      this.gapMean += d / this.gaps;
      this.gapM2 += d * (gap - this.gapMean);
    }
    this.last = frame.timestamp;
    this.count++;
    this.dlcs.add(frame.dlc);
    if (frame.fd) this.fd = true;
    if (frame.remote) {
      this.remote++;
      return;
    }
    const data = frame.data;
    if (data.length > this.maxLength) {
      for (let i = this.maxLength; i < data.length; i++) {
        this.byteChanges.push(0);
        this.byteSeen.push(new Uint8Array(256));
        for (let b = 0; b < 8; b++) this.bitFlips.push(0);
      }
      this.maxLength = data.length;
    }
    for (let i = 0; i < data.length; i++) this.byteSeen[i]![data[i]!] = 1;
    const prev = this.prev;
    if (prev) {
      const n = Math.min(prev.length, data.length);
      for (let i = 0; i < n; i++) {
        const x = prev[i]! ^ data[i]!;
        if (x === 0) continue;
        this.byteChanges[i]!++;
        for (let b = 0; b < 8; b++) if ((x >> b) & 1) this.bitFlips[i * 8 + b]!++;
      }
    }
    this.prev = data;
  }

  result(): IdStats {
    const span = this.last - this.first;
    const byteDistinct = this.byteSeen.map((seen) => seen.reduce((a, b) => a + b, 0));
    return {
      id: this.id,
      extended: this.extended,
      key: formatId(this.id, this.extended),
      count: this.count,
      firstTimestamp: this.first,
      lastTimestamp: this.last,
      meanRateHz: this.count > 1 && span > 0 ? (this.count - 1) / span : 0,
      meanPeriodMs: this.gaps > 0 ? this.gapMean * 1000 : 0,
      jitterMs: this.gaps > 0 ? Math.sqrt(this.gapM2 / this.gaps) * 1000 : 0,
      dlcs: [...this.dlcs].sort((a, b) => a - b),
      maxLength: this.maxLength,
      remoteCount: this.remote,
      fd: this.fd,
      byteChanges: [...this.byteChanges],
      byteDistinct,
      movingBytes: this.byteChanges.flatMap((c, i) => (c > 0 ? [i] : [])),
      bitFlips: [...this.bitFlips],
      movingBits: this.bitFlips.flatMap((c, i) => (c > 0 ? [i] : [])),
    };
  }
}

/** Streaming per-id statistics. Error frames are counted separately and not attributed to an id. */
export class IdStatsAccumulator {
  private readonly ids = new Map<string, IdAccumulator>();
  errorFrames = 0;
  totalFrames = 0;

  add(frame: CanFrame): void {
    this.totalFrames++;
    if (frame.error) {
      this.errorFrames++;
      return;
    }
    const key = formatId(frame.id, frame.extended);
    let acc = this.ids.get(key);
    if (!acc) {
      acc = new IdAccumulator(frame.id, frame.extended);
      this.ids.set(key, acc);
    }
    acc.add(frame);
  }

  /** Statistics per id, ordered standard ids first, then by id. */
  results(): IdStats[] {
    return [...this.ids.values()]
      .map((a) => a.result())
      .sort((a, b) => Number(a.extended) - Number(b.extended) || a.id - b.id);
  }
}

/** Convenience for in-memory frame lists. */
export function computeIdStats(frames: Iterable<CanFrame>): IdStats[] {
  const acc = new IdStatsAccumulator();
  for (const f of frames) acc.add(f);
  return acc.results();
}

/** Compact run notation of a sorted index list: `0-3,7,12-15`. */
export function formatRanges(indices: readonly number[]): string {
  const parts: string[] = [];
  let i = 0;
  while (i < indices.length) {
    let j = i;
    while (j + 1 < indices.length && indices[j + 1] === indices[j]! + 1) j++;
    parts.push(i === j ? `${indices[i]}` : `${indices[i]}-${indices[j]}`);
    i = j + 1;
  }
  return parts.length ? parts.join(',') : '-';
}

/** Per byte, one character: `.` constant, otherwise a digit 1-9 for how many of its bits move. */
export function movingBitMap(stats: IdStats): string {
  const out: string[] = [];
  for (let i = 0; i < stats.maxLength; i++) {
    let n = 0;
    for (let b = 0; b < 8; b++) if ((stats.bitFlips[i * 8 + b] ?? 0) > 0) n++;
    out.push(n === 0 ? '.' : String(n));
  }
  return out.join('');
}

function pad(text: string, width: number, right = false): string {
  return right ? text.padStart(width) : text.padEnd(width);
}

/** Readable table: one line per id, then per id with moving bits a line of per-bit flip counts. */
export function formatIdsTable(stats: readonly IdStats[], options: { bitDetail?: boolean } = {}): string {
  const header = ['id', 'count', 'rate Hz', 'period ms', 'jitter ms', 'dlc', 'moving bytes', 'bits/byte'];
  const rows = stats.map((s) => [
    s.key,
    String(s.count),
    s.meanRateHz.toFixed(2),
    s.meanPeriodMs.toFixed(2),
    s.jitterMs.toFixed(3),
    s.dlcs.join(','),
    formatRanges(s.movingBytes),
    movingBitMap(s) || '-',
  ]);
  const widths = header.map((h, c) => Math.max(h.length, ...rows.map((r) => r[c]!.length)));
  const numeric = [false, true, true, true, true, false, false, false];
  const line = (cells: string[]): string =>
    cells
      .map((c, i) => pad(c, widths[i]!, numeric[i]))
      .join('  ')
      .trimEnd();
  const out = [line(header), widths.map((w) => '-'.repeat(w)).join('  ')];
  for (let i = 0; i < rows.length; i++) {
    out.push(line(rows[i]!));
    const s = stats[i]!;
    if (options.bitDetail !== false && s.movingBits.length > 0) {
      const flips = s.movingBits.map((b) => `${b}:${s.bitFlips[b]}`).join(' ');
      out.push(`    bit flips (bit:count) ${flips}`);
    }
  }
  return out.join('\n') + '\n';
}
