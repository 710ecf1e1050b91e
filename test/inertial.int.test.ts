import fs from 'node:fs';
import path from 'node:path';
import { openFileAccess } from '../activities/media/drive-source';
import { readEgoStreams } from '../activities/media/ego';
import { extractVideoFrames } from '../activities/media/ffmpeg';
import { header, writeMcap, writeRos1Bag, type BagMessage } from '../testkit/media/bag';
import { ingestAndWait, startIngestStack, uploadDrive, type IngestStack } from '../testkit/media/harness';
import { makeDriveVideo } from '../testkit/media/video';
import { createSessionFixture } from '../testkit/session-fixtures';

/**
 * Ego state, inertial and timeline events on the real stack (docs/ego-state.md): a ROS 1 bag with a
 * camera, an IMU that brakes hard from 1.0 s to 1.6 s, a speed topic that slows accordingly and a
 * GNSS fix goes through the real ingest workflow; its streams, the frames' ego speed, the
 * inertial events, auto-persist, correlation with a driving event, the timeline and the
 * consistency checks are read back through the API. Scene changes and the timeline CRUD run on
 * sessions made in PostgreSQL directly.
 */
let stack: IngestStack;
let jpegs: Buffer[];
const MISSING = '00000000-0000-4000-8000-000000000000';

const call = (method: string, p: string, token: string | undefined, body?: unknown) =>
  stack.api.call(method, p, { token, body });

beforeAll(async () => {
  stack = await startIngestStack();
  const video = makeDriveVideo(stack.dir);
  jpegs = [];
  // The drive's moving first three seconds at 3 fps: nine distinct frames.
  for await (const f of extractVideoFrames({
    ffmpegPath: stack.config.ingest.ffmpegPath,
    input: video,
    fps: 3,
    startMs: 0,
  }))
    if (f.timestampMs < 3000) jpegs.push(f.bytes);
});
afterAll(() => stack?.close());

const NS = 1_000_000_000n;
const MS = 1_000_000n;
const T0 = 1_700_000_000n * NS;
const G = 9.81;
const at = (ms: number) => T0 + BigInt(ms) * MS;
const vec = (x = 0, y = 0, z = 0) => ({ x, y, z });
const zeros = (n: number) => Array.from({ length: n }, () => 0);

/** Hard braking at 6 m/s² from 1000 ms to 1600 ms; the speed falls from 12 to 8.4 m/s meanwhile. */
const BRAKE = { from: 1000, to: 1600, mps2: 6 };
const speedAt = (t: number) =>
  t < BRAKE.from
    ? 12
    : t <= BRAKE.to
      ? 12 - (BRAKE.mps2 * (t - BRAKE.from)) / 1000
      : 12 - (BRAKE.mps2 * 600) / 1000;

const imuMessage = (
  topic: string,
  type: 'sensor_msgs/Imu' | 'sensor_msgs/msg/Imu',
  t: number,
): BagMessage => ({
  topic,
  type,
  timeNs: at(t),
  message: {
    header: header(at(t)),
    orientation: { x: 0, y: 0, z: 0, w: 1 },
    orientation_covariance: zeros(9),
    angular_velocity: vec(),
    angular_velocity_covariance: zeros(9),
    linear_acceleration: vec(t >= BRAKE.from && t <= BRAKE.to ? -BRAKE.mps2 : 0, 0, G),
    linear_acceleration_covariance: zeros(9),
  },
});

/** Every `step` ms over [from, to]. */
const every = (from: number, to: number, step: number) =>
  Array.from({ length: Math.floor((to - from) / step) + 1 }, (_, i) => from + i * step);

/** 10 Hz for 3 s; every message of a 1/3-s bucket shows that bucket's frame. */
const camera = (): BagMessage[] =>
  every(0, 2900, 100).map((t, i) => ({
    topic: '/camera/front',
    type: 'sensor_msgs/CompressedImage',
    timeNs: at(t),
    message: { header: header(at(t), i), format: 'jpeg', data: jpegs[Math.floor((i * 100) / (1000 / 3))]! },
  }));

