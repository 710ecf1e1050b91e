import { defaultCamera } from '../critic';
import { trackDynamics, type TrackPoint } from '../dynamics';
import type { Box } from '../geometry/boxes';
import {
  DERIVER_VERSION,
  DRIVING_EVENT_KINDS,
  DRIVING_EVENT_THRESHOLDS,
  deriveDrivingEvents,
  drivingEventTaxonomy,
  sameEvent,
  type DeriveInput,
  type EgoSample,
  type InertialEvent,
  type RuleTrack,
} from '.';

const W = 1280;
const H = 720;
const cam = defaultCamera(W, H);
/** Default camera: f = 640 px, horizon y 360, 1.4 m up; the box bottom of a ground point z metres ahead. */
const bottomAt = (z: number) => 360 + (1.4 * 640) / z;
const FPS3 = 1000 / 3;

const box = (cx: number, bottom: number, w: number, h: number): Box => [
  cx - w / 2,
  bottom - h,
  cx + w / 2,
  bottom,
];

function track(
  id: string,
  className: string,
  l1: string,
  boxes: Box[],
  opts: { stepMs?: number; ego?: (i: number) => number | null } = {},
): RuleTrack {
  const step = opts.stepMs ?? FPS3;
  const points: TrackPoint[] = boxes.map((b, i) => ({
    object_id: `${id}-o${i}`,
    frame_id: `f${i}`,
    frame_index: i,
    ts_ms: i * step,
    box: b,
    width: W,
    height: H,
    class_name: className,
    l1,
    camera: cam,
    ego_speed_mps: opts.ego?.(i) ?? null,
  }));
  return { track_id: id, points, dynamics: trackDynamics(points), dynamics_from: 'computed' };
}

const derive = (input: Partial<DeriveInput>) =>
  deriveDrivingEvents({ tracks: [], ego: [], inertial: [], ...input });
const kinds = (input: Partial<DeriveInput>) => derive(input).events.map((e) => e.kind);

/** A car from the left lane into the lower centre of the view, then staying there. */
const cutInCar = (id = 'car') =>
  track(
    id,
    'car',
    'vehicle',
    [192, 260, 330, 400, 560, 620, 640, 640, 640, 640, 640, 640].map((cx) => box(cx, 560, 160, 120)),
  );
/** A pedestrian walking right to left across the road ahead, 64 px a frame. */
const walker = (id = 'ped', className = 'pedestrian', l1 = 'vru') =>
  track(
    id,
    className,
    l1,
    Array.from({ length: 12 }, (_, i) => box(1000 - 64 * i, 500, 40, 100)),
  );

describe('cut_in', () => {
  it('fires for a vehicle entering the corridor from the side and staying', () => {
    const { events } = derive({ tracks: [cutInCar()] });
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      kind: 'cut_in',
      t_start_ms: 3 * FPS3,
      t_end_ms: 11 * FPS3,
      start_frame: 'f3',
      end_frame: 'f11',
      track_ids: ['car'],
      classes: ['car'],
      evidence: { from_side: 'left', outside_points: 4, entry_frame_index: 4, dynamics_from: 'computed' },
    });
    expect(events[0]!.evidence.lateral_travel).toBe(0.188);
    expect(events[0]!.evidence.stay_ms).toBeCloseTo(7 * FPS3, 2);
  });

  it('does not fire when it leaves again too soon, was ahead all along, or came from one point beside', () => {
    const leaves = track(
      'c1',
      'car',
      'vehicle',
      [192, 260, 330, 400, 560, 620, 400, 300, 200].map((cx) => box(cx, 560, 160, 120)),
    );
    const ahead = track(
      'c2',
      'car',
      'vehicle',
      Array.from({ length: 10 }, (_, i) => box(640 + 4 * i, 500 + 5 * i, 160, 120)),
    );
    const oneBeside = track(
      'c3',
      'car',
      'vehicle',
      [400, 560, 600, 640, 640, 640, 640, 640].map((cx) => box(cx, 560, 160, 120)),
    );
    expect(kinds({ tracks: [leaves, ahead, oneBeside] })).toEqual([]);
    // Above the near band (bottom at 0.5 of the height) it never enters the corridor.
    const far = track(
      'c4',
      'car',
      'vehicle',
      [192, 260, 330, 400, 560, 620, 640, 640, 640, 640].map((cx) => box(cx, 360, 60, 40)),
    );
    expect(kinds({ tracks: [far] })).toEqual([]);
  });

  it('is for vehicles only: a pedestrian making the same move is a crossing', () => {
    const ped = cutInCar('p');
    const asPed = { ...ped, points: ped.points.map((p) => ({ ...p, class_name: 'pedestrian', l1: 'vru' })) };
    expect(kinds({ tracks: [asPed] })).toEqual(['pedestrian_crossing']);
  });
});

