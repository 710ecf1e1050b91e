import { useApiForFile } from '../testkit/api';
import { createSessionFixture } from '../testkit/session-fixtures';

/**
 * Track edits on the real PostgreSQL (docs/track-edits.md): merging two tracks (and refusing a
 * contested frame without writing), splitting at a frame with events and flags partitioned, and
 * smoothing machine boxes with a person's box and a keyframe left where they are.
 */
const ctx = useApiForFile();
const MISSING = '00000000-0000-4000-8000-000000000000';

describe('track edits', () => {
  let frames: Array<{ id: string }>;
  let sessionId: string;
  let carClass: number;

  const call = (method: string, path: string, token: string, body?: unknown) =>
    ctx.api.call(method, path, { token, body });

  /** A track over the given frames, its trajectory naming each object, as retrack writes it. */
  const trackOver = async (
    indexes: number[],
    opts: {
      y?: (i: number) => number;
      source?: (i: number) => string;
      flags?: number[];
      attrs?: object;
    } = {},
  ) => {
    const { db } = ctx.api.deps;
    const track = await db.track.create({
      data: { sessionId, trackerVersion: 'bytetrack-ts-1', attrs: { class_name: 'car', ...opts.attrs } },
    });
    const points = [];
    for (const i of indexes) {
      const y = opts.y?.(i) ?? 0;
      const bbox = [10 * i, y, 10 * i + 10, y + 10];
      const o = await db.annoObject.create({
        data: {
          frameId: frames[i]!.id,
          classId: carClass,
          bbox,
          source: opts.source?.(i) ?? 'fused',
          state: 'review',
          trackId: track.id,
        },
      });
      points.push({
        frame_id: frames[i]!.id,
        frame_index: i,
        ts_ms: i * 100,
        object_id: o.id,
        box: bbox,
        score: 0.9,
      });
    }
    const flags = (opts.flags ?? []).map((i) => ({
      frame: i,
      frame_id: frames[i]!.id,
      ts_ms: i * 100,
      kind: 'long_gap',
      gap_frames: 11,
      jump: 0,
    }));
    await db.track.update({ where: { id: track.id }, data: { trajectory: points, idSwitchFlags: flags } });
    return track.id;
  };

  const objectsOf = (trackId: string) =>
    ctx.api.deps.db.annoObject.findMany({
      where: { trackId },
      include: { frame: { select: { index: true } } },
      orderBy: { frame: { index: 'asc' } },
    });

  const event = async (trackId: string, start: number, end: number) => {
    const res = await call('POST', `/api/tracks/${trackId}/events`, ctx.token.annotator, {
      kind: 'braking',
      start_frame_id: frames[start]!.id,
      end_frame_id: frames[end]!.id,
    });
    expect(res.status).toBe(201);
    return res.body.event_id as string;
  };

  beforeAll(async () => {
    const { db, storage } = ctx.api.deps;
    carClass = (await db.ontologyClass.findFirstOrThrow({ where: { name: 'car' } })).id;
    const fixture = await createSessionFixture(
      { db, storage },
      { timestampsMs: [0, 100, 200, 300, 400, 500, 600, 700, 800, 900], storeImages: false },
    );
    frames = fixture.frames;
    sessionId = fixture.session.id;
  });

  it('merges two tracks: objects, trajectory in time order, events, flags at the join, the other deleted', async () => {
    const self = await trackOver([0, 1, 2], { attrs: { intent: { value: 'straight' } } });
    const other = await trackOver([5, 6], { flags: [5], attrs: { intent: { value: 'stationary' } } });
    const eventId = await event(other, 5, 6);
    const res = await call('POST', `/api/tracks/${self}/merge`, ctx.token.reviewer, {
      other_track_id: other,
    });
    expect([res.status, res.body.detail]).toEqual([200, undefined]);
    expect(res.body).toMatchObject({
      track_id: self,
      deleted_track_id: other,
      objects_moved: 2,
      objects_unlinked: 0,
      events_moved: 1,
      switch_flags_cleared: 1,
    });
    const read = await call('GET', `/api/tracks/${self}`, ctx.token.annotator);
    expect(read.body.trajectory.map((p: { frame_index: number }) => p.frame_index)).toEqual([0, 1, 2, 5, 6]);
    expect(read.body.id_switch_flags).toEqual([]);
    expect(read.body.attrs.intent).toEqual({ value: 'straight' });
    const objects = await objectsOf(self);
    expect(objects.map((o) => [o.frame.index, o.version])).toEqual([
      [0, 1],
      [1, 1],
      [2, 1],
      [5, 2],
      [6, 2],
    ]);
    expect((await call('GET', `/api/tracks/${other}`, ctx.token.annotator)).status).toBe(404);
    const events = await call('GET', `/api/tracks/${self}/events`, ctx.token.annotator);
    expect(events.body.items.map((e: { event_id: string }) => e.event_id)).toEqual([eventId]);
    const audit = await ctx.api.deps.db.auditLog.findFirstOrThrow({
      where: { subjectId: self, action: 'track.merged' },
    });
    expect(audit.detail).toMatchObject({ merged_track_id: other, objects_moved: 2, events_moved: 1 });
  });

  it('refuses a frame both tracks hold, naming it and writing nothing, then keeps the side it is told', async () => {
    const self = await trackOver([0, 1, 2]);
    const other = await trackOver([2, 3]);
    const refused = await call('POST', `/api/tracks/${self}/merge`, ctx.token.reviewer, {
      other_track_id: other,
    });
    expect(refused.status).toBe(422);
    expect(refused.body.detail).toMatch(/frame indexes 2\)/);
    expect(await objectsOf(other)).toHaveLength(2);
    expect((await objectsOf(self)).every((o) => o.version === 1)).toBe(true);
    expect(await ctx.api.deps.db.auditLog.count({ where: { subjectId: self, action: 'track.merged' } })).toBe(
      0,
    );

    const loser = (await objectsOf(other)).find((o) => o.frame.index === 2)!;
    const kept = await call('POST', `/api/tracks/${self}/merge`, ctx.token.reviewer, {
      other_track_id: other,
      keep: 'this',
    });
    expect([kept.status, kept.body.detail]).toEqual([200, undefined]);
    expect(kept.body).toMatchObject({
      objects_moved: 1,
      objects_unlinked: 1,
      unlinked_object_ids: [loser.id],
    });
    expect((await objectsOf(self)).map((o) => o.frame.index)).toEqual([0, 1, 2, 3]);
    const unlinked = await ctx.api.deps.db.annoObject.findUniqueOrThrow({ where: { id: loser.id } });
    expect(unlinked).toMatchObject({ trackId: null, version: 2 });
  });

  it('refuses merging a track into itself, across sessions or classes, and answers 404 and 403', async () => {
    const self = await trackOver([0]);
    const truckTrack = await trackOver([4], { attrs: { class_name: 'truck' } });
    const same = await call('POST', `/api/tracks/${self}/merge`, ctx.token.reviewer, {
      other_track_id: self,
    });
    expect(same.status).toBe(422);
    const classes = await call('POST', `/api/tracks/${self}/merge`, ctx.token.reviewer, {
      other_track_id: truckTrack,
    });
    expect([classes.status, classes.body.detail]).toEqual([422, expect.stringMatching(/relabel one first/)]);
    const { db, storage } = ctx.api.deps;
    const elsewhere = await createSessionFixture({ db, storage }, { timestampsMs: [0], storeImages: false });
    const foreign = await db.track.create({ data: { sessionId: elsewhere.session.id, trackerVersion: 'x' } });
    const sessions = await call('POST', `/api/tracks/${self}/merge`, ctx.token.reviewer, {
      other_track_id: foreign.id,
    });
    expect([sessions.status, sessions.body.detail]).toEqual([
      422,
      expect.stringMatching(/only tracks of one session/),
    ]);
    for (const [track, other] of [
      [MISSING, self],
      [self, MISSING],
    ])
      expect(
        (await call('POST', `/api/tracks/${track}/merge`, ctx.token.reviewer, { other_track_id: other }))
          .status,
      ).toBe(404);
    const annotator = await call('POST', `/api/tracks/${self}/merge`, ctx.token.annotator, {
      other_track_id: truckTrack,
    });
    expect(annotator.status).toBe(403);
    expect((await call('POST', `/api/tracks/${self}/merge`, ctx.token.reviewer, {})).status).toBe(422);
  });

  it('splits at a frame: objects, trajectory, flags and events partitioned, a spanning event kept whole', async () => {
    const trackId = await trackOver([0, 1, 2, 4, 5, 6], {
      flags: [4, 6],
      attrs: { intent: { value: 'straight' } },
    });
    const spanning = await event(trackId, 1, 5);
    const later = await event(trackId, 6, 7);
    const res = await call('POST', `/api/tracks/${trackId}/split`, ctx.token.annotator, {
      at_frame_id: frames[4]!.id,
    });
    expect([res.status, res.body.detail]).toEqual([200, undefined]);
    expect(res.body).toMatchObject({
      at_frame_index: 4,
      objects_kept: 3,
      objects_moved: 3,
      events_kept: 1,
      events_moved: 1,
      switch_flags_cleared: 1,
      moved_event_ids: [later],
    });
    const newId = res.body.new_track_id as string;
    expect((await objectsOf(trackId)).map((o) => o.frame.index)).toEqual([0, 1, 2]);
    const moved = await objectsOf(newId);
    expect(moved.map((o) => [o.frame.index, o.version])).toEqual([
      [4, 2],
      [5, 2],
      [6, 2],
    ]);
    const original = await call('GET', `/api/tracks/${trackId}`, ctx.token.annotator);
    const created = await call('GET', `/api/tracks/${newId}`, ctx.token.annotator);
    expect(original.body).toMatchObject({ first_frame_index: 0, last_frame_index: 2, id_switch_flags: [] });
    expect(created.body).toMatchObject({
      session_id: sessionId,
      tracker_version: 'bytetrack-ts-1',
      class_name: 'car',
      first_frame_index: 4,
      last_frame_index: 6,
      id_switch_flags: [expect.objectContaining({ frame: 6 })],
    });
    expect(created.body.attrs.intent).toBeUndefined();
    const kept = await call('GET', `/api/tracks/${trackId}/events`, ctx.token.annotator);
    expect(kept.body.items.map((e: { event_id: string }) => e.event_id)).toEqual([spanning]);

    // Nothing on one side: at the first object's frame, or after the last.
    for (const at of [0, 8]) {
      const refused = await call('POST', `/api/tracks/${trackId}/split`, ctx.token.annotator, {
        at_frame_id: frames[at]!.id,
      });
      expect([refused.status, refused.body.detail]).toEqual([
        422,
        expect.stringMatching(/nothing would be on one side/),
      ]);
    }
    expect(await ctx.api.deps.db.track.count({ where: { sessionId } })).toBeGreaterThan(0);
    expect(
      (await call('POST', `/api/tracks/${trackId}/split`, ctx.token.annotator, { at_frame_id: MISSING }))
        .status,
    ).toBe(404);
    expect(
      (
        await call('POST', `/api/tracks/${MISSING}/split`, ctx.token.annotator, {
          at_frame_id: frames[1]!.id,
        })
      ).status,
    ).toBe(404);
    const { db, storage } = ctx.api.deps;
    const elsewhere = await createSessionFixture({ db, storage }, { timestampsMs: [0], storeImages: false });
    const foreign = await call('POST', `/api/tracks/${trackId}/split`, ctx.token.annotator, {
      at_frame_id: elsewhere.frames[0]!.id,
    });
    expect(foreign.status).toBe(422);
  });

  it('smooths machine boxes, dry run writing nothing, a person’s box and a keyframe unmoved', async () => {
    const jitter = [0, 3, -3, 3, -3, 3, 0];
    const trackId = await trackOver([0, 1, 2, 3, 4, 5, 6], {
      y: (i) => 50 + jitter[i]!,
      source: (i) => (i === 2 ? 'human' : 'fused'),
    });
    const objects = await objectsOf(trackId);
    const key = objects.find((o) => o.frame.index === 3)!;
    await call('POST', `/api/objects/${key.id}/keyframe`, ctx.token.annotator, {});

    const dry = await call('POST', `/api/tracks/${trackId}/smooth`, ctx.token.annotator, {
      window: 5,
      dry_run: true,
    });
    expect([dry.status, dry.body.detail]).toEqual([200, undefined]);
    expect(dry.body).toMatchObject({ dry_run: true, window: 5, moved: 3, fixed: 2, objects: [] });
    // As in core/tracking/edit.test.ts: o1 averages o0..o2, o4 o2..o6, o5 o4..o6.
    expect(
      dry.body.items.map((s: { frame_index: number; displacement: number }) => [
        s.frame_index,
        s.displacement,
      ]),
    ).toEqual([
      [0, 0],
      [1, 3],
      [4, 3],
      [5, 3],
      [6, 0],
    ]);
    expect((await objectsOf(trackId)).map((o) => o.version)).toEqual([1, 1, 1, 2, 1, 1, 1]);
    expect(
      await ctx.api.deps.db.auditLog.count({ where: { subjectId: trackId, action: 'track.smoothed' } }),
    ).toBe(0);

    const applied = await call('POST', `/api/tracks/${trackId}/smooth`, ctx.token.annotator, { window: 5 });
    expect([applied.status, applied.body.detail]).toEqual([200, undefined]);
    expect(applied.body).toMatchObject({ dry_run: false, moved: 3 });
    const after = await objectsOf(trackId);
    // Tops: o1, o4 and o5 come to 50; the person's o2 (47) and the keyframe o3 (53) stay.
    expect(after.map((o) => [o.frame.index, o.bbox[1], o.version])).toEqual([
      [0, 50, 1],
      [1, 50, 2],
      [2, 47, 1],
      [3, 53, 2],
      [4, 50, 2],
      [5, 50, 2],
      [6, 50, 1],
    ]);
    const track = await call('GET', `/api/tracks/${trackId}`, ctx.token.annotator);
    expect(track.body.trajectory[1].box).toEqual([10, 50, 20, 60]);
    expect(track.body.attrs.smoothing).toMatchObject({
      method: 'centred_moving_average',
      window: 5,
      objects: 3,
    });
    expect(await ctx.api.deps.db.provenance.count({ where: { objectId: after[1]!.id } })).toBe(1);
    const audit = await ctx.api.deps.db.auditLog.findFirstOrThrow({
      where: { subjectId: trackId, action: 'track.smoothed' },
    });
    expect(audit.detail).toMatchObject({ moved: 3, fixed: 2 });

    expect(
      (await call('POST', `/api/tracks/${trackId}/smooth`, ctx.token.annotator, { window: 4 })).status,
    ).toBe(422);
    expect((await call('POST', `/api/tracks/${MISSING}/smooth`, ctx.token.annotator, {})).status).toBe(404);
  });

  it('answers 401 without a token on every route', async () => {
    for (const path of ['merge', 'split', 'smooth'])
      expect((await ctx.api.call('POST', `/api/tracks/${MISSING}/${path}`, { body: {} })).status).toBe(401);
  });
});
