import { randomUUID } from 'node:crypto';
import { normaliseShape } from '../core/geometry';
import { queueScore } from '../core/review/ranking';
import { createFrame, removeTestBlobs } from '../testkit/annotations';
import { createUserWithToken, startTestApi, type TestApi } from '../testkit/api';
import { createTestDatabase, type TestDatabase } from '../testkit/database';
import { testConfig } from '../testkit/stack';

/** Single and bulk review, their transaction and concurrency rules, and the review queue. */

let db: TestDatabase;
let api: TestApi;
let annotator: string;
let reviewerA: string;
let reviewerB: string;
let frameId: string;
let sessionId: string;
const classId: Record<string, number> = {};

beforeAll(async () => {
  db = await createTestDatabase();
  api = await startTestApi(testConfig({ DATABASE_URL: db.url }));
  annotator = (await createUserWithToken(api.deps, 'annotator')).token;
  reviewerA = (await createUserWithToken(api.deps, 'reviewer')).token;
  reviewerB = (await createUserWithToken(api.deps, 'reviewer')).token;
  ({
    frame: { id: frameId },
    sessionId,
  } = await createFrame(api.deps));
  for (const c of await api.deps.db.ontologyClass.findMany()) classId[c.name] = c.id;
});
afterAll(async () => {
  if (api) await removeTestBlobs(api.deps);
  await api?.close();
  await db?.drop();
});

/** Machine objects as the auto-labeller would leave them, with provenance. */
async function machineObjects(
  n: number,
  opts: { cls?: string; conf?: (i: number) => number | null; state?: string; frame?: string } = {},
): Promise<string[]> {
  const ids = Array.from({ length: n }, () => randomUUID());
  await api.deps.db.annoObject.createMany({
    data: ids.map((id, i) => ({
      id,
      frameId: opts.frame ?? frameId,
      bbox: [i % 600, 10, (i % 600) + 20, 40],
      classId: classId[opts.cls ?? 'car']!,
      conf: opts.conf ? opts.conf(i) : 0.7,
      source: 'fused',
      state: opts.state ?? 'review',
    })),
  });
  await api.deps.db.provenance.createMany({
    data: ids.map((objectId) => ({
      objectId,
      paths: ['closed_set', 'open_vocab'],
      rawConfidences: { closed_set: 0.72 },
      agreement: 0.9,
    })),
  });
  return ids;
}

const review = (id: string, body: Record<string, unknown>, token = reviewerA) =>
  api.call('POST', `/api/objects/${id}/review`, { token, body });
const bulk = (body: Record<string, unknown>, token = reviewerA) =>
  api.call('POST', '/api/objects/bulk-review', { token, body });
const row = (id: string) => api.deps.db.annoObject.findUniqueOrThrow({ where: { id } });