describe('pedestrian_crossing', () => {
  it('fires for a vulnerable road user crossing the corridor, from the last point beside to where it leaves', () => {
    const { events } = derive({ tracks: [walker()] });
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      kind: 'pedestrian_crossing',
      t_start_ms: 2 * FPS3,
      t_end_ms: 9 * FPS3,
      track_ids: ['ped'],
      classes: ['pedestrian'],
      evidence: { from_side: 'right', to_side: 'left', crossed_fully: true, inside_points: 6 },
    });
  });

  it('says so when the walker turns back', () => {
    const back = track(
      'ped',
      'pedestrian',
      'vru',
      [1000, 936, 872, 808, 744, 808, 872, 936].map((cx) => box(cx, 500, 40, 100)),
    );
    expect(derive({ tracks: [back] }).events[0]).toMatchObject({
      kind: 'pedestrian_crossing',
      t_start_ms: 2 * FPS3,
      t_end_ms: 6 * FPS3,
      evidence: { from_side: 'right', to_side: 'right', crossed_fully: false, inside_points: 3 },
    });
  });

  it('does not fire beside the road, for a small edge wobble, or for vehicles', () => {
    const kerb = track(
      'k',
      'pedestrian',
      'vru',
      Array.from({ length: 8 }, (_, i) => box(1050, 450 + 10 * i, 40, 100)),
    );
    // In and out across the corridor's edge by a few pixels: under min_lateral_travel.
    const edge = 1280 * (0.5 + 0.15);
    const wobble = track(
      'w',
      'pedestrian',
      'vru',
      [edge + 10, edge - 10, edge + 10, edge - 10].map((cx) => box(cx, 500, 40, 100)),
    );
    expect(kinds({ tracks: [kerb, wobble] })).toEqual([]);
    const car = walker('v', 'car', 'vehicle');
    expect(kinds({ tracks: [car] })).not.toContain('pedestrian_crossing');
  });
});

describe('close_pass', () => {
  // Beside on the right, coming closer: bottom 560 (4.8 m away), 640 (3.4 m), 700 (2.85 m), 715 (2.72 m).
  const bottoms = [560, 640, 700, 715, 715];

  it('fires over the run of points closer than max_distance_m beside the corridor', () => {
    const passing = track(
      'm',
      'motorcycle',
      'two_wheeler',
      bottoms.map((b) => box(900, b, 80, 120)),
    );
    const { events } = derive({ tracks: [passing] });
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      kind: 'close_pass',
      t_start_ms: 2 * FPS3,
      t_end_ms: 4 * FPS3,
      track_ids: ['m'],
      evidence: { side: 'right', nearest_frame_index: 3 },
    });
    const ev = events[0]!.evidence as { min_distance_m: number; forward_m: number };
    expect(ev.min_distance_m).toBeLessThan(DRIVING_EVENT_THRESHOLDS.close_pass.max_distance_m);
    expect(ev.forward_m).toBeCloseTo((1.4 * 640) / (715 - 360), 3);
  });

  it('does not fire for the same distances in the corridor ahead, nor when far beside', () => {
    const ahead = track(
      'a',
      'car',
      'vehicle',
      bottoms.map((b) => box(640, b, 80, 120)),
    );
    const far = track(
      'f',
      'car',
      'vehicle',
      bottoms.map((b) => box(1200, b - 150, 80, 120)),
    );
    expect(kinds({ tracks: [ahead, far] })).toEqual([]);
  });
});

