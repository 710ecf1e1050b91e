import { defaultCamera } from '../critic';
import type { Box } from '../geometry/boxes';
import { differentiate, trackDynamics, type TrackPoint } from '.';

const W = 1280;
const H = 720;
const cam = defaultCamera(W, H);
/** The default camera: f = 640 px, horizon at y 360, 1.4 m up. A ground point z metres ahead has its bottom at: */
const bottomAt = (z: number) => 360 + (1.4 * 640) / z;

const point = (i: number, ts: number, box: Box, ego: number | null = null): TrackPoint => ({
  object_id: `o${i}`,
  frame_id: `f${i}`,
  frame_index: i,
  ts_ms: ts,
  box,
  width: W,
  height: H,
  class_name: 'car',
  l1: 'vehicle',
  camera: cam,
  ego_speed_mps: ego,
});

describe('differentiate', () => {
  it('uses central differences inside a run and one-sided ones at its ends', () => {
    expect(differentiate([0, 100, 200], [0, 1, 5])).toEqual([10, 25, 40]);
    expect(differentiate([0, 100, 300], [0, 1, 5])[1]).toBeCloseTo(5 / 0.3, 9);
  });

  it('breaks runs at unknown values and repeated times, and leaves short runs unknown', () => {
    expect(differentiate([0, 100, 200, 300, 400], [0, 1, null, 3, 5])).toEqual([10, 10, null, 20, 20]);
    expect(differentiate([0, 100, 100, 200], [0, 1, 2, 4])).toEqual([10, 10, 20, 20]);
    expect(differentiate([0, 100, 200, 300], [0, 1, null, 3], 3)).toEqual([null, null, null, null]);
    expect(differentiate([0], [1])).toEqual([null]);
  });
});

describe('trackDynamics', () => {
  it('measures image speed, heading and acceleration of the box centre', () => {
    // Right at 300 px/s, in time order whatever the input order.
    const right = [2, 0, 1, 3].map((i) => point(i, i * 100, [100 + 30 * i, 400, 140 + 30 * i, 440]));
    const d = trackDynamics(right);
    expect(d.map((x) => x.object_id)).toEqual(['o0', 'o1', 'o2', 'o3']);
    for (const x of d) {
      expect(x.speed_px_s).toBeCloseTo(300, 9);
      expect(x.heading_deg).toBeCloseTo(0, 9);
      expect(x.accel_px_s2).toBeCloseTo(0, 9);
    }
    const down = trackDynamics(
      [0, 1, 2].map((i) => point(i, i * 200, [600, 400 + 20 * i, 640, 440 + 20 * i])),
    );
    expect(down.map((x) => x.heading_deg)).toEqual([90, 90, 90].map((v) => expect.closeTo(v, 9)));
    const upLeft = trackDynamics(
      [0, 1].map((i) => point(i, i * 100, [600 - 10 * i, 400 - 10 * i, 640, 440])),
    );
    expect(upLeft[0]!.heading_deg).toBeCloseTo(-135, 9);
    // Speeding up: centre x at 0, 10, 30, 60, 100 px every 100 ms.
    const xs = [0, 10, 30, 60, 100];
    const faster = trackDynamics(xs.map((x, i) => point(i, i * 100, [x, 400, x + 40, 440])));
    expect(faster.map((x) => x.speed_px_s)).toEqual(
      [100, 150, 250, 350, 400].map((v) => expect.closeTo(v, 9)),
    );
    expect(faster.map((x) => x.accel_px_s2)).toEqual(
      [500, 750, 1000, 750, 500].map((v) => expect.closeTo(v, 9)),
    );
  });

  it('gives no acceleration on two points, no speed on one, and no heading when still', () => {
    const two = trackDynamics([0, 1].map((i) => point(i, i * 100, [10 * i, 400, 10 * i + 40, 440])));
    expect(two.map((x) => [x.speed_px_s, x.accel_px_s2])).toEqual([
      [100, null],
      [100, null],
    ]);
    const one = trackDynamics([point(0, 0, [0, 400, 40, 440])]);
    expect(one[0]).toMatchObject({ speed_px_s: null, accel_px_s2: null, heading_deg: null });
    const still = trackDynamics([0, 1, 2].map((i) => point(i, i * 100, [600, 400, 640, 440])));
    expect(still.map((x) => [x.speed_px_s, x.heading_deg])).toEqual([
      [0, null],
      [0, null],
      [0, null],
    ]);
  });

  it('takes range from the camera model and ground speed only with the ego speed', () => {
    // A standing object dead ahead while the ego drives at 10 m/s: 20 m, 19 m, 18 m …
    const ts = [0, 100, 200, 300];
    const standing = ts.map((t, i) => {
      const y2 = bottomAt(20 - (10 * t) / 1000);
      return point(i, t, [620, y2 - 40, 660, y2], 10);
    });
    const d = trackDynamics(standing);
    expect(d.map((x) => x.range_m)).toEqual([20, 19, 18, 17].map((v) => expect.closeTo(v, 9)));
    for (const x of d) {
      expect(x.metric).toBe(true);
      expect(x.speed_mps).toBeCloseTo(0, 9);
      expect(x.accel_mps2).toBeCloseTo(0, 9);
    }
    // A car held 15 m ahead moves with the ego at 12 m/s.
    const following = ts.map((t, i) => point(i, t, [600, bottomAt(15) - 60, 680, bottomAt(15)], 12));
    expect(trackDynamics(following).map((x) => x.speed_mps)).toEqual([12, 12, 12, 12]);

    // Without the ego speed: range only, not metric.
    const noEgo = trackDynamics(standing.map((p) => ({ ...p, ego_speed_mps: null })));
    expect(noEgo.map((x) => [x.metric, x.speed_mps, x.accel_mps2])).toEqual(
      ts.map(() => [false, null, null]),
    );
    expect(noEgo[0]!.range_m).toBeCloseTo(20, 9);
    // A box whose bottom is at or above the horizon has no ground point.
    const sky = trackDynamics([0, 1].map((i) => point(i, i * 100, [600, 300, 640, 360], 10)));
    expect(sky.map((x) => [x.range_m, x.speed_mps, x.metric])).toEqual([
      [null, null, false],
      [null, null, false],
    ]);
  });
});