describe('single review', () => {
  it('confirms: state accepted, source human, version +1, prior source/conf/provenance in before', async () => {
    const [id] = await machineObjects(1);
    const res = await review(id!, { action: 'confirm', time_spent_ms: 1200 });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ id, version: 2, state: 'accepted', class_id: classId.car, source: 'human' });
    const r = await api.deps.db.review.findFirstOrThrow({ where: { objectId: id } });
    expect(r.before).toMatchObject({
      source: 'fused',
      conf: 0.7,
      state: 'review',
      version: 1,
      provenance: { paths: ['closed_set', 'open_vocab'], agreement: 0.9 },
    });
    expect(r).toMatchObject({ action: 'confirm', reviewer: 'anon', timeSpentMs: 1200, batchId: null });
    const audit = await api.deps.db.auditLog.findFirst({
      where: { subjectType: 'object', subjectId: id, action: 'object.reviewed' },
    });
    expect(audit).not.toBeNull();
  });

  it('rejects, relabels, edits and honours an explicit state', async () => {
    const [a, b, c, d] = await machineObjects(4);
    expect((await review(a!, { action: 'reject' })).body.state).toBe('rejected');
    const relabel = await review(b!, { action: 'relabel', class_name: 'bus' });
    expect(relabel.body).toMatchObject({ state: 'accepted', class_id: classId.bus });
    const edit = await review(c!, { action: 'edit', attrs: { occluded: true } });
    expect(edit.body.state).toBe('review');
    expect((await api.deps.db.annoObject.findUniqueOrThrow({ where: { id: c! } })).attrs).toEqual({
      occluded: true,
    });
    expect(
      (await review(d!, { action: 'relabel', class_name: 'truck', state: 'submitted' })).body.state,
    ).toBe('submitted');
  });

  it('refuses bad requests without writing: 400 state, 422 relabel without class, 403 annotator, 404, 409', async () => {
    const [id] = await machineObjects(1);
    expect((await review(id!, { action: 'confirm', state: 'approved' })).status).toBe(400);
    expect((await review(id!, { action: 'relabel' })).status).toBe(422);
    expect((await review(id!, { action: 'relabel', class_name: 'no_such' })).status).toBe(422);
    expect((await review(id!, { action: 'shrug' })).status).toBe(422);
    expect((await review(id!, { action: 'confirm' }, annotator)).status).toBe(403);
    expect((await review(randomUUID(), { action: 'confirm' })).status).toBe(404);
    const stale = await review(id!, { action: 'confirm', expected_version: 5 });
    expect(stale.status).toBe(409);
    expect(stale.body.conflicts).toEqual([{ object_id: id, expected: 5, actual: 1 }]);
    expect(await api.deps.db.review.count({ where: { objectId: id! } })).toBe(0);
    expect((await api.deps.db.annoObject.findUniqueOrThrow({ where: { id: id! } })).version).toBe(1);
  });

  it('lets exactly one of ten racing reviews with the same expected_version win', async () => {
    const [id] = await machineObjects(1);
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        review(
          id!,
          { action: i % 2 ? 'reject' : 'confirm', expected_version: 1 },
          i % 2 ? reviewerB : reviewerA,
        ),
      ),
    );
    expect(results.filter((r) => r.status === 200)).toHaveLength(1);
    expect(results.filter((r) => r.status === 409)).toHaveLength(9);
    expect((await api.deps.db.annoObject.findUniqueOrThrow({ where: { id: id! } })).version).toBe(2);
    expect(await api.deps.db.review.count({ where: { objectId: id! } })).toBe(1);
  });
});