function driveBag(): Buffer {
  return writeRos1Bag([
    ...camera(),
    ...every(0, 2900, 10).map((t) => imuMessage('/imu/data', 'sensor_msgs/Imu', t)),
    // The speed topic starts 200 ms in: the first frame (at 0) gets no ego speed.
    ...every(200, 2900, 50).map((t): BagMessage => ({
      topic: '/vehicle/twist',
      type: 'geometry_msgs/TwistStamped',
      timeNs: at(t),
      message: { header: header(at(t)), twist: { linear: vec(speedAt(t)), angular: vec() } },
    })),
    ...[0, 1000, 2000, 2900].map((t, i): BagMessage => ({
      topic: '/gps/fix',
      type: 'sensor_msgs/NavSatFix',
      timeNs: at(t),
      message: {
        header: header(at(t)),
        status: { status: 0, service: 1 },
        latitude: 48.137 + i * 1e-4,
        longitude: 11.575,
        altitude: 520,
        position_covariance: zeros(9),
        position_covariance_type: 0,
      },
    })),
  ]);
}

describe('a bag with IMU, speed and GNSS through the real ingest', () => {
  let sessionId: string;

  beforeAll(async () => {
    const uploadId = await uploadDrive(stack, 'ego.bag', driveBag());
    const { started, outcome } = await ingestAndWait(stack, { upload_id: uploadId, kind: 'bag' });
    if (!outcome.ok) throw outcome.error;
    sessionId = started.session_id;
  });

  it('keeps one ego stream per topic on the frames clock and sets each frame its ego speed inside the speed stream', async () => {
    const { db } = stack.api.deps;
    const streams = await db.egoStream.findMany({ where: { sessionId }, orderBy: { kind: 'asc' } });
    expect(streams.map((s) => [s.kind, s.topic, s.messageType, s.tMs.length])).toEqual([
      ['gnss', '/gps/fix', 'sensor_msgs/NavSatFix', 4],
      ['imu', '/imu/data', 'sensor_msgs/Imu', 291],
      ['speed', '/vehicle/twist', 'geometry_msgs/TwistStamped', 55],
    ]);
    const imu = streams.find((s) => s.kind === 'imu')!;
    expect([imu.tMs[0], imu.tMs[100], imu.tMs[290]]).toEqual([0, 1000, 2900]);
    expect((imu.channels as { ax: number[] }).ax[100]).toBe(-6);
    expect(streams.find((s) => s.kind === 'speed')!.tMs[0]).toBe(200);

    const frames = await db.frame.findMany({ where: { sessionId }, orderBy: { index: 'asc' } });
    expect(frames.map((f) => Math.round(f.timestampMs))).toEqual([
      0, 400, 700, 1000, 1400, 1700, 2000, 2400, 2700,
    ]);
    const speeds = frames.map((f) => (f.context as { ego_speed_mps?: number }).ego_speed_mps);
    expect(speeds[0]).toBeUndefined();
    speeds.slice(1).forEach((v, i) => expect(v).toBeCloseTo(speedAt(frames[i + 1]!.timestampMs), 6));
    expect(speeds[4]).toBeCloseTo(9.6, 6);
    // What ingest measured on each frame stays beside the ego speed.
    expect(frames[1]!.context).toMatchObject({
      seq: expect.any(Number),
      exposure: { mean_luma: expect.any(Number) },
    });
  });

  it('answers the ego state: streams with units and statistics, values at a time, samples of a window', async () => {
    const res = await call('GET', `/api/sessions/${sessionId}/egostate?at_ms=1300`, stack.annotator);
    expect(res.status).toBe(200);
    expect(res.body.frames).toEqual({ count: 9, with_ego_speed: 8, speed_topic: '/vehicle/twist' });
    const byKind = Object.fromEntries(res.body.streams.map((s: { kind: string }) => [s.kind, s]));
    expect(byKind.imu).toMatchObject({
      topic: '/imu/data',
      samples: 291,
      t_start_ms: 0,
      t_end_ms: 2900,
      rate_hz: 100,
    });
    expect(byKind.imu.channels.ax).toMatchObject({ unit: 'm/s²', min: -6, max: 0 });
    expect(byKind.imu.at.values.ax).toBe(-6);
    expect(byKind.speed.at.values.speed_mps).toBeCloseTo(10.2, 6);
    expect(byKind.gnss.channels.alt).toMatchObject({ unit: 'm', min: 520, max: 520 });
    expect(byKind.gnss.at.values.lat).toBeCloseTo(48.137 + 1.3e-4, 8);

    const window = await call(
      'GET',
      `/api/sessions/${sessionId}/egostate?kind=speed&samples=true&from_ms=1000&to_ms=1200&limit=3`,
      stack.annotator,
    );
    expect(window.body.streams).toHaveLength(1);
    expect(window.body.streams[0].data).toMatchObject({
      t_ms: [1000, 1050, 1100],
      count: 5,
      truncated: true,
    });
    expect(window.body.streams[0].data.channels.speed_mps[2]).toBeCloseTo(11.4, 6);

    expect(
      (await call('GET', `/api/sessions/${sessionId}/egostate?kind=lidar`, stack.annotator)).status,
    ).toBe(422);
    expect((await call('GET', `/api/sessions/${MISSING}/egostate`, stack.annotator)).status).toBe(404);
    expect((await call('GET', `/api/sessions/${sessionId}/egostate`, undefined)).status).toBe(401);
  });

  it('finds the hard braking where the bag brakes, with thresholds that a query overrides', async () => {
    const res = await call('GET', `/api/sessions/${sessionId}/inertial_events`, stack.annotator);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      rules_version: 'inertial-1',
      imu: { topic: '/imu/data', samples: 291 },
      count: 1,
    });
    expect(res.body.thresholds).toMatchObject({ brake_mps2: 3.5, min_duration_ms: 300, smooth_ms: 100 });
    const [braking] = res.body.events;
    expect(braking).toMatchObject({ kind: 'hard_braking', channel: 'ax', peak: -6 });
    expect(braking.t_start_ms).toBeGreaterThanOrEqual(BRAKE.from);
    expect(braking.t_start_ms).toBeLessThanOrEqual(BRAKE.from + 50);
    expect(braking.t_end_ms).toBeGreaterThanOrEqual(BRAKE.to - 50);
    expect(braking.t_end_ms).toBeLessThanOrEqual(BRAKE.to);

    const raw = await call('GET', `/api/sessions/${sessionId}/inertial_events?smooth_ms=0`, stack.annotator);
    expect(raw.body.events).toMatchObject([{ t_start_ms: BRAKE.from, t_end_ms: BRAKE.to, duration_ms: 600 }]);
    const stricter = await call(
      'GET',
      `/api/sessions/${sessionId}/inertial_events?brake_mps2=7`,
      stack.annotator,
    );
    expect(stricter.body).toMatchObject({ count: 0, events: [] });
    const longer = await call(
      'GET',
      `/api/sessions/${sessionId}/inertial_events?min_duration_ms=700`,
      stack.annotator,
    );
    expect(longer.body.count).toBe(0);
    for (const bad of ['brake_mps2=-1', 'brake_mps2=fast', 'kind=skid', 'threshold=3'])
      expect(
        (await call('GET', `/api/sessions/${sessionId}/inertial_events?${bad}`, stack.annotator)).status,
      ).toBe(422);
    const other = await call(
      'GET',
      `/api/sessions/${sessionId}/inertial_events?topic=/nope`,
      stack.annotator,
    );
    expect([other.status, other.body.detail]).toEqual([
      422,
      expect.stringMatching(/IMU streams: \/imu\/data/),
    ]);
  });

  let brakingEventId: string;

  it('keeps the inertial events as timeline events, and a second run adds none', async () => {
    const first = await call('POST', `/api/sessions/${sessionId}/events/auto`, stack.annotator, {});
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ topic: '/imu/data', detected: 1, existing: [] });
    expect(first.body.created).toHaveLength(1);
    const [kept] = first.body.created;
    expect(kept).toMatchObject({
      session_id: sessionId,
      kind: 'hard_braking',
      source: 'inertial',
      attrs: {
        rules_version: 'inertial-1',
        topic: '/imu/data',
        channel: 'ax',
        peak: -6,
        thresholds: { brake_mps2: 3.5 },
      },
    });
    brakingEventId = kept.event_id;

    const second = await call('POST', `/api/sessions/${sessionId}/events/auto`, stack.annotator, {
      smooth_ms: 0,
    });
    expect(second.body).toMatchObject({
      detected: 1,
      created: [],
      existing: [{ event_id: brakingEventId, kind: 'hard_braking' }],
    });
    const list = await call('GET', `/api/sessions/${sessionId}/events?source=inertial`, stack.annotator);
    expect(list.body).toMatchObject({ count: 1, truncated: false, items: [{ event_id: brakingEventId }] });
    expect(
      (await call('POST', `/api/sessions/${sessionId}/events/auto`, stack.annotator, { brake: 1 })).status,
    ).toBe(422);
    expect((await call('POST', `/api/sessions/${MISSING}/events/auto`, stack.annotator, {})).status).toBe(
      404,
    );
  });

  it('ties the timeline event to the driving event it overlaps, never to a rejected one', async () => {
    const { db } = stack.api.deps;
    const rejected = await db.drivingEvent.create({
      data: { sessionId, kind: 'hard_braking', tStartMs: 900, tEndMs: 1800, state: 'rejected' },
    });
    const driving = await db.drivingEvent.create({
      data: { sessionId, kind: 'hard_braking', tStartMs: 950, tEndMs: 1650, evidence: { from: 'test' } },
    });
    const elsewhere = await db.drivingEvent.create({
      data: { sessionId, kind: 'cut_in', tStartMs: 2500, tEndMs: 2700 },
    });
    const res = await call('POST', `/api/sessions/${sessionId}/events/correlate`, stack.annotator, {});
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      driving_events: 3,
      tied: [
        {
          event_id: brakingEventId,
          driving_event_id: driving.id,
          previous_driving_event_id: null,
          changed: true,
        },
      ],
      unmatched: [],
    });
    const stored = await db.timelineEvent.findUniqueOrThrow({ where: { id: brakingEventId } });
    expect(stored.drivingEventId).toBe(driving.id);
    // Run again: the tie is kept.
    const again = await call('POST', `/api/sessions/${sessionId}/events/correlate`, stack.annotator, {});
    expect(again.body).toMatchObject({ tied: [], kept: [brakingEventId] });

    const timeline = await call('GET', `/api/sessions/${sessionId}/timeline`, stack.annotator);
    expect(timeline.status).toBe(200);
    expect(timeline.body).toMatchObject({
      duration_ms: 2900,
      frames: { count: 9, t_start_ms: 0, t_end_ms: expect.closeTo(2700, 3) },
      count: 3,
    });
    expect(timeline.body.streams).toEqual([
      { kind: 'gnss', topic: '/gps/fix', samples: 4, t_start_ms: 0, t_end_ms: 2900 },
      { kind: 'imu', topic: '/imu/data', samples: 291, t_start_ms: 0, t_end_ms: 2900 },
      { kind: 'speed', topic: '/vehicle/twist', samples: 55, t_start_ms: 200, t_end_ms: 2900 },
    ]);
    expect(timeline.body.items.map((i: { type: string; id: string }) => [i.type, i.id])).toEqual([
      ['driving_event', driving.id],
      ['timeline_event', brakingEventId],
      ['driving_event', elsewhere.id],
    ]);
    expect(timeline.body.items[0]).toMatchObject({ timeline_event_ids: [brakingEventId], state: 'proposed' });
    expect(timeline.body.items[1]).toMatchObject({
      source: 'inertial',
      driving_event_id: driving.id,
      frames: { first_index: 4, last_index: 4, frames: 1 },
    });
    const withRejected = await call(
      'GET',
      `/api/sessions/${sessionId}/timeline?include_rejected=true&to_ms=1100`,
      stack.annotator,
    );
    expect(withRejected.body.items.map((i: { id: string }) => i.id)).toEqual([
      rejected.id,
      driving.id,
      brakingEventId,
    ]);
  });

  it('checks the consistency of the ego state and timeline, naming what is off', async () => {
    const res = await call('GET', `/api/sessions/${sessionId}/qa/consistency`, stack.annotator);
    expect(res.status).toBe(200);
    const checks = Object.fromEntries(res.body.checks.map((c: { check: string }) => [c.check, c]));
    // The speed topic starts 200 ms after the first frame: it covers 2500 of the frames' 2700 ms.
    expect(res.body.passed).toBe(false);
    expect(checks.ego_coverage).toMatchObject({
      status: 'fail',
      issue_count: 1,
      issues: [{ topic: '/vehicle/twist' }],
    });
    expect(checks.ego_coverage.issues[0].coverage).toBeCloseTo(2500 / 2700, 2);
    expect(checks.stream_gaps).toMatchObject({ status: 'pass' });
    expect(checks.frame_speed).toMatchObject({
      status: 'pass',
      topic: '/vehicle/twist',
      frames_in_stream: 8,
    });
    expect(checks.events_in_frames).toMatchObject({ status: 'pass' });
    expect(checks.correlations).toMatchObject({ status: 'pass' });
    expect(checks.tracks_on_frames).toMatchObject({ status: 'skipped', reason: 'the session has no tracks' });

    const lenient = await call(
      'GET',
      `/api/sessions/${sessionId}/qa/consistency?min_coverage=0.9`,
      stack.annotator,
    );
    expect(lenient.body.passed).toBe(true);
    const strictGaps = await call(
      'GET',
      `/api/sessions/${sessionId}/qa/consistency?max_gap_ms=20`,
      stack.annotator,
    );
    const gaps = strictGaps.body.checks.find((c: { check: string }) => c.check === 'stream_gaps');
    // The speed topic samples every 50 ms, the GNSS is not checked.
    expect(gaps).toMatchObject({ status: 'fail', issue_count: 54 });
    expect(
      (await call('GET', `/api/sessions/${sessionId}/qa/consistency?min_coverage=2`, stack.annotator)).status,
    ).toBe(422);
  });
});

