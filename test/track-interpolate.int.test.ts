import { useApiForFile } from '../testkit/api';
import { createSessionFixture } from '../testkit/session-fixtures';

/**
 * Keyframes and interpolation along a track on the real PostgreSQL (docs/track-interpolation.md):
 * fills between boxes by frame time, a person's object in a gap left alone, recomputing after a
 * keyframe moves without duplicating, and refusals that write nothing.
 */
const ctx = useApiForFile();

/** Frames 0..6; frame 3 lies 700 ms of 1000 between frames 0 and 4, though three of four frames along. */
const TIMES = [0, 100, 400, 700, 1000, 1500, 2000];

interface FrameAnswer {
  frame_id: string;
  frame_index: number;
  action: string;
  object_id: string;
  reason?: string;
  t?: number;
}

describe('track interpolation', () => {
  let frames: Array<{ id: string }>;
  let sessionId: string;
  let classIds: Record<string, number>;

  const call = (method: string, path: string, token: string, body?: unknown) =>
    ctx.api.call(method, path, { token, body });

  const newTrack = async () =>
    (
      await ctx.api.deps.db.track.create({
        data: { sessionId, trackerVersion: 'bytetrack-ts-1', attrs: { class_name: 'car' } },
      })
    ).id;

  const box = async (
    trackId: string | null,
    frame: number,
    bbox: number[],
    extra: { className?: string; source?: string; polyline?: number[][] } = {},
  ) =>
    (
      await ctx.api.deps.db.annoObject.create({
        data: {
          frameId: frames[frame]!.id,
          classId: classIds[extra.className ?? 'car']!,
          bbox,
          polyline: extra.polyline,
          source: extra.source ?? 'human',
          state: 'accepted',
          trackId,
        },
      })
    ).id;

  const objectsOf = (trackId: string) =>
    ctx.api.deps.db.annoObject.findMany({
      where: { trackId },
      include: { frame: { select: { index: true } } },
      orderBy: { frame: { index: 'asc' } },
    });

  const keyframe = async (objectId: string, keyframe = true) => {
    const res = await call('POST', `/api/objects/${objectId}/keyframe`, ctx.token.annotator, { keyframe });
    expect([res.status, res.body.detail]).toEqual([200, undefined]);
    return res.body;
  };

  beforeAll(async () => {
    const { db, storage } = ctx.api.deps;
    classIds = Object.fromEntries(
      (await db.ontologyClass.findMany({ where: { name: { in: ['car', 'truck'] } } })).map((c) => [
        c.name,
        c.id,
      ]),
    );
    const fixture = await createSessionFixture({ db, storage }, { timestampsMs: TIMES, storeImages: false });
    frames = fixture.frames;
    sessionId = fixture.session.id;
  });

  it('marks and unmarks a keyframe in attrs, keeping other attributes, and refuses an object of no track', async () => {
    const trackId = await newTrack();
    const id = await box(trackId, 0, [0, 0, 10, 10]);
    await ctx.api.deps.db.annoObject.update({ where: { id }, data: { attrs: { occluded: true } } });
    const marked = await keyframe(id);
    expect(marked).toMatchObject({ object_id: id, track_id: trackId, keyframe: true, changed: true });
    expect(marked.object).toMatchObject({ attrs: { occluded: true, keyframe: true }, version: 2 });
    expect((await keyframe(id)).changed).toBe(false);
    const unmarked = await keyframe(id, false);
    expect(unmarked.object).toMatchObject({ attrs: { occluded: true }, version: 3 });

    const stale = await call('POST', `/api/objects/${id}/keyframe`, ctx.token.annotator, {
      expected_version: 1,
    });
    expect(stale.status).toBe(409);

    const loose = await box(null, 0, [0, 0, 10, 10]);
    const refused = await call('POST', `/api/objects/${loose}/keyframe`, ctx.token.annotator, {});
    expect(refused.status).toBe(422);
    expect(refused.body.detail).toMatch(/belongs to no track/);
    const reinterp = await call('POST', `/api/objects/${loose}/reinterpolate`, ctx.token.annotator);
    expect(reinterp.status).toBe(422);

    const audits = await ctx.api.deps.db.auditLog.findMany({
      where: { subjectId: id },
      orderBy: { createdAt: 'asc' },
    });
    expect(audits.map((a) => a.action)).toEqual(['object.keyframe.marked', 'object.keyframe.unmarked']);
  });

  it('fills between two boxes by frame time and leaves a person’s object in the gap alone', async () => {
    const trackId = await newTrack();
    const from = await box(trackId, 0, [0, 0, 10, 10]);
    const to = await box(trackId, 4, [100, 20, 120, 40]);
    const human = await box(trackId, 2, [1, 2, 3, 4]);
    const res = await call('POST', `/api/tracks/${trackId}/interpolate`, ctx.token.annotator, {
      from_object_id: from,
      to_object_id: to,
    });
    expect([res.status, res.body.detail]).toEqual([200, undefined]);
    expect(res.body).toMatchObject({ track_id: trackId, mode: 'between', created: 2, updated: 0, left: 1 });
    expect(res.body.frames.map((f: FrameAnswer) => [f.frame_index, f.action])).toEqual([
      [1, 'create'],
      [2, 'left'],
      [3, 'create'],
    ]);
    expect(res.body.frames[1]).toMatchObject({ object_id: human, reason: 'not_interpolated' });

    const onFrame3 = res.body.objects.find((o: { frame_id: string }) => o.frame_id === frames[3]!.id);
    expect(onFrame3).toMatchObject({
      source: 'interpolated',
      state: 'review',
      class_name: 'car',
      track_id: trackId,
      version: 1,
    });
    // 700 ms of 1000: each corner 0.7 of the way.
    const expected = [70, 14, 87, 31];
    onFrame3.bbox.forEach((v: number, i: number) => expect(v).toBeCloseTo(expected[i]!, 10));
    const untouched = await ctx.api.deps.db.annoObject.findUniqueOrThrow({ where: { id: human } });
    expect(untouched).toMatchObject({ bbox: [1, 2, 3, 4], source: 'human', version: 1 });

    const provenance = await ctx.api.deps.db.provenance.findFirstOrThrow({
      where: { objectId: onFrame3.id },
    });
    expect(provenance).toMatchObject({ paths: ['interpolated'] });
    expect(provenance.reasonerTrace).toMatchObject({ from_object_id: from, to_object_id: to });
    const track = await call('GET', `/api/tracks/${trackId}`, ctx.token.annotator);
    expect(track.body.trajectory.map((p: { frame_index: number }) => p.frame_index)).toEqual([1, 3]);
    const audit = await ctx.api.deps.db.auditLog.findFirstOrThrow({
      where: { subjectId: trackId, action: 'track.interpolated' },
    });
    expect(audit.detail).toMatchObject({ created: 2, updated: 0, left: 1 });

    // Every gap: the fills are not anchors, so the same frames are recomputed, none added.
    const again = await call('POST', `/api/tracks/${trackId}/interpolate`, ctx.token.annotator, {});
    expect(again.body).toMatchObject({ mode: 'gaps', created: 0, updated: 2, left: 0 });
    expect(await objectsOf(trackId)).toHaveLength(5);
  });

  it('recomputes the fills around a keyframe that moved, without duplicating, and never touches a person’s object', async () => {
    const trackId = await newTrack();
    const k0 = await box(trackId, 0, [0, 0, 10, 10]);
    const k4 = await box(trackId, 4, [100, 0, 110, 10]);
    const k6 = await box(trackId, 6, [200, 0, 210, 10]);
    const human = await box(trackId, 5, [5, 5, 6, 6]);
    for (const id of [k0, k4, k6]) await keyframe(id);
    const first = await call('POST', `/api/tracks/${trackId}/interpolate-keyframed`, ctx.token.annotator);
    expect([first.status, first.body.detail]).toEqual([200, undefined]);
    expect(first.body).toMatchObject({ mode: 'keyframed', created: 3, updated: 0, left: 1 });
    expect(await objectsOf(trackId)).toHaveLength(7);

    await ctx.api.deps.db.annoObject.update({ where: { id: k4 }, data: { bbox: [40, 0, 50, 10] } });
    const moved = await call('POST', `/api/objects/${k4}/reinterpolate`, ctx.token.annotator);
    expect([moved.status, moved.body.detail]).toEqual([200, undefined]);
    expect(moved.body).toMatchObject({ mode: 'around', created: 0, updated: 3, left: 1 });
    const after = await objectsOf(trackId);
    expect(after).toHaveLength(7);
    const fill3 = after.find((o) => o.frame.index === 3)!;
    expect(fill3).toMatchObject({ source: 'interpolated', version: 2 });
    fill3.bbox.forEach((v, i) => expect(v).toBeCloseTo([28, 0, 38, 10][i]!, 10));
    expect(after.find((o) => o.id === human)).toMatchObject({ bbox: [5, 5, 6, 6], version: 1 });
    expect(await ctx.api.deps.db.provenance.count({ where: { objectId: fill3.id } })).toBe(2);

    const notKeyframe = await call('POST', `/api/objects/${human}/reinterpolate`, ctx.token.annotator);
    expect(notKeyframe.status).toBe(422);
    expect(notKeyframe.body.detail).toMatch(/not a keyframe/);
  });

  it('refuses anchors of different classes or unmatched polygons and writes nothing', async () => {
    const trackId = await newTrack();
    const car = await box(trackId, 0, [0, 0, 10, 10]);
    const truck = await box(trackId, 3, [30, 0, 40, 10], { className: 'truck' });
    const mismatch = await call('POST', `/api/tracks/${trackId}/interpolate`, ctx.token.annotator, {
      from_object_id: car,
      to_object_id: truck,
    });
    expect(mismatch.status).toBe(422);
    expect(mismatch.body.detail).toMatch(/\(car\) and .*\(truck\) are of different classes/);

    // The first gap could be filled, the second cannot: the whole request writes nothing.
    const polyTrack = await newTrack();
    await box(polyTrack, 0, [0, 0, 10, 10], { polyline: [[0, 0, 10, 0, 10, 10]] });
    await box(polyTrack, 2, [20, 0, 30, 10], { polyline: [[20, 0, 30, 0, 30, 10]] });
    await box(polyTrack, 4, [40, 0, 50, 10], { polyline: [[40, 0, 50, 0, 50, 10, 40, 10]] });
    const unmatched = await call('POST', `/api/tracks/${polyTrack}/interpolate`, ctx.token.annotator, {});
    expect(unmatched.status).toBe(422);
    expect(unmatched.body.detail).toMatch(/unmatched vertex counts/);
    expect(await objectsOf(trackId)).toHaveLength(2);
    expect(await objectsOf(polyTrack)).toHaveLength(3);
    expect(
      await ctx.api.deps.db.auditLog.count({
        where: { subjectId: { in: [trackId, polyTrack] }, action: 'track.interpolated' },
      }),
    ).toBe(0);

    const noKeyframes = await call(
      'POST',
      `/api/tracks/${trackId}/interpolate-keyframed`,
      ctx.token.annotator,
    );
    expect(noKeyframes.status).toBe(422);
    const outsider = await box(await newTrack(), 1, [0, 0, 1, 1]);
    const foreign = await call('POST', `/api/tracks/${trackId}/interpolate`, ctx.token.annotator, {
      from_object_id: car,
      to_object_id: outsider,
    });
    expect(foreign.status).toBe(422);
    expect(foreign.body.detail).toMatch(/is not an object of track/);
    const half = await call('POST', `/api/tracks/${trackId}/interpolate`, ctx.token.annotator, {
      from_object_id: car,
    });
    expect(half.status).toBe(422);
  });

  it('answers 404 for an unknown track or object and 401 without a token', async () => {
    const missing = '00000000-0000-4000-8000-000000000000';
    for (const path of [
      `/api/tracks/${missing}/interpolate`,
      `/api/tracks/${missing}/interpolate-keyframed`,
      `/api/objects/${missing}/keyframe`,
      `/api/objects/${missing}/reinterpolate`,
    ]) {
      expect((await call('POST', path, ctx.token.annotator, {})).status).toBe(404);
      expect((await ctx.api.call('POST', path, { body: {} })).status).toBe(401);
    }
    // Annotator is the lowest role and these routes are every role's, so no caller is refused with 403.
    const route = ctx.api.routes.find((r) => r.path === '/api/tracks/{track_id}/interpolate');
    expect(route?.spec.access).toBe('annotator');
  });
});