describe('geometry edits (action edit)', () => {
  const frameSize = { width: 640, height: 360 };
  const reviewsOf = (id: string) =>
    api.deps.db.review.findMany({ where: { objectId: id }, orderBy: { createdAt: 'asc' } });
  /** Nothing written: the object at version 1 as machineObjects left it, no review, no audit entry. */
  async function untouched(id: string) {
    expect(await row(id)).toMatchObject({ version: 1, source: 'fused', bbox: [0, 10, 20, 40], rbox: [] });
    expect(await api.deps.db.review.count({ where: { objectId: id } })).toBe(0);
    expect(await api.deps.db.auditLog.count({ where: { subjectType: 'object', subjectId: id } })).toBe(0);
  }

  it('edits a rotated box as normaliseShape stores it, recording the geometry before and after', async () => {
    const [id] = await machineObjects(1);
    const res = await review(id!, { action: 'edit', bbox: [100, 100, 200, 150], rot_deg: 30 });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ id, version: 2, state: 'review', class_id: classId.car, source: 'human' });
    const expected = normaliseShape({ bbox: [100, 100, 200, 150], rot_deg: 30 }, frameSize);
    expect(await row(id!)).toMatchObject({
      bbox: expected.bbox,
      rbox: [100, 100, 200, 150],
      rotDeg: 30,
      version: 2,
      source: 'human',
      state: 'review',
    });
    const [r] = await reviewsOf(id!);
    expect(r).toMatchObject({ action: 'edit', batchId: null });
    expect(r!.before).toMatchObject({
      bbox: [0, 10, 20, 40],
      rbox: [],
      rot_deg: 0,
      polyline: null,
      keypoints: null,
      version: 1,
    });
    expect(r!.after).toMatchObject({
      bbox: expected.bbox,
      rbox: [100, 100, 200, 150],
      rot_deg: 30,
      version: 2,
    });
    const audit = await api.deps.db.auditLog.findFirstOrThrow({
      where: { subjectType: 'object', subjectId: id, action: 'object.reviewed' },
    });
    expect(audit.detail).toMatchObject({ shapes_changed: ['bbox', 'rbox', 'rot_deg'], clipped: false });
    const history = await api.call('GET', `/api/objects/${id}/history`, { token: annotator });
    expect(history.body.events.find((e: any) => e.kind === 'review').after.rbox).toEqual([
      100, 100, 200, 150,
    ]);

    // rot_deg alone turns the box it was drawn as (rbox), not its enclosure.
    expect((await review(id!, { action: 'edit', rot_deg: -90 })).status).toBe(200);
    const turned = normaliseShape({ bbox: [100, 100, 200, 150], rot_deg: -90 }, frameSize);
    expect(await row(id!)).toMatchObject({ bbox: turned.bbox, rbox: [100, 100, 200, 150], rotDeg: -90 });
  });

  it('replaces a polyline (clamped to the frame) and removes it with null', async () => {
    const [id] = await machineObjects(1);
    const line = await review(id!, { action: 'edit', polyline: [[10, 50, 700, 60]] });
    expect(line.status).toBe(200);
    // The box grows over the line, whose far vertex is clamped into the frame.
    expect(await row(id!)).toMatchObject({
      polyline: [[10, 50, 640, 60]],
      bbox: [0, 10, 640, 60],
      version: 2,
    });
    expect((await review(id!, { action: 'edit', polyline: [[5, 5, 15, 15]] })).status).toBe(200);
    expect((await row(id!)).polyline).toEqual([[5, 5, 15, 15]]);
    const removed = await review(id!, { action: 'edit', polyline: null, attrs: { lane: 2 } });
    expect(removed.status).toBe(200);
    const o = await row(id!);
    expect(o).toMatchObject({ polyline: null, attrs: { lane: 2 }, version: 4 });
    const last = (await reviewsOf(id!))[2]!;
    expect(last.before).toMatchObject({ polyline: [[5, 5, 15, 15]] });
    expect(last.after).toMatchObject({ polyline: null });
  });

  it('sets and removes keypoints, keeping the mask and enclosing it', async () => {
    const made = await api.call('POST', `/api/frames/${frameId}/objects`, {
      token: reviewerA,
      body: {
        class_name: 'person',
        bbox: [300, 100, 340, 200],
        mask_polygons: [[300, 100, 340, 100, 340, 200]],
        state: 'review',
      },
    });
    expect(made.status).toBe(201);
    const id = made.body.id as string;
    const res = await review(id, {
      action: 'edit',
      bbox: [10, 10, 20, 20],
      keypoints: { nose: [50, 60, 2], tail: [30, 30] },
    });
    expect(res.status).toBe(200);
    const o = await row(id);
    expect(o).toMatchObject({
      keypoints: { nose: [50, 60, 2], tail: [30, 30] },
      maskUri: made.body.mask_uri,
    });
    // The new box grows over the keypoints and the mask it kept.
    expect(o.bbox).toEqual([10, 10, 340, 200]);
    const outside = await review(id, { action: 'edit', keypoints: { nose: [650, 60] } });
    expect(outside.status).toBe(422);
    expect(outside.body.errors[0].field).toBe('body.keypoints.nose');
    expect((await row(id)).version).toBe(2);
    expect((await review(id, { action: 'edit', keypoints: null })).status).toBe(200);
    expect(await row(id)).toMatchObject({ keypoints: null, version: 3 });
  });

  it('refuses geometry with another action (422 naming the field) and a box outside the frame, writing nothing', async () => {
    const [id] = await machineObjects(1);
    const accept = await review(id!, { action: 'accept', bbox: [1, 1, 5, 5], keypoints: null });
    expect(accept.status).toBe(422);
    expect(accept.body.errors.map((e: { field: string }) => e.field)).toEqual([
      'body.bbox',
      'body.keypoints',
    ]);
    const outside = await review(id!, { action: 'edit', bbox: [700, 10, 800, 40] });
    expect(outside.status).toBe(422);
    expect(outside.body.errors[0].field).toBe('body.bbox');
    expect((await review(id!, { action: 'edit', bbox: [1, 2, 3] })).status).toBe(422);
    expect((await review(id!, { action: 'edit', polyline: [[1, 2]] })).status).toBe(422);
    await untouched(id!);
  });

  it('answers 409 and writes nothing on an expected_version mismatch', async () => {
    const [id] = await machineObjects(1);
    const stale = await review(id!, { action: 'edit', bbox: [50, 50, 80, 80], expected_version: 2 });
    expect(stale.status).toBe(409);
    expect(stale.body.conflicts).toEqual([{ object_id: id, expected: 2, actual: 1 }]);
    await untouched(id!);
    const fresh = await review(id!, { action: 'edit', bbox: [50, 50, 80, 80], expected_version: 1 });
    expect(fresh.status).toBe(200);
    expect(await row(id!)).toMatchObject({ bbox: [50, 50, 80, 80], version: 2 });
  });
});

