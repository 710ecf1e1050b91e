import type { Box } from '../geometry/boxes';
import { evaluateMot, type MotBox, type MotEvaluation } from '../metrics/mot';
import type { TrackerSettings } from './bytetrack';
import { trackSession, type SessionFrame } from './session';

/**
 * Scoring an inference run's tracking against people's tracks (docs/tracks.md "Tracking metrics"),
 * pure: the run's boxes are tracked as the platform tracks any session (ByteTrack per class), and
 * the tracks that come out are scored against the human tracks with CLEAR MOT, identity and HOTA.
 */

/** A person's box on a frame of the session, with the track a person's edits put it in. */
export interface GroundTruthBox {
  frameIndex: number;
  trackId: string;
  box: Box;
}

/** One box the run predicted on a frame of the session. */
export interface RunBox {
  predictionId: string;
  frameIndex: number;
  box: Box;
  score: number;
  className: string;
}

export interface RunTrackingScore {
  evaluation: MotEvaluation;
  gt_tracks: number;
  hypothesis_tracks: number;
  /** Switches the tracker reported itself while linking the run's boxes (not checked against anything). */
  tracker_switch_flags: number;
}

/**
 * Tracks the run's boxes over the session's frames and scores the tracks against the ground truth;
 * frames with neither kind of box count as frames all the same (they change nothing). Scoring is
 * class-agnostic, as py-motmetrics' is: a hypothesis of another class on a person's box still
 * matches, and a tracker that never joins classes cannot switch through one.
 */
export function scoreRunTracking(
  frames: ReadonlyArray<{ frameId: string; index: number; tsMs: number }>,
  groundTruth: readonly GroundTruthBox[],
  run: readonly RunBox[],
  settings: TrackerSettings,
): RunTrackingScore {
  const byFrame = new Map<number, RunBox[]>();
  for (const b of run) byFrame.set(b.frameIndex, [...(byFrame.get(b.frameIndex) ?? []), b]);
  const sessionFrames: SessionFrame[] = frames.map((f) => ({
    frameId: f.frameId,
    index: f.index,
    tsMs: f.tsMs,
    objects: (byFrame.get(f.index) ?? []).map((b) => ({
      objectId: b.predictionId,
      className: b.className,
      box: b.box,
      score: b.score,
    })),
  }));
  const tracks = trackSession(sessionFrames, settings);
  const hyp: MotBox[] = tracks.flatMap((t, i) =>
    t.trajectory.map((p) => ({ frame: p.frame_index, id: `h${i}`, box: p.box })),
  );
  const gt: MotBox[] = groundTruth.map((g) => ({ frame: g.frameIndex, id: g.trackId, box: g.box }));
  return {
    evaluation: evaluateMot(gt, hyp),
    gt_tracks: new Set(groundTruth.map((g) => g.trackId)).size,
    hypothesis_tracks: tracks.length,
    tracker_switch_flags: tracks.reduce((n, t) => n + t.switches.length, 0),
  };
}
