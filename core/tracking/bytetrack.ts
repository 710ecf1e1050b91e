import { z } from 'zod';
import { type Box, iou } from '../geometry/boxes';
import { assignBelow } from './assignment';
import { correct, initiate, type KalmanState, predict } from './kalman';

/**
 * Stored on every track it writes; bump it when the algorithm or a default changes what it
 * produces, so tracks of different trackers are told apart (docs/tracks.md).
 */
export const TRACKER_VERSION = 'bytetrack-ts-1';

/**
 * ByteTrack's settings (Zhang et al. 2022, the reference implementation's defaults), plus the
 * thresholds of the switches the tracker reports itself. Distances are 1 - IoU.
 */
export const TrackerSettings = z.strictObject({
  high_score: z.number().min(0).max(1).default(0.5).meta({
    description:
      'detections scoring at least this enter the first association; the rest, down to low_score, the second',
  }),
  low_score: z
    .number()
    .min(0)
    .max(1)
    .default(0.1)
    .meta({ description: 'detections scoring at most this are ignored' }),
  new_track_score: z
    .number()
    .min(0)
    .max(1)
    .default(0.6)
    .meta({ description: 'an unmatched high detection starts a track from this score' }),
  match_distance: z
    .number()
    .gt(0)
    .max(1)
    .default(0.8)
    .meta({ description: 'first association: largest 1 - IoU·score (IoU fused with the detection score)' }),
  low_match_distance: z
    .number()
    .gt(0)
    .max(1)
    .default(0.5)
    .meta({ description: 'second association (low-score boxes): largest 1 - IoU' }),
  unconfirmed_match_distance: z
    .number()
    .gt(0)
    .max(1)
    .default(0.7)
    .meta({ description: 'a track seen on one frame only: largest 1 - IoU·score to confirm it' }),
  max_age: z
    .number()
    .int()
    .min(1)
    .max(10_000)
    .default(30)
    .meta({ description: 'frames a lost track waits to be found again before it ends' }),
  switch_gap: z.number().int().min(1).max(10_000).default(10).meta({
    description: 'a track found again after more than this many frames without a box is flagged (long_gap)',
  }),
  switch_jump: z.number().gt(0).max(100).default(0.5).meta({
    description:
      "a box whose centre moved more than this fraction of the previous box's diagonal is flagged (jump)",
  }),
});
export type TrackerSettings = z.infer<typeof TrackerSettings>;
export const DEFAULT_TRACKER_SETTINGS: TrackerSettings = TrackerSettings.parse({});

export interface Detection {
  box: Box;
  score: number;
}

export interface TrackerFrame {
  /** The frame's index; the trajectory reports it. Frames are given in time order, every frame once. */
  frame: number;
  ts_ms: number;
  detections: Detection[];
}

export interface TrajectoryPoint {
  frame: number;
  ts_ms: number;
  /** The detection's box (not the filter's estimate), so the trajectory matches the objects. */
  box: Box;
  score: number;
  /** Index of the detection in its frame's list. */
  detection: number;
}

/**
 * A possible identity switch the tracker noticed in its own output (never checked against ground
 * truth): `long_gap`, the track was found again after `gap_frames` frames without a box; `jump`,
 * the box centre moved `jump` diagonals of the previous box since its last box.
 */
export interface SwitchFlag {
  frame: number;
  ts_ms: number;
  kind: 'long_gap' | 'jump';
  gap_frames: number;
  jump: number;
}

export interface TrackOut {
  /** 1, 2, … in order of birth. */
  id: number;
  points: TrajectoryPoint[];
  switches: SwitchFlag[];
}

type State = 'tracked' | 'lost' | 'removed';

interface Track {
  id: number;
  state: State;
  confirmed: boolean;
  kalman: KalmanState;
  /** Processed-frame count of its last box. */
  lastSeen: number;
  points: TrajectoryPoint[];
  switches: SwitchFlag[];
}

const toMeasurement = (b: Box): number[] => {
  const w = b[2] - b[0];
  const h = b[3] - b[1];
  return [b[0] + w / 2, b[1] + h / 2, w / h, h];
};

const estimate = (t: Track): Box => {
  const [x, y, a, h] = t.kalman.mean as [number, number, number, number];
  const w = a * h;
  return [x - w / 2, y - h / 2, x + w / 2, y + h / 2];
};

const centreDistance = (a: Box, b: Box): number =>
  Math.hypot((a[0] + a[2] - b[0] - b[2]) / 2, (a[1] + a[3] - b[1] - b[3]) / 2);

/** Detections narrower or flatter than this cannot enter the filter (aspect w / h needs h > 0). */
const usable = (d: Detection): boolean => d.box[2] - d.box[0] > 0 && d.box[3] - d.box[1] > 0;

