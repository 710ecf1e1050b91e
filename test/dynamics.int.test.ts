import { useApiForFile } from '../testkit/api';
import { createSessionFixture } from '../testkit/session-fixtures';

/**
 * Dynamics on the real PostgreSQL (docs/dynamics.md): a 1280×720 session at 3 fps whose frames
 * 0–4 record an ego speed of 10 m/s and frame 5 none. A car track moves right 30 px a frame with
 * its box bottom at y 560 (4.48 m ahead under the default dashcam); a one-object track; a
 * pedestrian track of three objects; an object on no track. A second session carries a camera
 * calibration.
 */
const ctx = useApiForFile();
const call = (method: string, p: string, token: string | undefined, body?: unknown) =>
  ctx.api.call(method, p, { token, body });
const MISSING = '00000000-0000-4000-8000-000000000000';

let sessionId: string;
let frames: string[];
let car: string;
let single: string;
let ped: string;
let carObjects: string[];
let singleObject: string;
let loose: string;
let calibrated: { sessionId: string; track: string; objects: string[] };

/** Default camera: f = 640, horizon 360, 1.4 m: the ground point at bottom y 560 is 1.4·640/200 m ahead. */
const RANGE = (1.4 * 640) / 200;
/** The car's sideways ground speed: 30 px per 1/3 s at that range. */
const LATERAL_MPS = (90 * RANGE) / 640;

async function trackOf(
  session: string,
  frameIds: string[],
  classId: number,
  box: (i: number) => number[],
): Promise<{ track: string; objects: string[] }> {
  const { db } = ctx.api.deps;
  const track = (await db.track.create({ data: { sessionId: session, trackerVersion: 'bytetrack-ts-1' } }))
    .id;
  const objects: string[] = [];
  for (const [i, frameId] of frameIds.entries())
    objects.push(
      (
        await db.annoObject.create({
          data: { frameId, classId, bbox: box(i), source: 'human', state: 'accepted', trackId: track },
        })
      ).id,
    );
  return { track, objects };
}

beforeAll(async () => {
  const { db, storage } = ctx.api.deps;
  const fixture = await createSessionFixture(
    { db, storage },
    { frames: 6, storeImages: false, context: (i) => (i < 5 ? { ego_speed_mps: 10 } : {}) },
  );
  sessionId = fixture.session.id;
  frames = fixture.frames.map((f) => f.id);
  await db.frame.updateMany({ where: { sessionId }, data: { width: 1280, height: 720 } });
  const carClass = (await db.ontologyClass.findFirstOrThrow({ where: { name: 'car' } })).id;
  const pedClass = (await db.ontologyClass.findFirstOrThrow({ where: { name: 'pedestrian' } })).id;
  const c = await trackOf(sessionId, frames, carClass, (i) => [400 + 30 * i, 440, 560 + 30 * i, 560]);
  car = c.track;
  carObjects = c.objects;
  const s = await trackOf(sessionId, [frames[0]!], carClass, () => [100, 400, 200, 500]);
  single = s.track;
  singleObject = s.objects[0]!;
  ped = (
    await trackOf(sessionId, frames.slice(0, 3), pedClass, (i) => [900, 400 + 10 * i, 940, 500 + 10 * i])
  ).track;
  loose = (
    await db.annoObject.create({
      data: {
        frameId: frames[0]!,
        classId: carClass,
        bbox: [0, 0, 10, 10],
        source: 'human',
        state: 'accepted',
      },
    })
  ).id;

  const other = await createSessionFixture(
    { db, storage },
    {
      frames: 3,
      storeImages: false,
      session: { sourceMeta: { camera: { fx: 1280, fy: 1280, cx: 640, cy: 360, height_m: 1.4 } } },
    },
  );
  await db.frame.updateMany({ where: { sessionId: other.session.id }, data: { width: 1280, height: 720 } });
  const o = await trackOf(
    other.session.id,
    other.frames.map((f) => f.id),
    carClass,
    () => [600, 440, 680, 560],
  );
  calibrated = { sessionId: other.session.id, ...o };
});