describe('who may review: annotators edit, reviewers judge', () => {
  it('lets an annotator fix geometry and content; a judged object goes back to submitted', async () => {
    const [judged, open, labelled, byReviewer] = await machineObjects(4, { state: 'accepted' });
    await api.deps.db.annoObject.update({ where: { id: open! }, data: { state: 'review' } });
    const res = await review(judged!, { action: 'edit', bbox: [60, 60, 90, 90], rot_deg: 10 }, annotator);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ state: 'submitted', version: 2, source: 'human' });
    const [r] = await api.deps.db.review.findMany({ where: { objectId: judged! } });
    expect(r!.before).toMatchObject({ state: 'accepted' });
    expect(r!.after).toMatchObject({ state: 'submitted', rbox: [60, 60, 90, 90], rot_deg: 10 });
    const audit = await api.deps.db.auditLog.findFirstOrThrow({
      where: { subjectType: 'object', subjectId: judged!, action: 'object.reviewed' },
    });
    expect(audit.detail).toMatchObject({ reopened: 1 });
    // An open object stays where it is; class and attrs are content too.
    expect((await review(open!, { action: 'edit', polyline: [[1, 1, 9, 9]] }, annotator)).body.state).toBe(
      'review',
    );
    const relabel = await review(
      labelled!,
      { action: 'edit', class_name: 'bus', attrs: { parked: true } },
      annotator,
    );
    expect(relabel.body).toMatchObject({ state: 'submitted', class_id: classId.bus });
    // A reviewer's edit keeps the verdict.
    expect((await review(byReviewer!, { action: 'edit', bbox: [60, 60, 90, 90] })).body.state).toBe(
      'accepted',
    );
  });

  it('refuses an annotator every verdict (403) and writes nothing; bulk review stays reviewer-only', async () => {
    const [id] = await machineObjects(1, { state: 'accepted' });
    for (const action of ['confirm', 'accept', 'reject', 'relabel'])
      expect(
        (await review(id!, { action, class_name: action === 'relabel' ? 'bus' : null }, annotator)).status,
      ).toBe(403);
    expect((await review(id!, { action: 'edit', state: 'submitted' }, annotator)).status).toBe(403);
    expect(
      (await review(id!, { action: 'edit', state: 'accepted', bbox: [1, 1, 9, 9] }, annotator)).status,
    ).toBe(403);
    expect((await bulk({ object_ids: [id], action: 'edit' }, annotator)).status).toBe(403);
    expect((await bulk({ object_ids: [id], action: 'accept' }, annotator)).status).toBe(403);
    expect(await row(id!)).toMatchObject({ version: 1, state: 'accepted', source: 'fused' });
    expect(await api.deps.db.review.count({ where: { objectId: id! } })).toBe(0);
  });
});

