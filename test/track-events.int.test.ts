import { randomUUID } from 'node:crypto';
import { useApiForFile } from '../testkit/api';
import { createSessionFixture } from '../testkit/session-fixtures';

/**
 * Track events, the attribute timeline and intent on the real PostgreSQL (docs/track-events.md):
 * a session of 8 frames with one car track moving up the image and turning right, and a parked
 * one; events are checked against the frames of the session, intent against the motion rules.
 */
const ctx = useApiForFile();
const call = (method: string, p: string, token: string | undefined, body?: unknown) =>
  ctx.api.call(method, p, { token, body });
const MISSING = '00000000-0000-4000-8000-000000000000';

let sessionId: string;
let frames: string[];
let otherSessionFrame: string;
let turning: string;
let parked: string;
let objects: string[];

beforeAll(async () => {
  const { db, storage } = ctx.api.deps;
  const fixture = await createSessionFixture({ db, storage }, { frames: 8, storeImages: false });
  sessionId = fixture.session.id;
  frames = fixture.frames.map((f) => f.id);
  const other = await createSessionFixture({ db, storage }, { frames: 1, storeImages: false });
  otherSessionFrame = other.frames[0]!.id;
  const car = (await db.ontologyClass.findFirstOrThrow({ where: { name: 'car' } })).id;
  const van = (await db.ontologyClass.findFirstOrThrow({ where: { name: 'van' } })).id;
  // Up the image 20 px a frame for five frames, then right: a 30×40 box, diagonal 50 px.
  const centres = [0, 1, 2, 3, 4]
    .map((i) => [300, 400 - 20 * i])
    .concat([1, 2, 3].map((i) => [300 + 20 * i, 320]));
  const boxes = centres.map(([x, y]) => [x! - 15, y! - 20, x! + 15, y! + 20]);
  const trajectory = fixture.frames.map((f, i) => ({
    frame_id: f.id,
    frame_index: f.index,
    ts_ms: f.timestampMs,
    object_id: randomUUID(),
    box: boxes[i]!,
    score: 0.9,
  }));
  turning = (
    await db.track.create({
      data: { sessionId, trackerVersion: 'bytetrack-ts-1', trajectory, attrs: { class_name: 'car' } },
    })
  ).id;
  parked = (
    await db.track.create({
      data: {
        sessionId,
        trackerVersion: 'bytetrack-ts-1',
        trajectory: trajectory.map((p) => ({ ...p, box: [600, 100, 630, 140] })),
        attrs: { class_name: 'car' },
      },
    })
  ).id;
  // The objects on frames 0..5 only (frames 6 and 7 lost), written out of order; attrs flip.
  const attrsAt = (i: number) => ({ occluded: i >= 2 && i <= 3, ...(i === 5 ? { lights: 'brake' } : {}) });
  objects = [];
  for (const i of [5, 0, 3, 1, 4, 2]) {
    const o = await db.annoObject.create({
      data: {
        id: trajectory[i]!.object_id,
        frameId: frames[i]!,
        classId: i === 4 ? van : car,
        bbox: boxes[i]!,
        source: 'human',
        state: i === 1 ? 'review' : 'accepted',
        attrs: attrsAt(i),
        trackId: turning,
      },
    });
    objects[i] = o.id;
  }
});

