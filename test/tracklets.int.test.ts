import { randomUUID } from 'node:crypto';
import { useApiForFile } from '../testkit/api';
import { createSessionFixture } from '../testkit/session-fixtures';

/**
 * The tracklet routes on the real PostgreSQL (docs/tracklets.md): a constructed car track over a
 * session of 10 frames — moving right 20 px a frame on frames 0..4, standing on 5..7, frame 6
 * without a box — read as a summary, its keyframes suggested, its attributes derived and set over
 * a range, the corpus counted, and the keyframe and propagate writes answered with the tracklet.
 */
const ctx = useApiForFile();
const call = (method: string, p: string, token: string | undefined, body?: unknown) =>
  ctx.api.call(method, p, { token, body });
const MISSING = '00000000-0000-4000-8000-000000000000';

let sessionId: string;
let frames: string[];
let otherSessionFrame: string;
let car: string;
let person: string;
let objects: Record<number, string>;
let loose: string;

/** A 30×40 box (diagonal 50 px) on a 640×480 frame. */
const box = (cx: number, cy: number) => [cx - 15, cy - 20, cx + 15, cy + 20];
const centreAt = (i: number) => 100 + 20 * Math.min(i, 4);

beforeAll(async () => {
  const { db, storage } = ctx.api.deps;
  const fixture = await createSessionFixture({ db, storage }, { frames: 10, storeImages: false });
  sessionId = fixture.session.id;
  frames = fixture.frames.map((f) => f.id);
  await db.frame.updateMany({ where: { sessionId }, data: { width: 640, height: 480 } });
  otherSessionFrame = (await createSessionFixture({ db, storage }, { frames: 1, storeImages: false }))
    .frames[0]!.id;
  const classOf = async (name: string) => (await db.ontologyClass.findFirstOrThrow({ where: { name } })).id;
  const carClass = await classOf('car');
  car = (
    await db.track.create({
      data: { sessionId, trackerVersion: 'bytetrack-ts-1', attrs: { class_name: 'car' } },
    })
  ).id;
  person = (
    await db.track.create({
      data: { sessionId, trackerVersion: 'propagate-1', attrs: { class_name: 'person' } },
    })
  ).id;
  const kinds: Record<number, { source: string; conf: number | null; state: string; attrs?: object }> = {
    0: { source: 'human', conf: null, state: 'accepted', attrs: { keyframe: true } },
    1: { source: 'fused', conf: 0.9, state: 'review' },
    2: { source: 'fused', conf: 0.8, state: 'review' },
    3: { source: 'fused', conf: 0.7, state: 'review' },
    4: { source: 'fused', conf: 0.6, state: 'review' },
    5: { source: 'interp', conf: null, state: 'review' },
    7: { source: 'fused', conf: 0.5, state: 'auto_accept' },
  };
  objects = {};
  for (const [i, k] of Object.entries(kinds)) {
    const o = await db.annoObject.create({
      data: {
        frameId: frames[Number(i)]!,
        classId: carClass,
        bbox: box(centreAt(Number(i)), 200),
        source: k.source,
        conf: k.conf,
        state: k.state,
        attrs: k.attrs ?? {},
        trackId: car,
      },
    });
    objects[Number(i)] = o.id;
  }
  await db.annoObject.create({
    data: {
      frameId: frames[2]!,
      classId: await classOf('person'),
      bbox: [400, 100, 420, 160],
      source: 'human',
      state: 'accepted',
      trackId: person,
    },
  });
  loose = (
    await db.annoObject.create({
      data: {
        frameId: frames[1]!,
        classId: carClass,
        bbox: [500, 300, 540, 330],
        source: 'fused',
        state: 'review',
      },
    })
  ).id;
});