describe('bulk review', () => {
  it('reviews a batch in one transaction with one batch stamp', async () => {
    const ids = await machineObjects(50);
    const res = await bulk({
      object_ids: ids,
      action: 'relabel',
      class_name: 'truck',
      reviewer: 'keyboard',
      time_spent_ms: 40,
    });
    expect(res.status).toBe(200);
    expect(res.body.count).toBe(50);
    const batch = await api.deps.db.reviewBatch.findUniqueOrThrow({ where: { id: res.body.batch_id } });
    expect(batch).toMatchObject({ objectCount: 50, action: 'relabel', reviewer: 'keyboard' });
    expect(await api.deps.db.review.count({ where: { batchId: batch.id } })).toBe(50);
    const objs = await api.deps.db.annoObject.findMany({ where: { id: { in: ids } } });
    expect(
      objs.every(
        (o) =>
          o.classId === classId.truck && o.source === 'human' && o.version === 2 && o.state === 'accepted',
      ),
    ).toBe(true);
    const audit = await api.deps.db.auditLog.findFirstOrThrow({
      where: { subjectType: 'review_batch', subjectId: batch.id },
    });
    expect((audit.detail as { object_ids: string[] }).object_ids).toHaveLength(50);
  });

  it('applies nothing when one expected version is stale (409) or one object is missing (404)', async () => {
    const ids = await machineObjects(20);
    const expected = Object.fromEntries(ids.map((id) => [id, 1]));
    expected[ids[7]!] = 3;
    const res = await bulk({ object_ids: ids, action: 'reject', expected_versions: expected });
    expect(res.status).toBe(409);
    expect(res.body.conflicts).toEqual([{ object_id: ids[7], expected: 3, actual: 1 }]);
    const missing = await bulk({ object_ids: [...ids, randomUUID()], action: 'reject' });
    expect(missing.status).toBe(404);
    const objs = await api.deps.db.annoObject.findMany({ where: { id: { in: ids } } });
    expect(objs.every((o) => o.version === 1 && o.state === 'review' && o.source === 'fused')).toBe(true);
    expect(await api.deps.db.review.count({ where: { objectId: { in: ids } } })).toBe(0);
  });

  it('enforces the limits and the shape of expected_versions', async () => {
    expect((await bulk({ object_ids: Array.from({ length: 1001 }, () => randomUUID()) })).status).toBe(422);
    expect((await bulk({ object_ids: [] })).status).toBe(422);
    expect((await bulk({ object_ids: ['not-a-uuid'] })).status).toBe(422);
    const [id] = await machineObjects(1);
    const partial = await bulk({ object_ids: [id, randomUUID()], expected_versions: { [id!]: 1 } });
    expect(partial.status).toBe(422);
    expect((await bulk({ object_ids: [id], state: 'done' })).status).toBe(400);
  });

  it('takes 1000 objects in one request', async () => {
    const ids = await machineObjects(1000, { frame: (await createFrame(api.deps, { sessionId })).frame.id });
    const res = await bulk({
      object_ids: ids,
      action: 'accept',
      expected_versions: Object.fromEntries(ids.map((id) => [id, 1])),
    });
    expect(res.status).toBe(200);
    expect(res.body.count).toBe(1000);
    expect(
      await api.deps.db.annoObject.count({ where: { id: { in: ids }, version: 2, state: 'accepted' } }),
    ).toBe(1000);
  });

  it('two reviewers racing on the same objects: exactly one wins each object, none is lost', async () => {
    // Overlapping batches with expected versions: every object ends reviewed once, by one of them,
    // and a losing batch applies nothing at all (not even its objects the winner did not touch).
    const ids = await machineObjects(300);
    const a = ids.slice(0, 200);
    const b = ids.slice(100);
    const v1 = (set: string[]) => Object.fromEntries(set.map((id) => [id, 1]));
    const [ra, rb] = await Promise.all([
      bulk({ object_ids: a, action: 'confirm', expected_versions: v1(a) }, reviewerA),
      bulk({ object_ids: b, action: 'reject', expected_versions: v1(b) }, reviewerB),
    ]);
    expect([ra.status, rb.status].sort()).toEqual([200, 409]);
    const winner = ra.status === 200 ? a : b;
    const objs = await api.deps.db.annoObject.findMany({ where: { id: { in: ids } } });
    for (const o of objs) expect(o.version).toBe(winner.includes(o.id) ? 2 : 1);
    expect(await api.deps.db.review.count({ where: { objectId: { in: ids } } })).toBe(winner.length);

    // Without expected versions both batches apply, one after the other: each object carries both
    // reviews, the second one's `before` being the first one's result.
    const same = await machineObjects(200);
    const [sa, sb] = await Promise.all([
      bulk({ object_ids: same, action: 'confirm' }, reviewerA),
      bulk({ object_ids: same, action: 'reject' }, reviewerB),
    ]);
    expect([sa.status, sb.status]).toEqual([200, 200]);
    const after = await api.deps.db.annoObject.findMany({ where: { id: { in: same } } });
    expect(after.every((o) => o.version === 3)).toBe(true);
    const reviews = await api.deps.db.review.findMany({ where: { objectId: { in: same } } });
    expect(reviews).toHaveLength(400);
    // created_at is each transaction's start: the batch that waited on the other's row locks may
    // have started first, so the chain of versions, not the clock, says which review came first.
    const beforeVersion = (r: (typeof reviews)[number]) => (r.before as { version: number }).version;
    for (const id of same) {
      const [first, second] = reviews
        .filter((r) => r.objectId === id)
        .sort((x, y) => beforeVersion(x) - beforeVersion(y));
      expect((first!.before as { version: number }).version).toBe(1);
      expect(second!.before as { version: number; state: string; source: string }).toMatchObject({
        version: 2,
        source: 'human',
        state: (first!.after as { state: string }).state,
      });
      expect(after.find((o) => o.id === id)!.state).toBe((second!.after as { state: string }).state);
    }
  });
});