/**
 * ByteTrack over frames in time order. Per frame: confirmed and lost tracks are predicted one
 * frame ahead and matched to the high-score detections (IoU fused with the score); tracks still
 * unmatched are matched to the low-score detections by IoU alone (this recovers occluded, blurred
 * objects); a track seen on one frame only must match a high detection on the next or is dropped;
 * unmatched high detections scoring new_track_score start tracks; tracks lost for more than max_age
 * frames end. Deterministic: the same frames and settings give the same tracks.
 *
 * Differences from the reference implementation, on purpose: a track's birth box is kept in its
 * trajectory once it is confirmed (the reference outputs only confirmed frames, but the birth box
 * is the same object and must carry its track id), and a score equal to high_score counts as high.
 */
export function runByteTrack(frames: readonly TrackerFrame[], settings: TrackerSettings): TrackOut[] {
  const all: Track[] = [];
  let nextId = 1;
  frames.forEach((frame, frameNo) => {
    const live = all.filter((t) => t.state !== 'removed');
    const point = (d: number): TrajectoryPoint => ({
      frame: frame.frame,
      ts_ms: frame.ts_ms,
      box: frame.detections[d]!.box,
      score: frame.detections[d]!.score,
      detection: d,
    });
    const take = (t: Track, d: number) => {
      const previous = t.points.at(-1)!;
      const box = frame.detections[d]!.box;
      const gap = frameNo - t.lastSeen;
      const jump =
        centreDistance(box, previous.box) /
        Math.hypot(previous.box[2] - previous.box[0], previous.box[3] - previous.box[1]);
      const base = { frame: frame.frame, ts_ms: frame.ts_ms, gap_frames: gap, jump };
      if (t.state === 'lost' && gap > settings.switch_gap) t.switches.push({ ...base, kind: 'long_gap' });
      if (jump > settings.switch_jump) t.switches.push({ ...base, kind: 'jump' });
      t.kalman = correct(t.kalman, toMeasurement(box));
      t.state = 'tracked';
      t.confirmed = true;
      t.lastSeen = frameNo;
      t.points.push(point(d));
    };
    const indices = frame.detections.flatMap((d, i) => (usable(d) ? [i] : []));
    const high = indices.filter((i) => frame.detections[i]!.score >= settings.high_score);
    const low = indices.filter((i) => {
      const s = frame.detections[i]!.score;
      return s > settings.low_score && s < settings.high_score;
    });
    const unconfirmed = live.filter((t) => t.state === 'tracked' && !t.confirmed);
    const pool = live.filter((t) => t.confirmed);
    for (const t of pool) {
      // A lost track keeps its place but stops growing (the reference zeroes vh).
      if (t.state === 'lost') t.kalman.mean[7] = 0;
      t.kalman = predict(t.kalman);
    }
    const distances = (tracks: readonly Track[], dets: readonly number[], fuse: boolean) =>
      tracks.map((t) => {
        const b = estimate(t);
        return dets.map((d) => {
          const det = frame.detections[d]!;
          return 1 - iou(b, det.box) * (fuse ? det.score : 1);
        });
      });
    const match = (tracks: readonly Track[], dets: readonly number[], limit: number, fuse: boolean) => {
      const pairs = assignBelow(distances(tracks, dets, fuse), limit);
      for (const [r, c] of pairs) take(tracks[r]!, dets[c]!);
      const used = new Set(pairs.map(([r]) => r));
      const usedDets = new Set(pairs.map(([, c]) => c));
      return {
        tracks: tracks.filter((_, r) => !used.has(r)),
        dets: dets.filter((_, c) => !usedDets.has(c)),
      };
    };
    const first = match(pool, high, settings.match_distance, true);
    const second = match(
      first.tracks.filter((t) => t.state === 'tracked'),
      low,
      settings.low_match_distance,
      false,
    );
    for (const t of second.tracks) t.state = 'lost';
    const third = match(unconfirmed, first.dets, settings.unconfirmed_match_distance, true);
    for (const t of third.tracks) t.state = 'removed';
    for (const d of third.dets) {
      if (frame.detections[d]!.score < settings.new_track_score) continue;
      all.push({
        id: nextId++,
        state: 'tracked',
        confirmed: frameNo === 0,
        kalman: initiate(toMeasurement(frame.detections[d]!.box)),
        lastSeen: frameNo,
        points: [point(d)],
        switches: [],
      });
    }
    for (const t of live)
      if (t.state === 'lost' && frameNo - t.lastSeen > settings.max_age) t.state = 'removed';
  });
  return all
    .filter((t) => t.confirmed)
    .map((t, i) => ({ id: i + 1, points: t.points, switches: t.switches }));
}