describe('track events', () => {
  let eventId: string;

  it('records an event over a span of the session and lists it by start frame', async () => {
    const created = await call('POST', `/api/tracks/${turning}/events`, ctx.token.annotator, {
      kind: 'turn_right',
      start_frame_id: frames[4],
      end_frame_id: frames[7],
      attrs: { junction: 'T', lanes: [1, 2] },
    });
    expect([created.status, created.body.detail]).toEqual([201, undefined]);
    expect(created.body).toMatchObject({
      track_id: turning,
      kind: 'turn_right',
      start_frame_id: frames[4],
      end_frame_id: frames[7],
      start_frame_index: 4,
      end_frame_index: 7,
      attrs: { junction: 'T', lanes: [1, 2] },
      source: 'human',
    });
    eventId = created.body.event_id;
    const single = await call('POST', `/api/tracks/${turning}/events`, ctx.token.reviewer, {
      kind: 'occluded',
      start_frame_id: frames[2],
      end_frame_id: frames[2],
    });
    expect([single.status, single.body.attrs]).toEqual([201, {}]);

    const list = await call('GET', `/api/tracks/${turning}/events`, ctx.token.annotator);
    expect(list.status).toBe(200);
    expect(list.body).toMatchObject({ track_id: turning, count: 2, truncated: false });
    expect(list.body.items.map((e: { kind: string }) => e.kind)).toEqual(['occluded', 'turn_right']);
    const ofKind = await call(
      'GET',
      `/api/tracks/${turning}/events?kind=turn_right&limit=1`,
      ctx.token.annotator,
    );
    expect(ofKind.body.items.map((e: { event_id: string }) => e.event_id)).toEqual([eventId]);
    const limited = await call('GET', `/api/tracks/${turning}/events?limit=1`, ctx.token.annotator);
    expect(limited.body).toMatchObject({ count: 2, truncated: true });
    expect((await call('GET', `/api/tracks/${parked}/events`, ctx.token.annotator)).body.items).toEqual([]);
    const audits = await ctx.api.deps.db.auditLog.findMany({
      where: { action: 'track_event.created', subjectId: eventId },
    });
    expect(audits.map((a) => a.detail)).toEqual([
      { track_id: turning, kind: 'turn_right', start_frame_index: 4, end_frame_index: 7 },
    ]);
  });

  it('refuses malformed events, naming the field', async () => {
    const refused = async (body: unknown, path = `/api/tracks/${turning}/events`, method = 'POST') => {
      const res = await call(method, path, ctx.token.annotator, body);
      expect(res.status).toBe(422);
      return (res.body.errors as Array<{ field: string }>).map((e) => e.field);
    };
    const base = { kind: 'braking', start_frame_id: frames[1], end_frame_id: frames[3] };
    expect(await refused({ ...base, kind: 'teleport' })).toEqual(['body.kind']);
    expect(await refused({ ...base, end_frame_id: frames[0] })).toEqual(['body.end_frame_id']);
    expect(await refused({ ...base, start_frame_id: otherSessionFrame })).toEqual(['body.start_frame_id']);
    expect(await refused({ ...base, end_frame_id: MISSING })).toEqual(['body.end_frame_id']);
    expect(await refused({ ...base, start_frame_id: 'frame-1' })).toEqual(['body.start_frame_id']);
    expect(await refused({ ...base, attrs: { a: { b: { c: { d: 1 } } } } })).toEqual(['body.attrs']);
    expect(await refused({ ...base, attrs: ['not', 'an', 'object'] })).toEqual(['body.attrs']);
    expect(await refused({ ...base, colour: 'red' })).toEqual(['body.colour']);
    expect(await refused({ kind: 'braking' })).toEqual(['body.start_frame_id', 'body.end_frame_id']);
    expect(await refused({}, `/api/track-events/${eventId}`, 'PATCH')).toEqual(['body']);
    // Moving only the end before the stored start is checked against that start.
    expect(await refused({ end_frame_id: frames[1] }, `/api/track-events/${eventId}`, 'PATCH')).toEqual([
      'body.end_frame_id',
    ]);
    expect(await ctx.api.deps.db.trackEvent.count({ where: { trackId: turning, kind: 'braking' } })).toBe(0);
  });

  it('patches an event, checking its span again, and audits what it was', async () => {
    const patched = await call('PATCH', `/api/track-events/${eventId}`, ctx.token.annotator, {
      start_frame_id: frames[3],
      kind: 'turn_left',
      attrs: { note: 'seen from the other side' },
    });
    expect([patched.status, patched.body.detail]).toEqual([200, undefined]);
    expect(patched.body).toMatchObject({
      event_id: eventId,
      kind: 'turn_left',
      start_frame_index: 3,
      end_frame_index: 7,
      attrs: { note: 'seen from the other side' },
    });
    const audit = await ctx.api.deps.db.auditLog.findFirstOrThrow({
      where: { action: 'track_event.updated', subjectId: eventId },
    });
    expect(audit.detail).toMatchObject({
      changed: ['attrs', 'kind', 'start_frame_id'],
      before: { kind: 'turn_right', start_frame: frames[4], end_frame: frames[7] },
    });
    const bad = await call('PATCH', `/api/track-events/${eventId}`, ctx.token.annotator, {
      end_frame_id: otherSessionFrame,
    });
    expect(bad.status).toBe(422);
    const kept = await ctx.api.deps.db.trackEvent.findUniqueOrThrow({ where: { id: eventId } });
    expect(kept.endFrame).toBe(frames[7]);
  });

  it('deletes an event for a reviewer only, and answers 404 for what is not there', async () => {
    expect((await call('DELETE', `/api/track-events/${eventId}`, ctx.token.annotator)).status).toBe(403);
    const deleted = await call('DELETE', `/api/track-events/${eventId}`, ctx.token.reviewer);
    expect([deleted.status, deleted.body]).toEqual([
      200,
      { event_id: eventId, track_id: turning, deleted: true },
    ]);
    expect(
      await ctx.api.deps.db.auditLog.count({ where: { action: 'track_event.deleted', subjectId: eventId } }),
    ).toBe(1);
    expect((await call('DELETE', `/api/track-events/${eventId}`, ctx.token.reviewer)).status).toBe(404);
    expect(
      (await call('PATCH', `/api/track-events/${eventId}`, ctx.token.annotator, { kind: 'stop' })).status,
    ).toBe(404);
    expect((await call('GET', `/api/tracks/${MISSING}/events`, ctx.token.annotator)).status).toBe(404);
    const onMissing = await call('POST', `/api/tracks/${MISSING}/events`, ctx.token.annotator, {
      kind: 'stop',
      start_frame_id: frames[0],
      end_frame_id: frames[0],
    });
    expect(onMissing.status).toBe(404);
    expect((await call('GET', '/api/tracks/not-a-uuid/events', ctx.token.annotator)).status).toBe(422);
  });
});

