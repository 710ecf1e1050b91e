import { groundPoint, type EgoCamera } from '../critic';
import type { Box } from '../geometry/boxes';
import { wrapDegrees } from '../tracking/intent';

/**
 * Per-object motion along a track (docs/dynamics.md): pure code, the same for `POST
 * /api/dynamics/compute` and for driving-event derivation when nothing is stored.
 */

/** One object of a track on its frame, with what the frame knows of the ego vehicle. */
export interface TrackPoint {
  object_id: string;
  frame_id: string;
  frame_index: number;
  ts_ms: number;
  box: Box;
  width: number;
  height: number;
  class_name: string;
  l1: string;
  /** The camera model for this frame's size (a session calibration or the default dashcam). */
  camera: EgoCamera;
  /** `frames.context.ego_speed_mps`, when the drive recorded it. */
  ego_speed_mps: number | null;
}

export interface PointDynamics {
  object_id: string;
  /** Image-plane speed of the box centre, px/s; null on a track of one point. */
  speed_px_s: number | null;
  /** Rate of change of that speed (negative: slowing), px/s²; null on a run of fewer than 3 points. */
  accel_px_s2: number | null;
  /** Direction of image motion, degrees in (−180, 180]: 0 right, 90 down; null when it does not move. */
  heading_deg: number | null;
  /** Ground speed over the road (ego motion added back), m/s. */
  speed_mps: number | null;
  accel_mps2: number | null;
  /** Forward distance of the box's ground point from the camera, metres; null at or above the horizon. */
  range_m: number | null;
  /** True when the ground-plane speed is known (camera model and ego speed both allow it). */
  metric: boolean;
}

/** Fewer consecutive positions than this give no acceleration: both speeds would come from one difference. */
const MIN_ACCEL_RUN = 3;

/**
 * The time derivative (per second) of a series at each point: central differences inside a run of
 * consecutive known values, one-sided at a run's ends; null outside runs of at least `minRun`.
 * A repeated timestamp breaks the run rather than dividing by zero.
 */
export function differentiate(
  tsMs: readonly number[],
  values: ReadonlyArray<number | null>,
  minRun = 2,
): Array<number | null> {
  const out: Array<number | null> = values.map(() => null);
  let start = 0;
  while (start < values.length) {
    if (values[start] === null) {
      start++;
      continue;
    }
    let end = start;
    while (end + 1 < values.length && values[end + 1] !== null && tsMs[end + 1]! > tsMs[end]!) end++;
    if (end - start + 1 >= Math.max(2, minRun))
      for (let i = start; i <= end; i++) {
        const a = i > start ? i - 1 : i;
        const b = i < end ? i + 1 : i;
        out[i] = (values[b]! - values[a]!) / ((tsMs[b]! - tsMs[a]!) / 1000);
      }
    start = end + 1;
  }
  return out;
}

const centre = (b: Box): [number, number] => [(b[0] + b[2]) / 2, (b[1] + b[3]) / 2];

/**
 * Dynamics of every point of one track (points in any order; answered in time order). Ground
 * motion follows the critic's motion check: the camera moves forward with the ego vehicle, so a
 * standing object's forward distance shrinks by the ego speed, which is added back.
 */
export function trackDynamics(points: readonly TrackPoint[]): PointDynamics[] {
  const pts = [...points].sort((a, b) => a.ts_ms - b.ts_ms || a.frame_index - b.frame_index);
  const ts = pts.map((p) => p.ts_ms);
  const centres = pts.map((p) => centre(p.box));
  const vx = differentiate(
    ts,
    centres.map((c) => c[0]),
  );
  const vy = differentiate(
    ts,
    centres.map((c) => c[1]),
  );
  const speedPx = pts.map((_, i) => (vx[i] === null ? null : Math.hypot(vx[i]!, vy[i]!)));
  const accelPx = differentiate(ts, speedPx, MIN_ACCEL_RUN);

  const ground = pts.map((p) => groundPoint(p.box, p.camera));
  const gx = differentiate(
    ts,
    ground.map((g) => g?.x ?? null),
  );
  const gz = differentiate(
    ts,
    ground.map((g) => g?.z ?? null),
  );
  const speedM = pts.map((p, i) =>
    gx[i] === null || p.ego_speed_mps === null ? null : Math.hypot(gx[i]!, gz[i]! + p.ego_speed_mps),
  );
  const accelM = differentiate(ts, speedM, MIN_ACCEL_RUN);

  return pts.map((p, i) => {
    const moving = (speedPx[i] ?? 0) > 0;
    return {
      object_id: p.object_id,
      speed_px_s: speedPx[i] ?? null,
      accel_px_s2: accelPx[i] ?? null,
      heading_deg: moving ? wrapDegrees((Math.atan2(vy[i]!, vx[i]!) * 180) / Math.PI) : null,
      speed_mps: speedM[i] ?? null,
      accel_mps2: accelM[i] ?? null,
      range_m: ground[i]?.z ?? null,
      metric: speedM[i] != null,
    };
  });
}
