/**
 * What the AI engine sends: per-message statistics (from the id statistics) and a bounded,
 * evenly drawn sample of frames, never the capture itself. The sample is a reservoir sample
 * (seeded, so the same capture gives the same payload) of at most `maxSampleFrames` frames,
 * in time order.
 */
import { IdStatsAccumulator } from '../analysis/ids';
import type { CanFrame } from '../frame';

export const DEFAULT_SAMPLE_FRAMES = 200;
export const MAX_SAMPLE_FRAMES = 2000;

export interface MessageStatistics {
  id: string;
  count: number;
  meanRateHz: number;
  meanPeriodMs: number;
  jitterMs: number;
  dlcs: number[];
  /** Per byte: changes between consecutive frames, and distinct values seen. */
  byteChanges: number[];
  byteDistinct: number[];
  movingBits: number[];
}

export interface SampleFrame {
  /** Seconds from the capture's first frame. */
  t: number;
  id: string;
  data: string;
}

export interface AnalysisPayload {
  frameCount: number;
  durationSeconds: number;
  messages: MessageStatistics[];
  sample: SampleFrame[];
}

const round = (x: number, digits: number): number => Number(x.toFixed(digits));

export async function buildAnalysisPayload(
  frames: AsyncIterable<CanFrame> | Iterable<CanFrame>,
  maxSampleFrames = DEFAULT_SAMPLE_FRAMES,
): Promise<AnalysisPayload> {
  if (!Number.isInteger(maxSampleFrames) || maxSampleFrames < 0 || maxSampleFrames > MAX_SAMPLE_FRAMES) {
    throw new RangeError(`the frame sample holds 0 to ${MAX_SAMPLE_FRAMES} frames, not ${maxSampleFrames}`);
  }
  const stats = new IdStatsAccumulator();
  const reservoir: Array<{ seen: number; frame: CanFrame }> = [];
  let seen = 0;
  let first = Number.NaN;
  let last = Number.NaN;
  // xorshift32 with a fixed seed: deterministic sampling
  let state = 0x9e3779b9;
  const random = (): number => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) / 0x100000000;
  };
  for await (const frame of frames) {
    stats.add(frame);
    if (seen === 0) first = frame.timestamp;
    last = frame.timestamp;
    if (reservoir.length < maxSampleFrames) reservoir.push({ seen, frame });
    else {
      const slot = Math.floor(random() * (seen + 1));
      if (slot < maxSampleFrames) reservoir[slot] = { seen, frame };
    }
    seen++;
  }
  reservoir.sort((a, b) => a.seen - b.seen);
  return {
    frameCount: seen,
    durationSeconds: seen > 0 ? round(last - first, 6) : 0,
    messages: stats.results().map((s) => ({
      id: s.key,
      count: s.count,
      meanRateHz: round(s.meanRateHz, 3),
      meanPeriodMs: round(s.meanPeriodMs, 3),
      jitterMs: round(s.jitterMs, 3),
      dlcs: s.dlcs,
      byteChanges: s.byteChanges,
      byteDistinct: s.byteDistinct,
      movingBits: s.movingBits,
    })),
    sample: reservoir.map(({ frame }) => ({
      t: round(frame.timestamp - first, 6),
      id: `0x${frame.id.toString(16).toUpperCase()}`,
      data: Array.from(frame.data, (b) => b.toString(16).padStart(2, '0').toUpperCase()).join(' '),
    })),
  };
}
