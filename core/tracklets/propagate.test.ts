import type { Box } from '../geometry/boxes';
import { iou } from '../geometry/boxes';
import {
  planPropagation,
  PropagateIn,
  seedFilter,
  type PropagationStep,
  type TargetFrame,
} from './propagate';

const box = (cx: number, cy: number): Box => [cx - 15, cy - 20, cx + 15, cy + 20];
const cx = (b: Box) => (b[0] + b[2]) / 2;
const target = (step: number, extra: Partial<TargetFrame> = {}): TargetFrame => ({
  frame_id: `f${step}`,
  frame_index: step,
  step,
  occupied: null,
  detections: [],
  ...extra,
});
const opts = { redetect: false, min_iou: 0.5 };
/** The plan's step, which must be a create. */
function created(step: PropagationStep | undefined): Extract<PropagationStep, { action: 'create' }> {
  if (step?.action !== 'create') throw new Error(`expected a create, got ${JSON.stringify(step)}`);
  return step;
}
/** A car moving right 20 px a frame over frames 0..4. */
const moving = [0, 1, 2, 3, 4].map((i) => ({ step: i, box: box(100 + 20 * i, 200) }));

describe('propagation by the Kalman filter', () => {
  it('holds a single box still: its velocity is unknown, so zero', () => {
    const plan = planPropagation([{ step: 0, box: box(100, 200) }], [target(1), target(2)], opts);
    for (const p of plan) {
      expect(p.action).toBe('create');
      if (p.action === 'create') {
        expect(p.box.map((x) => Math.round(x))).toEqual(box(100, 200));
        expect(p.snapped).toBeNull();
      }
    }
  });

  it('continues a moving track: each prediction further along, the same size and height', () => {
    const plan = planPropagation(moving, [target(5), target(6), target(7)], opts);
    const xs = plan.map((p) => (p.action === 'create' ? cx(p.box) : NaN));
    expect(xs[0]).toBeGreaterThan(180);
    expect(xs[1]).toBeGreaterThan(xs[0]!);
    expect(xs[2]).toBeGreaterThan(xs[1]!);
    // The filter learns the velocity from the history: most of the 20 px a frame (it starts from
    // zero velocity, so it lags), steadily.
    expect(xs[1]! - xs[0]!).toBeGreaterThan(14);
    expect(xs[1]! - xs[0]!).toBeLessThan(20);
    expect(xs[2]! - xs[1]!).toBeCloseTo(xs[1]! - xs[0]!, 1);
    for (const p of plan)
      if (p.action === 'create') {
        expect((p.box[1] + p.box[3]) / 2).toBeCloseTo(200, 3);
        expect(p.box[2] - p.box[0]).toBeCloseTo(30, 3);
        expect(p.box[3] - p.box[1]).toBeCloseTo(40, 3);
      }
  });

  it('predicts further over a gap in the session’s time order than over one frame', () => {
    const near = created(planPropagation(moving, [target(5)], opts)[0]);
    const far = created(planPropagation(moving, [target(7)], opts)[0]);
    expect(cx(far.box)).toBeGreaterThan(cx(near.box) + 20);
  });

  it('skips a frame the track already holds and corrects the filter with it; a rejected one only keeps its frame', () => {
    const held = { object_id: 'held', box: box(300, 200), rejected: false };
    const plan = planPropagation(moving, [target(5, { occupied: held }), target(6)], opts);
    expect(plan[0]).toEqual({
      action: 'skip',
      frame_id: 'f5',
      frame_index: 5,
      reason: 'track_has_object',
      object_id: 'held',
    });
    const free = created(planPropagation(moving, [target(5), target(6)], opts)[1]);
    const corrected = created(plan[1]);
    expect(cx(corrected.box)).toBeGreaterThan(cx(free.box) + 50);
    const ignored = planPropagation(
      moving,
      [target(5, { occupied: { ...held, rejected: true } }), target(6)],
      opts,
    )[1];
    expect(ignored).toEqual(free);
  });

  it('with redetect snaps to the detection overlapping the prediction most, from min_iou', () => {
    const p = created(planPropagation(moving, [target(5)], opts)[0]).predicted;
    const shifted = (dx: number): Box => [p[0] + dx, p[1], p[2] + dx, p[3]];
    const detections = [
      { object_id: 'far', box: shifted(40), conf: 0.9 },
      { object_id: 'close', box: shifted(3), conf: 0.7 },
      { object_id: 'near', box: shifted(8), conf: 0.8 },
    ];
    const [snapped] = planPropagation(moving, [target(5, { detections })], { redetect: true, min_iou: 0.5 });
    expect(snapped).toMatchObject({
      action: 'create',
      predicted: p,
      box: shifted(3),
      snapped: { object_id: 'close', conf: 0.7, iou: Math.round(iou(p, shifted(3)) * 1e4) / 1e4 },
    });
    // Without redetect, or when nothing overlaps enough, the prediction stands.
    expect(planPropagation(moving, [target(5, { detections })], opts)[0]).toMatchObject({
      box: p,
      snapped: null,
    });
    const only = [{ object_id: 'far', box: shifted(40), conf: 0.9 }];
    expect(
      planPropagation(moving, [target(5, { detections: only })], { redetect: true, min_iou: 0.5 })[0],
    ).toMatchObject({ box: p, snapped: null });
  });

  it('seeds from the history in step order, whatever order it comes in', () => {
    expect(seedFilter([...moving].reverse())).toEqual(seedFilter(moving));
    expect(() => seedFilter([])).toThrow();
  });

  it('bounds the request: 1 to 30 frames, default 5', () => {
    expect(PropagateIn.parse({})).toEqual({ frames: 5, redetect: false, min_iou: 0.5 });
    expect(PropagateIn.safeParse({ frames: 31 }).success).toBe(false);
    expect(PropagateIn.safeParse({ frames: 0 }).success).toBe(false);
    expect(PropagateIn.safeParse({ min_iou: 0 }).success).toBe(false);
  });
});
