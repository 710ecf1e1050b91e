import type { Box } from '../geometry/boxes';
import { runByteTrack, type SwitchFlag, type TrackerSettings } from './bytetrack';

/** One labelled object of a session's frame, as the tracker reads it. */
export interface FrameObject {
  objectId: string;
  className: string;
  box: Box;
  /** The object's confidence; a person's box (no confidence) counts as sure. */
  score: number;
}

export interface SessionFrame {
  frameId: string;
  index: number;
  tsMs: number;
  objects: FrameObject[];
}

/** A point of a stored trajectory: the object of the track on one frame. */
export interface StoredTrajectoryPoint {
  frame_id: string;
  frame_index: number;
  ts_ms: number;
  object_id: string;
  box: Box;
  score: number;
}

export interface SessionTrack {
  className: string;
  trajectory: StoredTrajectoryPoint[];
  switches: Array<SwitchFlag & { frame_id: string }>;
}

/**
 * Tracks a session's objects (docs/tracks.md): ByteTrack over the frames in order, once per class,
 * so a track never joins a car to a pedestrian; each track's points name the objects it links.
 * Tracks come out ordered by class, then by their first frame.
 */
export function trackSession(frames: readonly SessionFrame[], settings: TrackerSettings): SessionTrack[] {
  const ordered = [...frames].sort((a, b) => a.index - b.index);
  const frameOf = new Map(ordered.map((f) => [f.index, f]));
  const classes = [...new Set(ordered.flatMap((f) => f.objects.map((o) => o.className)))].sort();
  return classes.flatMap((className) => {
    const perFrame = ordered.map((f) => f.objects.filter((o) => o.className === className));
    const tracks = runByteTrack(
      ordered.map((f, i) => ({
        frame: f.index,
        ts_ms: f.tsMs,
        detections: perFrame[i]!.map((o) => ({ box: o.box, score: o.score })),
      })),
      settings,
    );
    const objectsAt = new Map(ordered.map((f, i) => [f.index, perFrame[i]!]));
    return tracks.map((t) => ({
      className,
      trajectory: t.points.map((p) => {
        const o = objectsAt.get(p.frame)![p.detection]!;
        return {
          frame_id: frameOf.get(p.frame)!.frameId,
          frame_index: p.frame,
          ts_ms: p.ts_ms,
          object_id: o.objectId,
          box: p.box,
          score: p.score,
        };
      }),
      switches: t.switches.map((s) => ({ ...s, frame_id: frameOf.get(s.frame)!.frameId })),
    }));
  });
}