describe('GET /api/tracklets/{track_id}', () => {
  it('summarises the objects linked to the track', async () => {
    const res = await call('GET', `/api/tracklets/${car}`, ctx.token.annotator);
    expect([res.status, res.body.detail]).toEqual([200, undefined]);
    expect(res.body).toMatchObject({
      track_id: car,
      session_id: sessionId,
      class_name: 'car',
      tracker_version: 'bytetrack-ts-1',
      objects: 7,
      first_frame_id: frames[0],
      last_frame_id: frames[7],
      first_frame_index: 0,
      last_frame_index: 7,
      span_frames: 8,
      keyframes: [{ object_id: objects[0], frame_id: frames[0], frame_index: 0 }],
      sources: { fused: 5, human: 1, interpolated: 1 },
      states: { accepted: 1, auto_accept: 1, review: 5 },
      mean_conf: 0.7,
      conf_objects: 5,
      intent: null,
      derived: null,
    });
    expect(res.body.attribute_timeline.state_spans.map((s: { value: string }) => s.value)).toEqual([
      'accepted',
      'review',
      'auto_accept',
    ]);
    expect(res.body).not.toHaveProperty('trajectory');
  });

  it('answers 404 for an unknown track, 422 for a malformed id and 401 without a token', async () => {
    expect((await call('GET', `/api/tracklets/${MISSING}`, ctx.token.annotator)).status).toBe(404);
    expect((await call('GET', '/api/tracklets/not-a-uuid', ctx.token.annotator)).status).toBe(422);
    expect((await call('GET', `/api/tracklets/${car}`, undefined)).status).toBe(401);
  });
});

describe('GET /api/tracklets/{track_id}/suggest-keyframes', () => {
  it('suggests the ends and the frame where the car stops, beside the keyframe already marked', async () => {
    const res = await call('GET', `/api/tracklets/${car}/suggest-keyframes`, ctx.token.annotator);
    expect([res.status, res.body.detail]).toEqual([200, undefined]);
    expect(res.body).toMatchObject({
      track_id: car,
      rules_version: 'keyframe-rules-1',
      points: 7,
      scale_px: 50,
    });
    expect(
      res.body.keyframes.map((k: { frame_index: number; reasons: string[]; marked: boolean }) => [
        k.frame_index,
        k.reasons,
        k.marked,
      ]),
    ).toEqual([
      [0, ['first'], true],
      [4, ['motion'], false],
      [7, ['last'], false],
    ]);
    expect(res.body.marked_not_suggested).toEqual([]);
    // A tolerance wider than the stop's 40 px leaves only the ends.
    const loose = await call(
      'GET',
      `/api/tracklets/${car}/suggest-keyframes?tolerance=1`,
      ctx.token.annotator,
    );
    expect(loose.body.keyframes.map((k: { frame_index: number }) => k.frame_index)).toEqual([0, 7]);
    expect(loose.body.thresholds.tolerance).toBe(1);
  });

  it('refuses thresholds out of range (422) and an unknown track (404)', async () => {
    expect(
      (await call('GET', `/api/tracklets/${car}/suggest-keyframes?tolerance=0`, ctx.token.annotator)).status,
    ).toBe(422);
    expect(
      (await call('GET', `/api/tracklets/${car}/suggest-keyframes?what=1`, ctx.token.annotator)).status,
    ).toBe(422);
    expect(
      (await call('GET', `/api/tracklets/${MISSING}/suggest-keyframes`, ctx.token.annotator)).status,
    ).toBe(404);
  });
});

describe('POST /api/tracklets/{track_id}/derive', () => {
  it('derives motion from the boxes, answers a dry run without storing and stores into the track’s attrs', async () => {
    const dry = await call('POST', `/api/tracklets/${car}/derive`, ctx.token.annotator, { dry_run: true });
    expect([dry.status, dry.body.detail]).toEqual([200, undefined]);
    // 80 px over 7 frames at 3 fps (2.333 s); frame 6 of the span has no box.
    expect(dry.body).toMatchObject({
      dry_run: true,
      stored: false,
      derived: {
        motion: 'moving',
        direction: 'right',
        net_displacement_px: 80,
        path_length_px: 80,
        mean_speed_px_s: 34.286,
        duration_s: 2.333,
        gap_frames: 1,
        truncated_frames: 0,
        scale_trend: 'steady',
      },
    });
    const { db } = ctx.api.deps;
    expect((await db.track.findUniqueOrThrow({ where: { id: car } })).attrs).toEqual({ class_name: 'car' });

    const stored = await call('POST', `/api/tracklets/${car}/derive`, ctx.token.annotator, {});
    expect([stored.status, stored.body.stored]).toEqual([200, true]);
    const attrs = (await db.track.findUniqueOrThrow({ where: { id: car } })).attrs as Record<string, any>;
    expect(attrs.class_name).toBe('car');
    expect(attrs.derived).toMatchObject({
      motion: 'moving',
      direction: 'right',
      rules_version: 'tracklet-derive-1',
    });
    expect((await call('GET', `/api/tracklets/${car}`, ctx.token.annotator)).body.derived).toMatchObject({
      motion: 'moving',
    });
  });

  it('refuses an unknown field (422) and an unknown track (404)', async () => {
    expect(
      (await call('POST', `/api/tracklets/${car}/derive`, ctx.token.annotator, { store: 1 })).status,
    ).toBe(422);
    expect((await call('POST', `/api/tracklets/${MISSING}/derive`, ctx.token.annotator, {})).status).toBe(
      404,
    );
  });
});

