import { randomUUID } from 'node:crypto';
import { useApiForFile } from '../testkit/api';
import { createSessionFixture } from '../testkit/session-fixtures';

/**
 * Quality along tracks on the real PostgreSQL (docs/quality.md "Quality along tracks"): the gaps
 * inside a car's track planned and filled by interpolation, a longer gap and a gap across classes
 * left; the class a person gave a track backfilled to its machine objects as an undoable track
 * relabel, a track with an implausible move or no human label left.
 */
const ctx = useApiForFile();

let sessionId: string;
let frameIds: string[];
let classIds: Record<string, number>;

const newTrack = async () =>
  (await ctx.api.deps.db.track.create({ data: { sessionId, trackerVersion: 'bytetrack-ts-1' } })).id;
const box = async (trackId: string, frame: number, className: string, source = 'fused', state = 'review') =>
  (
    await ctx.api.deps.db.annoObject.create({
      data: {
        frameId: frameIds[frame]!,
        classId: classIds[className]!,
        bbox: [10 + 4 * frame, 10, 40 + 4 * frame, 30],
        conf: source === 'human' ? null : 0.8,
        source,
        state,
        trackId,
      },
    })
  ).id;
const get = (path: string, token = ctx.token.reviewer) => ctx.api.call('GET', path, { token });
const post = (path: string, body: unknown, token = ctx.token.reviewer) =>
  ctx.api.call('POST', path, { token, body });

beforeAll(async () => {
  const { db, storage } = ctx.api.deps;
  classIds = Object.fromEntries(
    (await db.ontologyClass.findMany({ where: { name: { in: ['car', 'van', 'pedestrian'] } } })).map((c) => [
      c.name,
      c.id,
    ]),
  );
  const fixture = await createSessionFixture({ db, storage }, { frames: 10, storeImages: false });
  sessionId = fixture.session.id;
  frameIds = fixture.frames.map((f) => f.id);
});

describe('track gap fill', () => {
  let car: string;
  let mixed: string;

  beforeAll(async () => {
    car = await newTrack();
    for (const f of [0, 1, 4, 5]) await box(car, f, 'car');
    await box(car, 9, 'car', 'human', 'accepted');
    mixed = await newTrack();
    await box(mixed, 0, 'car');
    await box(mixed, 2, 'van');
  });

  it('plans every gap with what a fill would do, writing nothing', async () => {
    const before = await ctx.api.deps.db.annoObject.count();
    const plan = await get(`/api/quality/track-gap-fill/plan?track_ids=${car},${mixed}&max_gap=2`);
    expect([plan.status, plan.body.detail]).toEqual([200, undefined]);
    expect(plan.body).toMatchObject({ max_gap: 2, tracks: 2, gaps: 3, fillable: 1, frames_to_fill: 2 });
    const summary = plan.body.items.map(
      (i: {
        track_id: string;
        missing_frames: Array<{ frame_index: number }>;
        action: string;
        reason?: string;
      }) => [
        i.track_id === car ? 'car' : 'mixed',
        i.missing_frames.map((f) => f.frame_index),
        i.action,
        i.reason ?? null,
      ],
    );
    expect(summary).toEqual([
      ['car', [2, 3], 'fill', null],
      ['car', [6, 7, 8], 'skip', 'too_long'],
      ['mixed', [1], 'skip', 'class_mismatch'],
    ]);
    expect(await ctx.api.deps.db.annoObject.count()).toBe(before);
  });

  it('fills the fillable gaps as interpolations, and a second fill adds nothing', async () => {
    const res = await post('/api/quality/track-gap-fill', { session_id: sessionId, max_gap: 3 });
    expect([res.status, res.body.detail]).toEqual([200, undefined]);
    expect(res.body).toMatchObject({ max_gap: 3, filled_tracks: 1, created: 5 });
    expect(res.body.results).toEqual([
      expect.objectContaining({ track_id: car, outcome: 'filled', created: 5 }),
    ]);
    const fills = await ctx.api.deps.db.annoObject.findMany({
      where: { trackId: car, source: 'interpolated' },
      include: { frame: { select: { index: true } } },
    });
    expect(fills.map((o) => o.frame.index).sort()).toEqual([2, 3, 6, 7, 8]);
    for (const o of fills) {
      expect(o.state).toBe('review');
      // The boxes move 4 px a frame, so the fill on frame i sits at 10 + 4i.
      expect(o.bbox[0]).toBeCloseTo(10 + 4 * o.frame.index, 6);
    }
    const audit = await ctx.api.deps.db.auditLog.findFirstOrThrow({
      where: { subjectId: car, action: 'track.interpolated' },
    });
    expect(audit.detail).toMatchObject({ mode: 'gap-fill', created: 5 });
    const again = await post('/api/quality/track-gap-fill', { session_id: sessionId, max_gap: 3 });
    expect(again.body).toMatchObject({ filled_tracks: 0, created: 0, results: [] });
    const plan = await get(`/api/quality/track-gap-fill/plan?session_id=${sessionId}`);
    expect(plan.body.fillable).toBe(0);
  });
});