describe('lead_vehicle_braking', () => {
  const step = 100;
  const ts = (i: number) => (i * step) / 1000;
  /** The lead ahead in the corridor whose range follows `range(t)`, the ego at `ego(t)`. */
  const lead = (range: (t: number) => number, ego: (t: number) => number) =>
    track(
      'lead',
      'car',
      'vehicle',
      Array.from({ length: 11 }, (_, i) => box(640, bottomAt(range(ts(i))), 100, 80)),
      { stepMs: step, ego: (i) => ego(ts(i)) },
    );

  it('fires when the lead decelerates at 6 m/s² while the ego holds 10 m/s', () => {
    const { events, ran } = derive({
      tracks: [
        lead(
          (t) => 20 - 3 * t * t,
          () => 10,
        ),
      ],
    });
    expect(ran).toContain('lead_vehicle_braking');
    expect(events.map((e) => e.kind)).toEqual(['lead_vehicle_braking']);
    const e = events[0]!;
    expect([e.t_start_ms, e.t_end_ms, e.track_ids]).toEqual([0, 1000, ['lead']]);
    expect(e.evidence).toMatchObject({
      range_from_m: expect.closeTo(20, 2),
      range_to_m: expect.closeTo(17, 2),
    });
    expect(e.evidence.peak_decel_mps2).toBeCloseTo(6, 2);
    expect(e.evidence.closing_mps as number).toBeGreaterThan(
      DRIVING_EVENT_THRESHOLDS.lead_vehicle_braking.min_closing_mps,
    );
  });

  it('does not fire when the gap only closes at a steady rate, or when the ego brakes with it', () => {
    const slower = lead(
      (t) => 20 - 3 * t,
      () => 10,
    );
    expect(kinds({ tracks: [slower] })).toEqual([]);
    const together = lead(
      () => 20,
      (t) => 10 - 4 * t,
    );
    expect(kinds({ tracks: [together] })).toEqual([]);
  });

  it('is skipped, saying why, without ego speed', () => {
    const noEgo = track(
      'lead',
      'car',
      'vehicle',
      Array.from({ length: 11 }, (_, i) => box(640, bottomAt(20 - 3 * ts(i) * ts(i)), 100, 80)),
      { stepMs: step },
    );
    const d = derive({ tracks: [noEgo] });
    expect(d.events).toEqual([]);
    expect(d.ran).not.toContain('lead_vehicle_braking');
    expect(d.skipped.map((s) => s.kind)).toContain('lead_vehicle_braking');
  });
});

