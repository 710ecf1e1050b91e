import { z } from 'zod';
import { iou, type Box } from '../geometry/boxes';
import { correct, initiate, predict, type KalmanState } from '../tracking/kalman';

/**
 * Propagating an object to the next frames of its session (docs/propagation.md): the tracker's
 * Kalman filter (constant velocity on centre, aspect and height, one step per frame) seeded from
 * the object's track up to it, predicts each next frame's box; with `redetect` a prediction snaps
 * to the best-overlapping stored detection of the object's class on that frame. Pure: the caller
 * reads the frames and writes what the plan says.
 */
export const PROPAGATE_METHOD = 'kalman_constant_velocity';

export const PropagateIn = z.strictObject({
  frames: z
    .int()
    .min(1)
    .max(30)
    .default(5)
    .meta({ description: 'how many next frames of the session (by time)' }),
  redetect: z.boolean().default(false).meta({
    description:
      'snap each prediction to the best-overlapping stored machine detection of the same class on that frame',
  }),
  min_iou: z.number().gt(0).max(1).default(0.5).meta({
    description: 'with redetect: the least IoU between prediction and detection to snap',
  }),
});
export type PropagateIn = z.infer<typeof PropagateIn>;

/** A box of the track before (and including) the propagated object; `step` is its frame's place in the session's time order. */
export interface SeedPoint {
  step: number;
  box: Box;
}

/** One of the next frames. */
export interface TargetFrame {
  frame_id: string;
  frame_index: number;
  step: number;
  /** The track's object already there, if any; a rejected one keeps its frame but is no evidence of where the object is. */
  occupied: { object_id: string; box: Box; rejected: boolean } | null;
  /** Stored machine detections of the object's class on the frame, for `redetect`. */
  detections: ReadonlyArray<{ object_id: string; box: Box; conf: number | null }>;
}

export type PropagationStep =
  | {
      action: 'create';
      frame_id: string;
      frame_index: number;
      /** What the filter predicted. */
      predicted: Box;
      /** What is written: the prediction, or the detection it snapped to. */
      box: Box;
      snapped: { object_id: string; iou: number; conf: number | null } | null;
    }
  | { action: 'skip'; frame_id: string; frame_index: number; reason: 'track_has_object'; object_id: string };

const toMeasurement = (b: Box): number[] => {
  const h = Math.max(b[3] - b[1], 1e-6);
  return [(b[0] + b[2]) / 2, (b[1] + b[3]) / 2, (b[2] - b[0]) / h, h];
};
const toBox = (m: readonly number[]): Box => {
  const [x, y, a, h] = m as [number, number, number, number];
  const w = a * h;
  return [x - w / 2, y - h / 2, x + w / 2, y + h / 2];
};

function advance(s: KalmanState, steps: number): KalmanState {
  let state = s;
  for (let i = 0; i < steps; i++) state = predict(state);
  return state;
}

/**
 * The filter after the seed points (frame order): started on the first, then per point predicted
 * over the frames since the one before and corrected with its box. A seed of one box has zero velocity.
 */
export function seedFilter(seed: readonly SeedPoint[]): { state: KalmanState; step: number } {
  const points = [...seed].sort((a, b) => a.step - b.step);
  if (!points.length) throw new Error('propagation needs at least the object itself');
  let state = initiate(toMeasurement(points[0]!.box));
  for (let i = 1; i < points.length; i++)
    state = correct(advance(state, points[i]!.step - points[i - 1]!.step), toMeasurement(points[i]!.box));
  return { state, step: points.at(-1)!.step };
}

const round2 = (b: Box): Box => b.map((x) => Math.round(x * 100) / 100) as Box;

/**
 * What each next frame gets: a frame where the track already has an object is skipped, and that
 * object (unless rejected) corrects the filter, being better evidence than the prediction; every other frame gets
 * the prediction, or with `redetect` the detection overlapping it most from `min_iou`, which then
 * corrects the filter too.
 */
export function planPropagation(
  seed: readonly SeedPoint[],
  targets: readonly TargetFrame[],
  opts: Pick<PropagateIn, 'redetect' | 'min_iou'>,
): PropagationStep[] {
  let { state, step } = seedFilter(seed);
  return [...targets]
    .sort((a, b) => a.step - b.step)
    .map((t): PropagationStep => {
      const predictedState = advance(state, t.step - step);
      step = t.step;
      if (t.occupied) {
        state = t.occupied.rejected ? predictedState : correct(predictedState, toMeasurement(t.occupied.box));
        return {
          action: 'skip',
          frame_id: t.frame_id,
          frame_index: t.frame_index,
          reason: 'track_has_object',
          object_id: t.occupied.object_id,
        };
      }
      const predicted = round2(toBox(predictedState.mean));
      const best = opts.redetect
        ? t.detections
            .map((d) => ({ d, overlap: iou(predicted, d.box) }))
            .filter((x) => x.overlap >= opts.min_iou)
            .sort((a, b) => b.overlap - a.overlap || (a.d.object_id < b.d.object_id ? -1 : 1))[0]
        : undefined;
      state = best ? correct(predictedState, toMeasurement(best.d.box)) : predictedState;
      return {
        action: 'create',
        frame_id: t.frame_id,
        frame_index: t.frame_index,
        predicted,
        box: best ? ([...best.d.box] as Box) : predicted,
        snapped: best
          ? { object_id: best.d.object_id, iou: Math.round(best.overlap * 1e4) / 1e4, conf: best.d.conf }
          : null,
      };
    });
}
