/**
 * Frame sampling at the target rate: the drive's time axis is cut into buckets of 1/fps seconds
 * and the first source frame in each bucket is taken, keeping its own timestamp. Gaps in the
 * source leave buckets empty instead of producing catch-up bursts, and nothing drifts.
 */
export function sampleBucket(timestampMs: number, fps: number): number {
  // The epsilon keeps frames stamped exactly on a bucket edge (0.333… s at 30 fps) in the later bucket.
  return Math.floor((timestampMs * fps) / 1000 + 1e-6);
}

export class FrameSampler {
  private last = -Infinity;
  constructor(private readonly fps: number) {}

  take(timestampMs: number): boolean {
    const bucket = sampleBucket(timestampMs, this.fps);
    if (bucket <= this.last) return false;
    this.last = bucket;
    return true;
  }
}

/** The same rule as an ffmpeg `select` expression over the stream time `t` (seconds). */
export function ffmpegSelectExpression(fps: number): string {
  const f = Number(fps.toFixed(6));
  return `isnan(prev_selected_t)+gt(floor(t*${f}+0.000001),floor(prev_selected_t*${f}+0.000001))`;
}
