/**
 * CSV segments in SavvyCAN's GVRET layout (`segment-0001.csv`, `segment-0002.csv`, … in the
 * capture folder). A segment is closed and the next one started when it holds `maxFrames`
 * frames, or when a frame arrives `maxSeconds` or more after the segment's first frame (so an
 * idle bus leaves no empty segments). A segment file exists once its first frame is written.
 */
import path from 'node:path';
import type { CanFrame } from '../frame';
import { createCaptureWriter, type CaptureWriter } from '../formats';

export const DEFAULT_MAX_FRAMES = 200_000;
export const DEFAULT_MAX_SECONDS = 600;

export interface SegmentInfo {
  /** File name inside the capture folder. */
  file: string;
  frames: number;
  /** Timestamps (epoch seconds) of the first and last frame. */
  start: number;
  end: number;
}

export function segmentFileName(index: number): string {
  return `segment-${String(index).padStart(4, '0')}.csv`;
}

export class SegmentWriter {
  private current: { info: SegmentInfo; writer: CaptureWriter } | undefined;
  private readonly closed: SegmentInfo[] = [];
  totalFrames = 0;

  constructor(
    private readonly dir: string,
    private readonly maxFrames: number,
    private readonly maxSeconds: number,
    /** Called after a segment is closed by rotation (not by the final close). */
    private readonly onRotate: () => void = () => {},
  ) {}

  async write(frame: CanFrame): Promise<void> {
    let segment = this.current;
    if (
      segment !== undefined &&
      (segment.info.frames >= this.maxFrames || frame.timestamp - segment.info.start >= this.maxSeconds)
    ) {
      await this.closeCurrent();
      this.onRotate();
      segment = undefined;
    }
    if (segment === undefined) {
      const file = segmentFileName(this.closed.length + 1);
      segment = {
        info: { file, frames: 0, start: frame.timestamp, end: frame.timestamp },
        writer: createCaptureWriter(path.join(this.dir, file)),
      };
      this.current = segment;
    }
    await segment.writer.write(frame);
    segment.info.frames++;
    segment.info.end = frame.timestamp;
    this.totalFrames++;
  }

  /** Every segment so far, the open one included. */
  segments(): SegmentInfo[] {
    return [...this.closed, ...(this.current ? [this.current.info] : [])].map((s) => ({ ...s }));
  }

  /** Flushes and closes the open segment. */
  async close(): Promise<void> {
    await this.closeCurrent();
  }

  private async closeCurrent(): Promise<void> {
    const segment = this.current;
    if (segment === undefined) return;
    this.current = undefined;
    await segment.writer.close();
    this.closed.push(segment.info);
  }
}
