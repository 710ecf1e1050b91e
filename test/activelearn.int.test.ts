import { randomUUID } from 'node:crypto';
import type { Db } from '../activities/db';
import type { Frame } from '../generated/prisma/client';
import { createCommitFixture } from '../testkit/commits';
import { startIngestStack, type IngestStack } from '../testkit/media/harness';
import { createSessionFixture } from '../testkit/session-fixtures';

/**
 * The activelearn group on the real PostgreSQL and Temporal (docs/activelearn.md). No worker polls,
 * so a retrain's training workflow stays queued: the loop sees it running.
 *
 * The corpus: 200 human cars (car is common), one machine dog per "rare" frame (dog is rare).
 * Frames: `rareUncertain` (a fused dog at the auto-accept threshold, 0.8), `commonConfident` (a
 * fused car at 0.99), `humanOnly` (human cars only: no candidate), `unembedded` (a fused car at 0.5
 * and no embedding), `twin` (like commonConfident, next to it in embedding space).
 */
let stack: IngestStack;
let db: Db;
let frames: Frame[];
const f = {} as Record<'rareUncertain' | 'commonConfident' | 'humanOnly' | 'unembedded' | 'twin', Frame>;
let sessionId: string;

const DIMS = 576;
/** A unit vector along axis `axis`, nudged along the next one. */
const embedding = (axis: number, nudge = 0) => {
  const v = new Array<number>(DIMS).fill(0);
  v[axis] = Math.sqrt(1 - nudge * nudge);
  v[axis + 1] = nudge;
  return v;
};

beforeAll(async () => {
  stack = await startIngestStack({ worker: false });
  db = stack.api.deps.db;
  const session = await createSessionFixture(stack.api.deps, { frames: 5, storeImages: false });
  sessionId = session.session.id;
  frames = session.frames;
  [f.rareUncertain, f.commonConfident, f.humanOnly, f.unembedded, f.twin] = frames as [
    Frame,
    Frame,
    Frame,
    Frame,
    Frame,
  ];
  const classes = new Map(
    (await db.ontologyClass.findMany({ where: { name: { in: ['car', 'dog'] } } })).map((c) => [c.name, c.id]),
  );
  const object = (frame: Frame, className: string, source: string, state: string, conf: number | null) => ({
    id: randomUUID(),
    frameId: frame.id,
    bbox: [10, 10, 50, 50],
    classId: classes.get(className)!,
    source,
    state,
    conf,
  });
  await db.annoObject.createMany({
    data: [
      ...Array.from({ length: 200 }, () => object(f.humanOnly, 'car', 'human', 'accepted', null)),
      object(f.rareUncertain, 'dog', 'fused', 'auto_accept', 0.8),
      object(f.commonConfident, 'car', 'fused', 'auto_accept', 0.99),
      object(f.unembedded, 'car', 'fused', 'review', 0.5),
      object(f.twin, 'car', 'fused', 'auto_accept', 0.99),
    ],
  });
  for (const [frame, vector] of [
    [f.rareUncertain, embedding(0)],
    [f.commonConfident, embedding(10)],
    [f.humanOnly, embedding(20)],
    [f.twin, embedding(10, 0.05)],
  ] as const)
    await db.frameEmbedding.create({
      data: { frameId: frame.id, model: 'tiny-image-v1', vector: [...vector] },
    });
}, 180_000);

afterAll(async () => {
  await stack?.close();
});

const call = (method: string, url: string, body?: unknown, token: string | undefined = stack.reviewer) =>
  stack.api.call(method, url, { ...(token ? { token } : {}), ...(body === undefined ? {} : { body }) });

interface ScoreItem {
  frame_id: string;
  score: number;
  parts: Record<
    'uncertainty' | 'rarity' | 'diversity',
    { value: number; weight: number; contribution: number }
  >;
}

