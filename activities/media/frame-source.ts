/** One frame as a drive yields it: encoded image bytes and its time from the drive's start. */
export interface SourceFrame {
  timestampMs: number;
  bytes: Buffer;
  contentType: string;
}

/** What probing a drive found; recorded on the session (source_meta) and shown by the dry run. */
export interface DriveProbe {
  kind: 'video' | 'bag' | 'frames';
  /** mp4/matroska/... for videos, ros1 or mcap for bags, zip or folder for frames. */
  format: string;
  durationMs: number | null;
  width: number | null;
  height: number | null;
  sourceFps: number | null;
  /** Frames the extraction is expected to yield at the target rate (before the gate and dedup). */
  estimatedFrames: number;
  /** Bags: every image topic with its message type and count, and the one chosen. */
  imageTopics?: Array<{ topic: string; type: string; messages: number }>;
  topic?: string;
  /** Frames: number of image files, and of other files that were ignored. */
  frameFiles?: number;
  ignoredFiles?: number;
  /** Videos: codec and container start time. */
  codec?: string;
  startMs?: number;
}