describe('ego topics of an MCAP file in ROS 2 spellings', () => {
  it('reads Imu, Odometry and a Float64 speed topic, and leaves a Float64 that is no speed', async () => {
    const mcap = await writeMcap([
      ...camera().slice(0, 3),
      ...every(50, 250, 100).map((t) => imuMessage('/imu', 'sensor_msgs/msg/Imu', t)),
      ...[100, 200].map((t): BagMessage => ({
        topic: '/odom',
        type: 'nav_msgs/msg/Odometry',
        timeNs: at(t),
        message: {
          header: header(at(t)),
          child_frame_id: 'base_link',
          pose: { pose: { position: vec(), orientation: { x: 0, y: 0, z: 0, w: 1 } }, covariance: zeros(36) },
          twist: { twist: { linear: vec(3, 4), angular: vec() }, covariance: zeros(36) },
        },
      })),
      { topic: '/vehicle/speed', type: 'std_msgs/msg/Float64', timeNs: at(150), message: { data: 7.5 } },
      { topic: '/battery_voltage', type: 'std_msgs/msg/Float64', timeNs: at(150), message: { data: 12.6 } },
    ]);
    const file = path.join(stack.dir, 'ego.mcap');
    fs.writeFileSync(file, mcap);
    const access = await openFileAccess(file);
    try {
      const read = await readEgoStreams(access);
      expect(read.skipped).toEqual([]);
      expect(read.streams.map((s) => [s.kind, s.topic, s.messageType, s.tMs])).toEqual([
        ['imu', '/imu', 'sensor_msgs/msg/Imu', [50, 150, 250]],
        ['speed', '/odom', 'nav_msgs/msg/Odometry', [100, 200]],
        ['speed', '/vehicle/speed', 'std_msgs/msg/Float64', [150]],
      ]);
      expect(read.streams[1]!.channels.speed_mps).toEqual([5, 5]);
      expect(read.streams[0]!.channels.az).toEqual([G, G, G]);
    } finally {
      await access.close();
    }
  });
});