describe('POST /api/tracklets/{track_id}/attributes', () => {
  it('sets an attribute over a frame range as one review, and leaves objects already holding it', async () => {
    const { db } = ctx.api.deps;
    const body = { attrs: { occluded: true }, from_frame_id: frames[2], to_frame_id: frames[4] };
    const res = await call('POST', `/api/tracklets/${car}/attributes`, ctx.token.annotator, body);
    expect([res.status, res.body.detail]).toEqual([200, undefined]);
    expect(res.body).toMatchObject({ track_id: car, from_frame_index: 2, to_frame_index: 4, left: [] });
    expect(res.body.batch_id).toEqual(expect.any(String));
    expect(
      res.body.updated.map((u: { frame_index: number; version: number; source: string }) => [
        u.frame_index,
        u.version,
        u.source,
      ]),
    ).toEqual([
      [2, 2, 'human'],
      [3, 2, 'human'],
      [4, 2, 'human'],
    ]);
    const after = await db.annoObject.findMany({ where: { trackId: car }, include: { frame: true } });
    for (const o of after) {
      const inRange = o.frame.index >= 2 && o.frame.index <= 4;
      expect([o.frame.index, (o.attrs as Record<string, unknown>).occluded ?? null]).toEqual([
        o.frame.index,
        inRange ? true : null,
      ]);
    }
    expect(await db.review.count({ where: { batchId: res.body.batch_id } })).toBe(3);
    const timeline = (await call('GET', `/api/tracklets/${car}`, ctx.token.annotator)).body
      .attribute_timeline;
    expect(
      timeline.attribute_spans.occluded.map((s: { value: unknown; frames: number }) => [s.value, s.frames]),
    ).toEqual([
      [null, 2],
      [true, 3],
      [null, 2],
    ]);

    const again = await call('POST', `/api/tracklets/${car}/attributes`, ctx.token.annotator, body);
    expect([again.status, again.body.batch_id, again.body.updated]).toEqual([200, null, []]);
    expect(again.body.left.map((l: { reason: string }) => l.reason)).toEqual([
      'unchanged',
      'unchanged',
      'unchanged',
    ]);
  });

  it('covers the whole track without a range', async () => {
    const res = await call('POST', `/api/tracklets/${car}/attributes`, ctx.token.annotator, {
      attrs: { colour: 'red' },
    });
    expect([res.status, res.body.from_frame_index, res.body.to_frame_index, res.body.updated.length]).toEqual(
      [200, 0, 7, 7],
    );
  });

  it('refuses the reserved keyframe key, foreign or reversed frames, an empty range and bad bodies (422); 404', async () => {
    const post = (body: unknown, track = car) =>
      call('POST', `/api/tracklets/${track}/attributes`, ctx.token.annotator, body);
    const reserved = await post({ attrs: { keyframe: false } });
    expect([reserved.status, reserved.body.errors?.[0]?.field]).toEqual([422, 'body.attrs.keyframe']);
    const foreign = await post({ attrs: { a: 1 }, from_frame_id: otherSessionFrame });
    expect([foreign.status, foreign.body.errors?.[0]?.field]).toEqual([422, 'body.from_frame_id']);
    expect((await post({ attrs: { a: 1 }, from_frame_id: frames[4], to_frame_id: frames[2] })).status).toBe(
      422,
    );
    expect((await post({ attrs: { a: 1 }, from_frame_id: frames[6], to_frame_id: frames[6] })).status).toBe(
      422,
    );
    expect((await post({ attrs: {} })).status).toBe(422);
    expect((await post({ attrs: { a: 1 }, extra: true })).status).toBe(422);
    expect((await post({ attrs: { a: 1 } }, MISSING)).status).toBe(404);
    const untouched = await ctx.api.deps.db.annoObject.findUniqueOrThrow({ where: { id: objects[5]! } });
    expect(untouched.attrs).not.toHaveProperty('a');
  });
});