describe('review queue (GET /api/triage)', () => {
  let qSession: string;
  beforeAll(async () => {
    const { frame, sessionId: s } = await createFrame(api.deps);
    qSession = s;
    // 30 common cars of mixed confidence, 3 rare camels, a few accepted objects outside the queue.
    await machineObjects(30, { frame: frame.id, cls: 'car', conf: (i) => 0.3 + (i % 7) / 10 });
    await machineObjects(3, { frame: frame.id, cls: 'camel', conf: (i) => [0.9, 0.5, null][i] ?? null });
    await machineObjects(4, { frame: frame.id, cls: 'camel', state: 'accepted' });
  });

  it('ranks by uncertainty × rarity from the live class distribution, as core/review computes it', async () => {
    const res = await api.call('GET', `/api/triage?session_id=${qSession}&limit=500`, { token: annotator });
    expect(res.status).toBe(200);
    const items = res.body.items as Array<{
      object_id: string;
      class_name: string;
      conf: number | null;
      score: number;
      state: string;
    }>;
    expect(items).toHaveLength(33);
    expect(items.every((i) => i.state === 'review')).toBe(true);
    const counts = await api.deps.db.annoObject.groupBy({ by: ['classId'], _count: true });
    const total = counts.reduce((s, c) => s + c._count, 0);
    const countOf = (name: string) => counts.find((c) => c.classId === classId[name])!._count;
    for (const i of items) expect(i.score).toBeCloseTo(queueScore(i.conf, countOf(i.class_name), total), 12);
    for (let k = 1; k < items.length; k++)
      expect(items[k - 1]!.score).toBeGreaterThanOrEqual(items[k]!.score);
    // The uncertain rare camels lead.
    expect(items.slice(0, 2).map((i) => i.class_name)).toEqual(['camel', 'camel']);
  });

  it('pages with a cursor, each item exactly once', async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const res: {
        status: number;
        body: { items: Array<{ object_id: string }>; next_cursor: string | null };
      } = await api.call(
        'GET',
        `/api/triage?session_id=${qSession}&limit=7${cursor ? `&cursor=${cursor}` : ''}`,
        { token: annotator },
      );
      expect(res.status).toBe(200);
      seen.push(...res.body.items.map((i) => i.object_id));
      cursor = res.body.next_cursor;
    } while (cursor);
    expect(seen).toHaveLength(33);
    expect(new Set(seen).size).toBe(33);
  });

  it('filters by class and state, and refuses bad filters', async () => {
    const camels = await api.call(
      'GET',
      `/api/triage?session_id=${qSession}&class_name=camel&state=review,accepted`,
      { token: annotator },
    );
    expect(camels.body.items).toHaveLength(7);
    expect((await api.call('GET', '/api/triage?state=pending', { token: annotator })).status).toBe(400);
    expect((await api.call('GET', '/api/triage?cursor=abc', { token: annotator })).status).toBe(422);
    expect((await api.call('GET', '/api/triage?class_name=unicorn', { token: annotator })).status).toBe(422);
    expect((await api.call('GET', '/api/triage?limit=0', { token: annotator })).status).toBe(422);
  });
});