describe('timeline events by hand', () => {
  let sessionId: string;
  let otherDriving: string;

  beforeAll(async () => {
    const { db, storage } = stack.api.deps;
    const fixture = await createSessionFixture({ db, storage }, { frames: 4, storeImages: false });
    sessionId = fixture.session.id;
    const other = await createSessionFixture({ db, storage }, { frames: 1, storeImages: false });
    otherDriving = (
      await db.drivingEvent.create({
        data: { sessionId: other.session.id, kind: 'cut_in', tStartMs: 0, tEndMs: 1 },
      })
    ).id;
  });

  it('creates, lists, edits and deletes, checking spans against the drive', async () => {
    const created = await call('POST', `/api/sessions/${sessionId}/events`, stack.annotator, {
      kind: 'construction_zone',
      t_start_ms: 100,
      t_end_ms: 900,
      label: 'cones on the right',
      attrs: { lanes_closed: 1 },
    });
    expect([created.status, created.body.detail]).toEqual([201, undefined]);
    expect(created.body).toMatchObject({
      kind: 'construction_zone',
      t_start_ms: 100,
      t_end_ms: 900,
      source: 'human',
      label: 'cones on the right',
      attrs: { lanes_closed: 1 },
      driving_event_id: null,
    });
    const id = created.body.event_id;
    const instant = await call('POST', `/api/sessions/${sessionId}/events`, stack.reviewer, {
      kind: 'horn',
      t_start_ms: 50,
    });
    expect([instant.status, instant.body.t_end_ms, instant.body.label]).toEqual([201, null, null]);

    const list = await call('GET', `/api/sessions/${sessionId}/events`, stack.annotator);
    expect(list.body.items.map((e: { kind: string }) => e.kind)).toEqual(['horn', 'construction_zone']);
    const window = await call('GET', `/api/sessions/${sessionId}/events?from_ms=60&limit=5`, stack.annotator);
    expect(window.body.items.map((e: { event_id: string }) => e.event_id)).toEqual([id]);

    const patched = await call('PATCH', `/api/events/${id}`, stack.annotator, {
      t_end_ms: 1000,
      label: null,
    });
    expect([patched.status, patched.body.t_end_ms, patched.body.label]).toEqual([200, 1000, null]);
    // The fixture's frames are at 0, 333, 667 and 1000 ms: the drive ends at 1000.
    const late = await call('PATCH', `/api/events/${id}`, stack.annotator, { t_end_ms: 1001 });
    expect([late.status, late.body.detail]).toEqual([
      422,
      expect.stringMatching(/after the drive \(1000 ms\)/),
    ]);
    const backwards = await call('PATCH', `/api/events/${id}`, stack.annotator, {
      t_start_ms: 1000,
      t_end_ms: 10,
    });
    expect(backwards.status).toBe(422);
    const movedPastEnd = await call('PATCH', `/api/events/${id}`, stack.annotator, { t_start_ms: 950 });
    expect(movedPastEnd.status).toBe(200);
    expect(
      (await call('PATCH', `/api/events/${id}`, stack.annotator, { t_start_ms: 999, t_end_ms: 998 })).status,
    ).toBe(422);
    const foreign = await call('PATCH', `/api/events/${id}`, stack.annotator, {
      driving_event_id: otherDriving,
    });
    expect([foreign.status, foreign.body.detail]).toEqual([422, expect.stringMatching(/no driving event/)]);
    expect((await call('PATCH', `/api/events/${id}`, stack.annotator, {})).status).toBe(422);
    expect((await call('PATCH', `/api/events/${MISSING}`, stack.annotator, { label: 'x' })).status).toBe(404);
    expect((await call('PATCH', '/api/events/not-a-uuid', stack.annotator, { label: 'x' })).status).toBe(422);

    const audit = await stack.api.deps.db.auditLog.findMany({
      where: { subjectId: id },
      orderBy: { createdAt: 'asc' },
    });
    expect(audit.map((a) => a.action)).toEqual([
      'timeline_event.created',
      'timeline_event.updated',
      'timeline_event.updated',
    ]);

    expect((await call('DELETE', `/api/events/${id}`, stack.annotator)).status).toBe(403);
    const deleted = await call('DELETE', `/api/events/${id}`, stack.reviewer);
    expect([deleted.status, deleted.body]).toEqual([
      200,
      { event_id: id, session_id: sessionId, deleted: true },
    ]);
    expect((await call('DELETE', `/api/events/${id}`, stack.reviewer)).status).toBe(404);
  });

  it('answers malformed bodies with 422 and unknown sessions with 404', async () => {
    const post = (body: unknown, sid = sessionId) =>
      call('POST', `/api/sessions/${sid}/events`, stack.annotator, body);
    for (const body of [
      {},
      { kind: 'Bad Kind', t_start_ms: 0 },
      { kind: 'ok', t_start_ms: -1 },
      { kind: 'ok', t_start_ms: 10, t_end_ms: 5 },
      { kind: 'ok', t_start_ms: 10, extra: true },
      { kind: 'ok', t_start_ms: 10, attrs: { deep: { deeper: { deepest: { too: 1 } } } } },
    ])
      expect([(await post(body)).status, body]).toEqual([422, body]);
    expect((await post({ kind: 'ok', t_start_ms: 5000 })).status).toBe(422);
    expect((await post({ kind: 'ok', t_start_ms: 0 }, MISSING)).status).toBe(404);
    expect((await call('GET', `/api/sessions/${MISSING}/events`, stack.annotator)).status).toBe(404);
    expect(
      (await call('GET', `/api/sessions/${sessionId}/events?source=robot`, stack.annotator)).status,
    ).toBe(422);
  });

  it('refuses inertial events by name for a session without an IMU stream', async () => {
    const read = await call('GET', `/api/sessions/${sessionId}/inertial_events`, stack.annotator);
    expect([read.status, read.body.detail]).toEqual([422, expect.stringMatching(/has no IMU stream/)]);
    const auto = await call('POST', `/api/sessions/${sessionId}/events/auto`, stack.annotator, {});
    expect(auto.status).toBe(422);
    const qa = await call('GET', `/api/sessions/${sessionId}/qa/consistency`, stack.annotator);
    expect(qa.body.checks.find((c: { check: string }) => c.check === 'ego_coverage')).toMatchObject({
      status: 'skipped',
      reason: 'the session has no ego streams',
    });
  });
});