describe('GET /api/tracklets/stats/summary', () => {
  it('counts the session’s tracks by length, class and tracker, with keyframe coverage', async () => {
    const res = await call(
      'GET',
      `/api/tracklets/stats/summary?session_id=${sessionId}`,
      ctx.token.annotator,
    );
    expect([res.status, res.body.detail]).toEqual([200, undefined]);
    expect(res.body).toMatchObject({
      session_id: sessionId,
      tracks: 2,
      objects: 8,
      length: { min: 1, max: 7, mean: 4 },
      per_class: { car: { tracks: 1, objects: 7 }, person: { tracks: 1, objects: 1 } },
      per_tracker_version: { 'bytetrack-ts-1': { tracks: 1 }, 'propagate-1': { tracks: 1 } },
      keyframes: { total: 1, tracks_with_keyframes: 1, track_coverage: 0.5 },
    });
    const bins = Object.fromEntries(
      res.body.length_distribution.map((b: { from: number; tracks: number }) => [b.from, b.tracks]),
    );
    expect(bins).toMatchObject({ 1: 1, 5: 1, 0: 0 });
    const corpus = await call('GET', '/api/tracklets/stats/summary', ctx.token.annotator);
    expect([corpus.status, corpus.body.session_id, corpus.body.tracks >= 2]).toEqual([200, null, true]);
    expect(
      (await call('GET', '/api/tracklets/stats/summary?session_id=nope', ctx.token.annotator)).status,
    ).toBe(422);
  });
});

describe('the tracklet keyframe and propagate writes', () => {
  it('marks a keyframe as the tracks route does and answers with the tracklet', async () => {
    const res = await call('POST', `/api/tracklets/objects/${objects[4]}/keyframe`, ctx.token.annotator, {});
    expect([res.status, res.body.detail]).toEqual([200, undefined]);
    expect(res.body).toMatchObject({ object_id: objects[4], track_id: car, keyframe: true, changed: true });
    expect(res.body.tracklet.keyframes.map((k: { frame_index: number }) => k.frame_index)).toEqual([0, 4]);
    const suggested = await call('GET', `/api/tracklets/${car}/suggest-keyframes`, ctx.token.annotator);
    expect(suggested.body.keyframes.find((k: { frame_index: number }) => k.frame_index === 4).marked).toBe(
      true,
    );
    expect(
      (await call('POST', `/api/tracklets/objects/${loose}/keyframe`, ctx.token.annotator, {})).status,
    ).toBe(422);
    expect(
      (await call('POST', `/api/tracklets/objects/${MISSING}/keyframe`, ctx.token.annotator, {})).status,
    ).toBe(404);
    expect(
      (
        await call('POST', `/api/tracklets/objects/${objects[4]}/keyframe`, ctx.token.annotator, {
          keyframe: 'yes',
        })
      ).status,
    ).toBe(422);
  });

  it('propagates the track’s last object to the next frames and answers with the tracklet', async () => {
    const res = await call('POST', `/api/tracklets/objects/${objects[7]}/propagate`, ctx.token.annotator, {
      frames: 2,
    });
    expect([res.status, res.body.detail]).toEqual([200, undefined]);
    expect(res.body).toMatchObject({
      object_id: objects[7],
      track_id: car,
      created: 2,
      creates_track: false,
    });
    expect(res.body.objects.map((o: { frame_id: string; source: string }) => [o.frame_id, o.source])).toEqual(
      [
        [frames[8], 'propagated'],
        [frames[9], 'propagated'],
      ],
    );
    expect(res.body.tracklet).toMatchObject({ objects: 9, last_frame_index: 9 });
    expect(res.body.tracklet.sources.propagated).toBe(2);
    expect(
      (await call('POST', `/api/tracklets/objects/${randomUUID()}/propagate`, ctx.token.annotator, {}))
        .status,
    ).toBe(404);
    expect(
      (
        await call('POST', `/api/tracklets/objects/${objects[7]}/propagate`, ctx.token.annotator, {
          frames: 31,
        })
      ).status,
    ).toBe(422);
  });
});