describe('who may call, and what is malformed', () => {
  it('answers 401 without a token and 403 to an annotator selecting', async () => {
    expect((await call('POST', '/api/activelearn/select', {}, '')).status).toBe(401);
    expect((await call('GET', '/api/activelearn/loop', undefined, '')).status).toBe(401);
    const res = await call('POST', '/api/activelearn/select', {}, stack.annotator);
    expect(res.status).toBe(403);
    expect(res.headers.get('content-type')).toMatch(/application\/problem\+json/);
    expect((await call('POST', '/api/activelearn/loop/retrain', {}, stack.annotator)).status).toBe(403);
    expect((await call('GET', '/api/activelearn/batches', undefined, stack.annotator)).status).toBe(200);
  });

  it('refuses malformed bodies with 422 naming the field', async () => {
    const cases: Array<[unknown, string]> = [
      [{ budget: 0 }, 'body.budget'],
      [{ budget: 501 }, 'body.budget'],
      [{ weights: { uncertainty: 0, rarity: 0, diversity: 0 } }, 'body.weights'],
      [{ weights: { uncertainty: 1 } }, 'body.weights.rarity'],
      [{ colour: 'red' }, 'body.colour'],
      [{ threshold: 2 }, 'body.threshold'],
    ];
    for (const [body, field] of cases) {
      const res = await call('POST', '/api/activelearn/select', body);
      expect({ body, status: res.status }).toEqual({ body, status: 422 });
      expect(res.body.errors.map((e: { field: string }) => e.field)).toContain(field);
    }
    const unknownClass = await call('POST', '/api/activelearn/select', { classes: ['car', 'unicorn'] });
    expect(unknownClass.status).toBe(422);
    expect(unknownClass.body.errors).toEqual([expect.objectContaining({ field: 'body.classes.1' })]);
    const unknownSession = await call('POST', '/api/activelearn/select', { session_ids: [randomUUID()] });
    expect(unknownSession.status).toBe(404);
    expect((await call('GET', '/api/activelearn/score')).status).toBe(422);
    expect((await call('GET', `/api/activelearn/score?frame_ids=${randomUUID()}`)).status).toBe(404);
  });
});

describe('scores', () => {
  it('ranks an uncertain rare-class frame above a confident common one, explaining each part', async () => {
    const ids = [f.commonConfident.id, f.rareUncertain.id, f.humanOnly.id].join(',');
    const res = await call('GET', `/api/activelearn/score?frame_ids=${ids}`, undefined, stack.annotator);
    expect(res.status).toBe(200);
    const items = res.body.items as ScoreItem[];
    expect(items.map((i) => i.frame_id)).toEqual([f.rareUncertain.id, f.commonConfident.id]);
    const [rare, common] = items as [ScoreItem, ScoreItem];
    expect(rare.parts.uncertainty.value).toBe(1);
    expect(rare.parts.rarity).toMatchObject({ class_name: 'dog', band: 'rare' });
    expect(common.parts.rarity).toMatchObject({ class_name: 'car', band: 'common' });
    for (const item of items) {
      const { uncertainty, rarity, diversity } = item.parts;
      expect(uncertainty.weight).toBeCloseTo(0.5);
      expect(item.score).toBeCloseTo(uncertainty.contribution + rarity.contribution + diversity.contribution);
    }
    expect(res.body.not_candidates).toEqual([{ frame_id: f.humanOnly.id, reason: expect.any(String) }]);
    expect(res.body.threshold).toBe(0.8);
  });

  it('follows weights given in the query', async () => {
    const ids = [f.commonConfident.id, f.unembedded.id].join(',');
    const res = await call('GET', `/api/activelearn/score?frame_ids=${ids}&weights=1,0,0`);
    expect(res.body.items[0]).toMatchObject({ frame_id: f.unembedded.id });
    expect(res.body.weights).toEqual({ uncertainty: 1, rarity: 0, diversity: 0 });
  });
});