describe('POST /api/dynamics/compute', () => {
  it("computes a session's tracks, answering the counts and what it could not measure", async () => {
    const res = await call('POST', '/api/dynamics/compute', ctx.token.annotator, { session_id: sessionId });
    expect([res.status, res.body.detail]).toEqual([200, undefined]);
    expect(res.body).toEqual({
      scope: 'session',
      session_ids: [sessionId],
      tracks: 3,
      rows_written: 9,
      rows_replaced: 0,
      metric_rows: 8,
      ranged_rows: 9,
      cameras: { [sessionId]: 'default' },
      skipped: [{ track_id: single, objects: 1, reason: expect.stringContaining('one object') }],
    });
    expect(await ctx.api.deps.db.objectDynamics.count({ where: { sessionId } })).toBe(9);
    const audit = await ctx.api.deps.db.auditLog.findFirstOrThrow({
      where: { action: 'dynamics.computed', subjectId: sessionId },
    });
    expect(audit.detail).toMatchObject({ rows_written: 9 });
  });

  it('stores image motion always, and ground motion where the ego speed allows', async () => {
    const first = await call('GET', `/api/dynamics/object/${carObjects[0]}`, ctx.token.annotator);
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({
      object_id: carObjects[0],
      frame_id: frames[0],
      session_id: sessionId,
      track_id: car,
      class_name: 'car',
      speed_px_s: expect.closeTo(90, 9),
      accel_px_s2: expect.closeTo(0, 9),
      heading_deg: expect.closeTo(0, 9),
      range_m: expect.closeTo(RANGE, 9),
      speed_mps: expect.closeTo(Math.hypot(LATERAL_MPS, 10), 9),
      accel_mps2: expect.closeTo(0, 9),
      metric: true,
    });
    // Frame 5 records no ego speed: range from the camera, no ground speed.
    const last = await call('GET', `/api/dynamics/object/${carObjects[5]}`, ctx.token.annotator);
    expect(last.body).toMatchObject({ speed_px_s: expect.closeTo(90, 9), range_m: expect.closeTo(RANGE, 9) });
    expect([last.body.metric, last.body.speed_mps, last.body.accel_mps2]).toEqual([false, null, null]);

    const frame = await call('GET', `/api/dynamics/frame/${frames[0]}`, ctx.token.annotator);
    expect(frame.status).toBe(200);
    expect(frame.body).toMatchObject({ frame_id: frames[0], session_id: sessionId, count: 2 });
    expect(frame.body.items.map((r: { track_id: string }) => r.track_id).sort()).toEqual([car, ped].sort());
    const pedRow = frame.body.items.find((r: { track_id: string }) => r.track_id === ped);
    expect(pedRow).toMatchObject({ class_name: 'pedestrian', heading_deg: expect.closeTo(90, 9) });
    expect((await call('GET', `/api/dynamics/frame/${frames[5]}`, ctx.token.annotator)).body.count).toBe(1);
  });

  it("replaces a track scope's rows in one go, following the objects as they are now", async () => {
    const { db } = ctx.api.deps;
    // The car's last box jumps 60 px further right: 90 px in its last third of a second.
    await db.annoObject.update({ where: { id: carObjects[5] }, data: { bbox: [610, 440, 770, 560] } });
    const res = await call('POST', '/api/dynamics/compute', ctx.token.annotator, { track_ids: [car, car] });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      scope: 'tracks',
      session_ids: [sessionId],
      tracks: 1,
      rows_written: 6,
      rows_replaced: 6,
      skipped: [],
    });
    expect(await db.objectDynamics.count({ where: { sessionId } })).toBe(9);
    const last = await call('GET', `/api/dynamics/object/${carObjects[5]}`, ctx.token.annotator);
    expect(last.body.speed_px_s).toBeCloseTo(270, 9);
  });

  it("uses the session's camera calibration when it has one", async () => {
    const res = await call('POST', '/api/dynamics/compute', ctx.token.annotator, {
      track_ids: [calibrated.track],
    });
    expect(res.body).toMatchObject({ cameras: { [calibrated.sessionId]: 'session' }, metric_rows: 0 });
    const row = await call('GET', `/api/dynamics/object/${calibrated.objects[1]}`, ctx.token.annotator);
    // fy 1280 doubles the range of the same box bottom.
    expect([row.body.range_m, row.body.speed_px_s, row.body.heading_deg, row.body.metric]).toEqual([
      expect.closeTo((1.4 * 1280) / 200, 9),
      0,
      null,
      false,
    ]);
  });

  it('answers 404 for what is not there and 422 for malformed requests', async () => {
    const post = (body: unknown) => call('POST', '/api/dynamics/compute', ctx.token.annotator, body);
    expect((await post({ session_id: MISSING })).status).toBe(404);
    const missingTrack = await post({ track_ids: [car, MISSING] });
    expect([missingTrack.status, missingTrack.body.detail]).toEqual([404, `no track ${MISSING}`]);
    for (const bad of [
      {},
      { session_id: sessionId, track_ids: [car] },
      { session_id: 'x' },
      { track_ids: [] },
    ]) {
      expect((await post(bad)).status).toBe(422);
    }
    expect((await post({ session_id: sessionId, colour: 1 })).body.errors[0].field).toBe('body.colour');
    expect((await call('GET', `/api/dynamics/frame/${MISSING}`, ctx.token.annotator)).status).toBe(404);
    expect((await call('GET', '/api/dynamics/frame/not-a-uuid', ctx.token.annotator)).status).toBe(422);
    expect((await call('GET', `/api/dynamics/object/${MISSING}`, ctx.token.annotator)).status).toBe(404);
    const untracked = await call('GET', `/api/dynamics/object/${loose}`, ctx.token.annotator);
    expect([untracked.status, untracked.body.detail]).toEqual([404, expect.stringContaining('on no track')]);
    const uncomputed = await call('GET', `/api/dynamics/object/${singleObject}`, ctx.token.annotator);
    expect([uncomputed.status, uncomputed.body.detail]).toEqual([
      404,
      expect.stringContaining('POST /api/dynamics/compute'),
    ]);
    expect((await call('GET', `/api/dynamics/frame/${frames[0]}`, undefined)).status).toBe(401);
  });
});
