import {
  chooseSpeedStream,
  coverageOf,
  EgoStreamBuilder,
  egoKindOf,
  interpolateAt,
  speedsAt,
  streamGaps,
  summarizeStream,
  type EgoStreamData,
} from './streams';

const speedStream = (topic: string, tMs: number[], speeds: Array<number | null>): EgoStreamData => ({
  kind: 'speed',
  topic,
  messageType: 'geometry_msgs/TwistStamped',
  tMs,
  channels: { speed_mps: speeds },
});

describe('egoKindOf', () => {
  it('knows the ego types in ROS 1 and ROS 2 spellings, and Float speeds only on a topic named speed', () => {
    expect(egoKindOf('sensor_msgs/Imu', '/imu')).toBe('imu');
    expect(egoKindOf('sensor_msgs/msg/Imu', '/imu')).toBe('imu');
    expect(egoKindOf('sensor_msgs/NavSatFix', '/fix')).toBe('gnss');
    expect(egoKindOf('geometry_msgs/msg/TwistStamped', '/vel')).toBe('speed');
    expect(egoKindOf('nav_msgs/Odometry', '/odom')).toBe('speed');
    expect(egoKindOf('std_msgs/Float64', '/vehicle/Speed')).toBe('speed');
    expect(egoKindOf('std_msgs/msg/Float32', '/wheel_speed')).toBe('speed');
    expect(egoKindOf('std_msgs/Float64', '/steering_angle')).toBeNull();
    expect(egoKindOf('sensor_msgs/Image', '/speed_cam')).toBeNull();
  });
});

describe('EgoStreamBuilder', () => {
  it('decodes each type into its channels, ordered by time', () => {
    const imu = new EgoStreamBuilder('/imu', 'sensor_msgs/msg/Imu');
    imu.add(20, { linear_acceleration: { x: -4, y: 0.5, z: 9.8 }, angular_velocity: { x: 0, y: 0, z: 0.2 } });
    imu.add(10, { linear_acceleration: { x: 1, y: 0, z: 9.8 }, angular_velocity: { x: 0, y: 0, z: 0 } });
    expect(imu.build()).toEqual({
      kind: 'imu',
      topic: '/imu',
      messageType: 'sensor_msgs/msg/Imu',
      tMs: [10, 20],
      channels: { ax: [1, -4], ay: [0, 0.5], az: [9.8, 9.8], gx: [0, 0], gy: [0, 0], gz: [0, 0.2] },
    });

    const fix = new EgoStreamBuilder('/fix', 'sensor_msgs/NavSatFix');
    fix.add(0, { latitude: 48.1, longitude: 11.5, altitude: NaN, status: { status: 0 } });
    expect(fix.build().channels).toEqual({ lat: [48.1], lon: [11.5], alt: [null], status: [0] });

    const twist = new EgoStreamBuilder('/vel', 'geometry_msgs/TwistStamped');
    twist.add(0, { twist: { linear: { x: -3, y: 4, z: 0 } } });
    const odom = new EgoStreamBuilder('/odom', 'nav_msgs/Odometry');
    odom.add(0, { twist: { twist: { linear: { x: 6, y: 8, z: 0 } } } });
    const float = new EgoStreamBuilder('/speed', 'std_msgs/Float32');
    float.add(0, { data: -2.5 });
    expect([twist, odom, float].map((b) => b.build().channels.speed_mps)).toEqual([[5], [10], [2.5]]);
  });

  it('refuses a topic that carries no ego state', () => {
    expect(() => new EgoStreamBuilder('/cam', 'sensor_msgs/Image')).toThrow(/carries no ego state/);
  });
});

describe('interpolateAt', () => {
  const t = [100, 200, 300];
  it('interpolates linearly inside the span and gives nothing outside it', () => {
    expect(interpolateAt(t, [10, 20, 40], 150)).toBe(15);
    expect(interpolateAt(t, [10, 20, 40], 275)).toBe(35);
    expect(interpolateAt(t, [10, 20, 40], 300)).toBe(40);
    expect(interpolateAt(t, [10, 20, 40], 100)).toBe(10);
    expect(interpolateAt(t, [10, 20, 40], 99)).toBeNull();
    expect(interpolateAt(t, [10, 20, 40], 301)).toBeNull();
    expect(interpolateAt([], [], 0)).toBeNull();
  });
  it('makes nothing up across a null sample', () => {
    expect(interpolateAt(t, [10, null, 40], 150)).toBeNull();
    expect(interpolateAt(t, [10, null, 40], 200)).toBeNull();
  });
});

describe('chooseSpeedStream', () => {
  it('takes the stream giving a speed to most frames, then the first by topic', () => {
    const short = speedStream('/a_speed', [0, 100], [1, 1]);
    const long = speedStream('/b_speed', [0, 1000], [2, 2]);
    expect(chooseSpeedStream([short, long], [0, 500, 900])?.topic).toBe('/b_speed');
    expect(chooseSpeedStream([long, { ...short, tMs: [0, 1000] }], [0, 500])?.topic).toBe('/a_speed');
    expect(chooseSpeedStream([], [0])).toBeNull();
    expect(speedsAt(long, [-1, 500])).toEqual([null, 2]);
  });
});

describe('stream measures', () => {
  it('finds gaps, coverage and per-channel statistics', () => {
    expect(streamGaps([0, 10, 20, 600, 610], 500)).toEqual([{ from_ms: 20, to_ms: 600, gap_ms: 580 }]);
    expect(coverageOf([100, 600], 0, 1000)).toBe(0.5);
    expect(coverageOf([0, 2000], 0, 1000)).toBe(1);
    expect(coverageOf([], 0, 1000)).toBe(0);
    expect(coverageOf([0, 10], 5, 5)).toBe(1);
    const s = summarizeStream(speedStream('/v_speed', [0, 500, 1000], [2, null, 4]));
    expect(s).toMatchObject({ samples: 3, t_start_ms: 0, t_end_ms: 1000, rate_hz: 2 });
    expect(s.channels.speed_mps).toEqual({ unit: 'm/s', min: 2, max: 4, mean: 3, nulls: 1 });
  });
});