describe('hard_braking', () => {
  const ego = (speeds: number[]): EgoSample[] =>
    speeds.map((speed_mps, i) => ({ frame_id: `f${i}`, ts_ms: i * 100, speed_mps }));

  it('fires from the ego speed for a run decelerating at 3 m/s² or more', () => {
    const { events, ran } = derive({ ego: ego([15, 15, 14.4, 13.8, 13.2, 12.6, 12.6]) });
    expect(ran).toContain('hard_braking');
    expect(events).toEqual([
      expect.objectContaining({
        kind: 'hard_braking',
        t_start_ms: 100,
        t_end_ms: 500,
        start_frame: 'f1',
        end_frame: 'f5',
        track_ids: [],
        evidence: expect.objectContaining({ basis: 'ego_speed', speed_from_mps: 15, speed_to_mps: 12.6 }),
      }),
    ]);
    expect(events[0]!.evidence.mean_decel_mps2).toBeCloseTo(6, 6);
  });

  it('does not fire for gentle braking or a one-pair dip shorter than min_duration_ms', () => {
    expect(kinds({ ego: ego([15, 14.9, 14.8, 14.7, 14.6]) })).toEqual([]);
    const dip = [15, 15, 14, 14].map((speed_mps, i) => ({ frame_id: `f${i}`, ts_ms: i * 200, speed_mps }));
    expect(kinds({ ego: dip })).toEqual([]);
  });

  const imu = (kind: string, id: string): InertialEvent => ({
    id,
    kind,
    t_start_ms: 1200,
    t_end_ms: 1800,
    attrs: { peak_mps2: 5.1 },
  });

  it('takes the IMU events when the session has any, and then not the ego speed', () => {
    const braking = ego([15, 15, 14.4, 13.8, 13.2, 12.6, 12.6]);
    const { events } = derive({ ego: braking, inertial: [imu('hard_braking', 'te1'), imu('bump', 'te2')] });
    expect(events).toEqual([
      expect.objectContaining({
        kind: 'hard_braking',
        t_start_ms: 1200,
        t_end_ms: 1800,
        start_frame: null,
        evidence: { basis: 'imu', timeline_event_id: 'te1', imu: { peak_mps2: 5.1 } },
      }),
    ]);
    expect(kinds({ ego: braking, inertial: [imu('bump', 'te2')] })).toEqual([]);
  });

  it('is skipped without inertial events or ego speed', () => {
    const d = derive({});
    expect(d.skipped.map((s) => s.kind)).toEqual(['lead_vehicle_braking', 'hard_braking']);
    expect(d.ran).toEqual(['cut_in', 'pedestrian_crossing', 'close_pass']);
    expect(d.deriver_version).toBe(DERIVER_VERSION);
  });
});

describe('a session of several tracks', () => {
  it('finds exactly the cut-in and the crossing, in time order, and nothing for a parked car', () => {
    const parked = track(
      'parked',
      'car',
      'vehicle',
      Array.from({ length: 12 }, () => box(1100, 520, 160, 120)),
    );
    const { events } = derive({ tracks: [parked, walker(), cutInCar()] });
    expect(events.map((e) => [e.kind, e.track_ids])).toEqual([
      ['pedestrian_crossing', ['ped']],
      ['cut_in', ['car']],
    ]);
  });
});

describe('sameEvent', () => {
  const e = { kind: 'cut_in', t_start_ms: 1000, t_end_ms: 2000, track_ids: ['a', 'b'] };
  it('matches one kind with overlapping spans and the same tracks in any order', () => {
    expect(sameEvent(e, { ...e, t_start_ms: 1500, t_end_ms: 2500, track_ids: ['b', 'a'] })).toBe(true);
    expect(sameEvent(e, { ...e, t_start_ms: 2000, t_end_ms: 2100 })).toBe(true);
  });
  it('tells apart other kinds, disjoint spans and other tracks', () => {
    expect(sameEvent(e, { ...e, kind: 'close_pass' })).toBe(false);
    expect(sameEvent(e, { ...e, t_start_ms: 2001, t_end_ms: 3000 })).toBe(false);
    expect(sameEvent(e, { ...e, track_ids: ['a'] })).toBe(false);
    expect(sameEvent(e, { ...e, track_ids: ['a', 'c'] })).toBe(false);
  });
});

describe('taxonomy', () => {
  it('lists every kind with its rule, participants and the thresholds the rules use', () => {
    const t = drivingEventTaxonomy();
    expect(t.kinds.map((k) => k.name)).toEqual([...DRIVING_EVENT_KINDS]);
    for (const k of t.kinds) {
      expect(k.rule.length).toBeGreaterThan(20);
      expect(k.thresholds).toBe(DRIVING_EVENT_THRESHOLDS[k.name]);
    }
    expect(t.kinds.find((k) => k.name === 'pedestrian_crossing')!.participants).toEqual(['vru']);
    expect(t.deriver_version).toBe(DERIVER_VERSION);
  });
});
