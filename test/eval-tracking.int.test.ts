import { randomUUID } from 'node:crypto';
import { useApiForFile } from '../testkit/api';
import { createSessionFixture } from '../testkit/session-fixtures';

/**
 * Tracking metrics of a run against people's tracks on the real PostgreSQL (docs/tracks.md
 * "Tracking metrics of a run"): two cars a person tracked over six frames; an imported run that
 * sees both, misses one car on one frame and sees a parked car nobody labelled on three. Tracked by
 * the platform's tracker, that is 11 matches, 1 miss and 3 false boxes with no switch — figures one
 * can count by hand.
 */
const ctx = useApiForFile();

type Box = [number, number, number, number];
const carA = (i: number): Box => [100 + 20 * i, 300, 260 + 20 * i, 420];
const carB = (i: number): Box => [800 - 6 * i, 280, 960 - 6 * i, 400];
const parked: Box = [1100, 500, 1250, 600];
const nudge = ([x1, y1, x2, y2]: Box, d: number): Box => [x1 + d, y1 - d, x2 + d, y2 - d];

let sessionId: string;
let runId: string;
let frameIds: string[];

const evaluate = (body: object, token = ctx.token.annotator) =>
  ctx.api.call('POST', '/api/eval/tracking', { token, body });

beforeAll(async () => {
  const { db, storage } = ctx.api.deps;
  const { session, frames } = await createSessionFixture({ db, storage }, { frames: 6, storeImages: false });
  sessionId = session.id;
  frameIds = frames.map((f) => f.id);
  await db.frame.updateMany({ where: { sessionId }, data: { width: 1280, height: 720 } });
  const car = (await db.ontologyClass.findFirstOrThrow({ where: { name: 'car' } })).id;
  for (const shape of [carA, carB]) {
    const track = await db.track.create({ data: { sessionId, trackerVersion: 'bytetrack-ts-1' } });
    for (const [i, frameId] of frameIds.entries())
      await db.annoObject.create({
        data: {
          frameId,
          classId: car,
          bbox: shape(i),
          source: 'human',
          state: 'accepted',
          trackId: track.id,
        },
      });
  }
  const model = await ctx.api.call('POST', '/api/models/external', {
    token: ctx.token.reviewer,
    body: { model_version: 'ext-tracker@1', name: 'ext-tracker@1', class_names: ['car'] },
  });
  expect(model.status).toBe(201);
  const predictions = frameIds.flatMap((frame_id, i) => [
    { frame_id, class_name: 'car', conf: 0.9, bbox: nudge(carA(i), 2) },
    ...(i === 3 ? [] : [{ frame_id, class_name: 'car', conf: 0.85, bbox: nudge(carB(i), -2) }]),
    ...(i < 3 ? [{ frame_id, class_name: 'car', conf: 0.8, bbox: parked }] : []),
  ]);
  const run = await ctx.api.call('POST', '/api/inference-runs', {
    token: ctx.token.reviewer,
    body: { mode: 'import', model_version: 'ext-tracker@1', predictions },
  });
  expect(run.status).toBe(201);
  runId = run.body.id;
});

describe('POST /api/eval/tracking', () => {
  it("scores the run's tracks against the human tracks and records the operation", async () => {
    const res = await evaluate({ session_id: sessionId, run_id: runId });
    expect([res.status, res.body.detail]).toEqual([200, undefined]);
    expect(res.body).toMatchObject({
      session_id: sessionId,
      run_id: runId,
      model_version: 'ext-tracker@1',
      match_iou: 0.5,
      frames: 6,
      gt_tracks: 2,
      // car A, car B (kept through its missed frame), the parked car.
      hypothesis_tracks: 3,
      clear: { matches: 11, misses: 1, false_positives: 3, switches: 0, gt_boxes: 12, hyp_boxes: 14 },
      identity: { idtp: 11, idfn: 1, idfp: 3 },
    });
    expect(res.body.clear.mota).toBeCloseTo(1 - (1 + 3 + 0) / 12, 12);
    expect(res.body.identity.idf1).toBeCloseTo((2 * 11) / (12 + 14), 12);
    expect(res.body.hota.hota).toBeGreaterThan(0.5);
    expect(res.body.hota.hota).toBeLessThan(1);
    const op = await ctx.api.deps.db.evalOperation.findUniqueOrThrow({
      where: { id: res.body.operation_id },
    });
    expect(op).toMatchObject({ opType: 'tracking', subjectIds: [sessionId, runId] });
    expect(op.result).toMatchObject({ clear: { matches: 11 } });
  });

  it('restricts both sides to one class', async () => {
    const res = await evaluate({ session_id: sessionId, run_id: runId, class_name: 'pedestrian' });
    expect(res.status).toBe(422);
    expect(res.body.reason).toBe('track_ground_truth_unavailable');
    const unknown = await evaluate({ session_id: sessionId, run_id: runId, class_name: 'spaceship' });
    expect(unknown.status).toBe(404);
  });

  it('refuses by name without human tracks, and answers 404 and 422 for bad references', async () => {
    const { db, storage } = ctx.api.deps;
    const bare = await createSessionFixture({ db, storage }, { frames: 2, storeImages: false });
    const none = await evaluate({ session_id: bare.session.id, run_id: runId });
    expect([none.status, none.body.reason]).toEqual([422, 'track_ground_truth_unavailable']);
    expect((await evaluate({ session_id: randomUUID(), run_id: runId })).status).toBe(404);
    expect((await evaluate({ session_id: sessionId, run_id: randomUUID() })).status).toBe(404);
    for (const body of [
      {},
      { session_id: sessionId },
      { session_id: 'x', run_id: runId },
      { session_id: sessionId, run_id: runId, extra: 1 },
    ])
      expect((await evaluate(body)).status).toBe(422);
    expect((await evaluate({ session_id: sessionId, run_id: runId }, '')).status).toBe(401);
  });
});