describe('scene changes', () => {
  it('keeps a change of light and a cut found in what frames hold, once', async () => {
    const { db, storage } = stack.api.deps;
    const luma = [120, 122, 119, 35, 36, 37];
    // A light change between frames 2 and 3, a cut (every bit flips) between frames 4 and 5.
    const phash = [
      '0f0f0f0f0f0f0f0f',
      '0f0f0f0f0f0f0f0e',
      '0f0f0f0f0f0f0f0c',
      '0f0f0f0f0f0f0f0c',
      '0f0f0f0f0f0f0f0d',
      'f0f0f0f0f0f0f0f2',
    ];
    const { session, frames } = await createSessionFixture(
      { db, storage },
      { frames: 6, fps: 2, storeImages: false, context: (i) => ({ exposure: { mean_luma: luma[i]! } }) },
    );
    for (const [i, f] of frames.entries())
      await db.frame.update({ where: { id: f.id }, data: { phash: phash[i]! } });

    const res = await call('POST', `/api/sessions/${session.id}/events/scene`, stack.annotator, {});
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      rules_version: 'scene-1',
      frame_pairs: 5,
      pairs_compared: 5,
      detected: 2,
    });
    expect(res.body.created).toMatchObject([
      {
        kind: 'scene_change',
        source: 'scene',
        t_start_ms: 1000,
        t_end_ms: 1500,
        attrs: {
          causes: ['lighting'],
          max_luma_delta: 84,
          from_frame_id: frames[2]!.id,
          to_frame_id: frames[3]!.id,
        },
      },
      {
        kind: 'scene_change',
        t_start_ms: 2000,
        t_end_ms: 2500,
        attrs: { causes: ['appearance'], max_phash_distance: 64 },
      },
    ]);
    const again = await call('POST', `/api/sessions/${session.id}/events/scene`, stack.annotator, {
      luma_delta: 50,
    });
    expect(again.body).toMatchObject({ detected: 2, created: [] });
    expect(again.body.existing).toHaveLength(2);
    expect(await db.timelineEvent.count({ where: { sessionId: session.id } })).toBe(2);
    expect(
      (
        await call('POST', `/api/sessions/${session.id}/events/scene`, stack.annotator, {
          phash_distance: 65,
        })
      ).status,
    ).toBe(422);

    const bare = await createSessionFixture({ db, storage }, { frames: 3, storeImages: false });
    const refused = await call('POST', `/api/sessions/${bare.session.id}/events/scene`, stack.annotator, {});
    expect([refused.status, refused.body.detail]).toEqual([422, expect.stringMatching(/nothing to compare/)]);
    expect((await call('POST', `/api/sessions/${MISSING}/events/scene`, stack.annotator, {})).status).toBe(
      404,
    );
  });
});