describe('a batch, its review and the retrain loop', () => {
  let batch: {
    batch_id: string;
    picks: Array<{ frame_id: string; rank: number; parts: ScoreItem['parts'] }>;
  };

  beforeAll(async () => {
    const res = await call('POST', '/api/activelearn/select', {
      budget: 3,
      session_ids: [sessionId],
      route_to_review: true,
    });
    expect(res.status).toBe(201);
    batch = res.body;
  });

  it('picks the uncertain rare frame first, spreads over the embeddings and keeps the unembedded frame selectable', () => {
    const picked = batch.picks.map((p) => p.frame_id);
    expect(picked[0]).toBe(f.rareUncertain.id);
    expect(picked).toContain(f.unembedded.id);
    expect(picked).not.toContain(f.humanOnly.id);
    // commonConfident and twin are near-copies: only one of them makes the batch of three.
    expect(picked.filter((id) => id === f.commonConfident.id || id === f.twin.id)).toHaveLength(1);
    expect(batch.picks.find((p) => p.frame_id === f.unembedded.id)!.parts.diversity).toMatchObject({
      value: 0,
      embedded: false,
    });
  });

  it("routes the picked frames' auto-accepted objects to review, and only those", async () => {
    const objects = await db.annoObject.findMany({
      where: { frameId: { in: frames.map((x) => x.id) }, source: 'fused' },
    });
    const picked = new Set(batch.picks.map((p) => p.frame_id));
    for (const o of objects) {
      if (picked.has(o.frameId))
        expect({ frame: o.frameId, state: o.state }).toEqual({ frame: o.frameId, state: 'review' });
      else expect(o.state).toBe('auto_accept');
    }
    const dog = objects.find((o) => o.frameId === f.rareUncertain.id)!;
    expect(dog.version).toBe(2);
  });

  it('lists the saved batch, newest first, paged by cursor, and never picks its frames again', async () => {
    const second = await call('POST', '/api/activelearn/select', { budget: 5, session_ids: [sessionId] });
    expect(second.status).toBe(201);
    expect(second.body.picks.map((p: { frame_id: string }) => p.frame_id)).toEqual(
      frames
        .filter((x) => x !== f.humanOnly && !batch.picks.some((p) => p.frame_id === x.id))
        .map((x) => x.id),
    );
    const first = await call('GET', '/api/activelearn/batches?limit=1', undefined, stack.annotator);
    expect(first.body.items.map((b: { batch_id: string }) => b.batch_id)).toEqual([second.body.batch_id]);
    const next = await call('GET', `/api/activelearn/batches?limit=1&cursor=${first.body.next_cursor}`);
    expect(next.body.items[0]).toMatchObject({ batch_id: batch.batch_id, frames: 3, route_to_review: true });
    expect(next.body.items[0].picks[0]).toMatchObject({
      rank: 1,
      frame_id: f.rareUncertain.id,
      session_id: sessionId,
    });
    const none = await call('POST', '/api/activelearn/select', { session_ids: [sessionId] });
    expect(none.status).toBe(422);
  });

  it('refuses a retrain while nothing is labelled, and says a retrain is not due', async () => {
    const loop = await call('GET', '/api/activelearn/loop', undefined, stack.annotator);
    expect(loop.status).toBe(200);
    expect(loop.body.retrain).toMatchObject({ due: false, running: null });
    expect(loop.body.labels.new_frames).toBe(0);
    expect(loop.body.champion.model_version).toMatch(/^yolox_nano\.onnx@/);
    const res = await call('POST', '/api/activelearn/loop/retrain', {});
    expect(res.status).toBe(422);
    expect(res.body.detail).toMatch(/nothing new is labelled/);
  });

  it('counts what review decides, then trains a challenger through the training start', async () => {
    const objectIds = (
      await db.annoObject.findMany({
        where: { frameId: { in: batch.picks.map((p) => p.frame_id) }, source: 'fused' },
        select: { id: true },
      })
    ).map((o) => o.id);
    // A commit made before the review holds the frames but not their labels: refused by name.
    const cocoFiles = (frameIds: string[]) => ({
      'annotations/instances_train.json': JSON.stringify({ images: [], annotations: [], categories: [] }),
      'annotations/instances_val.json': JSON.stringify({ images: [], annotations: [], categories: [] }),
      ...Object.fromEntries(frameIds.map((id, i) => [`images/${i ? 'train' : 'val'}/${id}.jpg`, 'jpeg'])),
    });
    const withoutNewLabels = await createCommitFixture(stack.api.deps, {
      name: 'before-review',
      objects: [],
      files: cocoFiles(batch.picks.map((p) => p.frame_id)),
    });
    const reviewed = await call('POST', '/api/objects/bulk-review', {
      object_ids: objectIds,
      action: 'confirm',
    });
    expect(reviewed.status).toBe(200);

    const loop = await call('GET', '/api/activelearn/loop');
    const mine = loop.body.batches.find((b: { batch_id: string }) => b.batch_id === batch.batch_id);
    expect(mine).toMatchObject({ frames: 3, frames_decided: 3, complete: true });
    expect(loop.body.labels.new_frames).toBe(3);
    expect(loop.body.retrain.due).toBe(true);

    const refused = await call('POST', '/api/activelearn/loop/retrain', {
      dataset_commit_id: withoutNewLabels.commitId,
    });
    expect(refused.status).toBe(422);
    expect(refused.body.detail).toMatch(/holds none of the 3 frames/);

    const commit = await createCommitFixture(stack.api.deps, {
      name: 'after-review',
      objects: [],
      files: cocoFiles(batch.picks.map((p) => p.frame_id)),
    });
    const started = await call('POST', '/api/activelearn/loop/retrain', { config: { epochs: 2 } });
    expect(started.status).toBe(202);
    const jobId = started.body.job_id as string;
    expect(started.headers.get('location')).toBe(`/api/training/${jobId}`);
    expect(started.body).toMatchObject({
      status: 'queued',
      dataset_commit_id: commit.commitId,
      workflow_id: `training-${jobId}`,
      labelled_frames: 3,
      parent_model_version: expect.stringMatching(/^yolox_nano\.onnx@/),
    });
    const job = await call('GET', `/api/training/${jobId}`, undefined, stack.annotator);
    expect(job.body).toMatchObject({ status: 'queued', config: { epochs: 2 } });

    const again = await call('POST', '/api/activelearn/loop/retrain', {});
    expect(again.status).toBe(409);
    expect(again.body.detail).toContain(jobId);
    const after = await call('GET', '/api/activelearn/loop');
    expect(after.body.retrain).toMatchObject({
      due: false,
      running: jobId,
      last: { job_id: jobId, labelled_frames: 3 },
    });
    expect(after.body.labels.new_frames).toBe(0);
  });
});

describe('consent', () => {
  it('never selects a frame of a session whose consent is withdrawn, and names the session it left out', async () => {
    const withdrawn = await createSessionFixture(stack.api.deps, { frames: 1, storeImages: false });
    const car = await db.ontologyClass.findUniqueOrThrow({ where: { name: 'car' } });
    await db.annoObject.create({
      data: {
        frameId: withdrawn.frames[0]!.id,
        bbox: [1, 1, 9, 9],
        classId: car.id,
        source: 'fused',
        state: 'review',
        conf: 0.5,
      },
    });
    const consent = await stack.api.call('POST', '/api/govern/consent', {
      token: stack.admin,
      body: { session_id: withdrawn.session.id, consent_status: 'withdrawn' },
    });
    expect(consent.status).toBeLessThan(300);
    const res = await stack.api.call('POST', '/api/activelearn/select', {
      token: stack.reviewer,
      body: { budget: 5, session_ids: [withdrawn.session.id] },
    });
    expect(res.status).toBe(422);
    expect(res.body.detail).toMatch(
      /may not be selected by a campaign or active learning because of their consent/,
    );
    expect(res.body.consent_excluded).toEqual([
      expect.objectContaining({ session_id: withdrawn.session.id }),
    ]);
  });
});