describe('attribute timeline', () => {
  it('lists the objects of the track by frame index with the spans of each value', async () => {
    const res = await call('GET', `/api/tracks/${turning}/attribute-timeline`, ctx.token.annotator);
    expect(res.status).toBe(200);
    expect(res.body.session_id).toBe(sessionId);
    expect(
      res.body.frames.map((f: { frame_index: number; object_id: string }) => [f.frame_index, f.object_id]),
    ).toEqual([0, 1, 2, 3, 4, 5].map((i) => [i, objects[i]]));
    const spans = (list: Array<{ value: unknown; start_frame_index: number; end_frame_index: number }>) =>
      list.map((s) => [s.value, s.start_frame_index, s.end_frame_index]);
    expect(spans(res.body.attribute_spans.occluded)).toEqual([
      [false, 0, 1],
      [true, 2, 3],
      [false, 4, 5],
    ]);
    expect(spans(res.body.attribute_spans.lights)).toEqual([
      [null, 0, 4],
      ['brake', 5, 5],
    ]);
    expect(spans(res.body.class_spans)).toEqual([
      ['car', 0, 3],
      ['van', 4, 4],
      ['car', 5, 5],
    ]);
    expect(spans(res.body.state_spans)).toEqual([
      ['accepted', 0, 0],
      ['review', 1, 1],
      ['accepted', 2, 5],
    ]);
    expect(res.body.changes).toEqual({ lights: 1, occluded: 2 });
    const empty = await call('GET', `/api/tracks/${parked}/attribute-timeline`, ctx.token.annotator);
    expect(empty.body).toMatchObject({ frames: [], attribute_spans: {}, changes: {} });
    expect((await call('GET', `/api/tracks/${MISSING}/attribute-timeline`, ctx.token.annotator)).status).toBe(
      404,
    );
  });
});