describe('track relabel backfill', () => {
  let van: string;
  let implausible: string;
  let unlabelled: string;
  let moved: string[];
  let rejected: string;

  beforeAll(async () => {
    van = await newTrack();
    await box(van, 0, 'van', 'human', 'accepted');
    moved = [await box(van, 1, 'car'), await box(van, 2, 'car')];
    rejected = await box(van, 3, 'car', 'fused', 'rejected');
    implausible = await newTrack();
    await box(implausible, 0, 'car', 'human', 'accepted');
    await box(implausible, 1, 'pedestrian');
    unlabelled = await newTrack();
    await box(unlabelled, 0, 'car');
  });

  it('plans per track the class people gave it and the machine objects that would take it', async () => {
    const plan = await get(
      `/api/quality/track-relabel-backfill/plan?track_ids=${van},${implausible},${unlabelled}`,
    );
    expect([plan.status, plan.body.detail]).toEqual([200, undefined]);
    expect(plan.body).toMatchObject({ tracks: 3, relabel_tracks: 1, objects_to_move: 2 });
    const byTrack = new Map(plan.body.items.map((i: { track_id: string }) => [i.track_id, i]));
    expect(byTrack.get(van)).toMatchObject({
      target: 'van',
      human_votes: { van: 1 },
      action: 'relabel',
      moves: moved.map((object_id, i) => ({ object_id, frame_index: i + 1, from_class: 'car' })),
    });
    expect(byTrack.get(implausible)).toMatchObject({
      action: 'skip',
      reason: 'implausible_move',
      refused: [expect.objectContaining({ from_class: 'pedestrian', to_class: 'car' })],
    });
    expect(byTrack.get(unlabelled)).toMatchObject({ action: 'skip', reason: 'no_human_label' });
  });

  it('relabels the planned track as one undoable track relabel, leaving the rejected box and the others', async () => {
    const res = await post('/api/quality/track-relabel-backfill', {
      track_ids: [van, implausible, unlabelled],
      reviewer: 'qa-1',
    });
    expect([res.status, res.body.detail]).toEqual([200, undefined]);
    expect(res.body).toMatchObject({ tracks: 3, relabelled_tracks: 1, objects_relabelled: 2 });
    const [result] = res.body.results;
    expect(result).toMatchObject({ track_id: van, outcome: 'relabelled', class_name: 'van', relabelled: 2 });
    const { db } = ctx.api.deps;
    for (const id of moved)
      expect(await db.annoObject.findUniqueOrThrow({ where: { id } })).toMatchObject({
        classId: classIds.van,
        source: 'human',
      });
    expect(await db.annoObject.findUniqueOrThrow({ where: { id: rejected } })).toMatchObject({
      classId: classIds.car,
      state: 'rejected',
    });
    expect(await db.agentRun.findUniqueOrThrow({ where: { id: result.run_id } })).toMatchObject({
      kind: 'track-relabel',
      status: 'completed',
    });
    expect(await db.reviewBatch.findUniqueOrThrow({ where: { id: result.batch_id } })).toMatchObject({
      reviewer: 'qa-1',
      objectCount: 2,
    });
  });
});

describe('scope, bad input and roles', () => {
  it('answers 422 without a scope or for malformed ids, 404 for unknown ones, 403 for an annotator', async () => {
    for (const path of [
      '/api/quality/track-gap-fill/plan',
      '/api/quality/track-gap-fill/plan?track_ids=nope',
      '/api/quality/track-relabel-backfill/plan?max_gap=2',
    ])
      expect((await get(path)).status).toBe(422);
    for (const body of [
      {},
      { session_id: sessionId, extra: 1 },
      { track_ids: [] },
      { session_id: sessionId, max_gap: 0 },
    ])
      expect((await post('/api/quality/track-gap-fill', body)).status).toBe(422);
    expect((await post('/api/quality/track-relabel-backfill', {})).status).toBe(422);
    expect((await get(`/api/quality/track-gap-fill/plan?session_id=${randomUUID()}`)).status).toBe(404);
    const missing = await post('/api/quality/track-relabel-backfill', { track_ids: [randomUUID()] });
    expect([missing.status, missing.body.missing?.length]).toEqual([404, 1]);
    expect(
      (await get(`/api/quality/track-gap-fill/plan?session_id=${sessionId}`, ctx.token.annotator)).status,
    ).toBe(403);
    expect(
      (await post('/api/quality/track-relabel-backfill', { session_id: sessionId }, ctx.token.annotator))
        .status,
    ).toBe(403);
  });
});