describe('intent', () => {
  const attrsOf = async (id: string) =>
    (await ctx.api.deps.db.track.findUniqueOrThrow({ where: { id } })).attrs as {
      class_name?: string;
      intent?: { value: string; source: string; set_at: string; evidence?: { points: number } };
    };

  it('lists the vocabulary, with what the rules can propose', async () => {
    const res = await call('GET', '/api/intent/vocab', ctx.token.annotator);
    expect(res.status).toBe(200);
    expect(res.body.rules_version).toBe('motion-rules-1');
    expect(res.body.thresholds).toMatchObject({ turn_min_deg: 30, stationary_max_displacement: 0.5 });
    const proposable = res.body.intents.filter((i: { proposable: boolean }) => i.proposable);
    expect(proposable.map((i: { name: string }) => i.name)).toEqual([
      'stationary',
      'straight',
      'turning_left',
      'turning_right',
      'crossing',
      'unknown',
    ]);
    expect(res.body.event_kinds.map((k: { name: string }) => k.name)).toContain('cut_in');
  });

  it('proposes from the trajectory without storing, and stores when asked', async () => {
    const proposed = await call('POST', `/api/tracks/${turning}/intent/propose`, ctx.token.annotator);
    expect([proposed.status, proposed.body.detail]).toEqual([200, undefined]);
    expect(proposed.body).toMatchObject({
      track_id: turning,
      proposal: {
        intent: 'turning_right',
        rules_version: 'motion-rules-1',
        evidence: { points: 8, heading_in_deg: -90 },
      },
      applied: false,
      intent: null,
    });
    expect((await attrsOf(turning)).intent).toBeUndefined();

    const applied = await call('POST', `/api/tracks/${parked}/intent/propose`, ctx.token.annotator, {
      apply: true,
    });
    expect(applied.body).toMatchObject({
      proposal: { intent: 'stationary' },
      applied: true,
      intent: { value: 'stationary', source: 'motion-rules-1' },
    });
    const stored = await attrsOf(parked);
    expect(stored).toMatchObject({
      class_name: 'car',
      intent: { value: 'stationary', source: 'motion-rules-1' },
    });
    expect(stored.intent?.evidence?.points).toBe(8);
  });

  it('lets a person set the intent, which a proposal then does not replace', async () => {
    const set = await call('POST', `/api/tracks/${turning}/intent/set`, ctx.token.annotator, {
      intent: 'lane_change_right',
      note: 'moves over before the junction',
    });
    expect([set.status, set.body.detail]).toEqual([200, undefined]);
    expect(set.body).toMatchObject({
      intent: { value: 'lane_change_right', source: 'human', note: 'moves over before the junction' },
      previous: null,
    });
    const stored = await attrsOf(turning);
    expect(stored.class_name).toBe('car');
    expect(stored.intent).toMatchObject({ value: 'lane_change_right', source: 'human' });
    expect(Date.parse(stored.intent!.set_at)).not.toBeNaN();
    const applied = await call('POST', `/api/tracks/${turning}/intent/propose`, ctx.token.annotator, {
      apply: true,
    });
    expect(applied.body).toMatchObject({
      proposal: { intent: 'turning_right' },
      applied: false,
      intent: { value: 'lane_change_right', source: 'human' },
    });
    expect((await attrsOf(turning)).intent?.value).toBe('lane_change_right');
    expect(
      await ctx.api.deps.db.auditLog.count({ where: { action: 'track.intent_set', subjectId: turning } }),
    ).toBe(1);
    const bad = await call('POST', `/api/tracks/${turning}/intent/set`, ctx.token.annotator, {
      intent: 'flying',
    });
    expect([bad.status, bad.body.errors.map((e: { field: string }) => e.field)]).toEqual([
      422,
      ['body.intent'],
    ]);
    expect(
      (await call('POST', `/api/tracks/${MISSING}/intent/set`, ctx.token.annotator, { intent: 'u_turn' }))
        .status,
    ).toBe(404);
    expect((await call('POST', `/api/tracks/${MISSING}/intent/propose`, ctx.token.annotator)).status).toBe(
      404,
    );
  });

  it('proposes for every track of a session', async () => {
    const res = await call('POST', '/api/intent/propose-session', ctx.token.annotator, {
      session_id: sessionId,
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      session_id: sessionId,
      tracks: 2,
      counts: { turning_right: 1, stationary: 1 },
    });
    const byTrack = Object.fromEntries(
      res.body.items.map((i: { track_id: string; proposal: { intent: string } }) => [
        i.track_id,
        i.proposal.intent,
      ]),
    );
    expect(byTrack).toEqual({ [turning]: 'turning_right', [parked]: 'stationary' });
    expect(
      (await call('POST', '/api/intent/propose-session', ctx.token.annotator, { session_id: MISSING }))
        .status,
    ).toBe(404);
  });

  it('refuses the vision-language verifier by name', async () => {
    const res = await call('POST', `/api/tracks/${turning}/intent/vlm`, ctx.token.annotator);
    expect(res.status).toBe(503);
    expect(res.body.type).toBe('urn:drivelab:problem:unavailable');
    expect(res.body.detail).toMatch(/no vision-language intent verifier is configured/);
    expect((await call('POST', `/api/tracks/${MISSING}/intent/vlm`, ctx.token.annotator)).status).toBe(404);
  });
});

it('answers 401 without a token on every route', async () => {
  const routes: Array<[string, string]> = [
    ['GET', `/api/tracks/${turning}/events`],
    ['POST', `/api/tracks/${turning}/events`],
    ['PATCH', `/api/track-events/${MISSING}`],
    ['DELETE', `/api/track-events/${MISSING}`],
    ['GET', `/api/tracks/${turning}/attribute-timeline`],
    ['GET', '/api/intent/vocab'],
    ['POST', `/api/tracks/${turning}/intent/set`],
    ['POST', `/api/tracks/${turning}/intent/propose`],
    ['POST', '/api/intent/propose-session'],
    ['POST', `/api/tracks/${turning}/intent/vlm`],
  ];
  for (const [method, path] of routes)
    expect([
      method,
      path,
      (await call(method, path, undefined, method === 'GET' || method === 'DELETE' ? undefined : {})).status,
    ]).toEqual([method, path, 401]);
});
