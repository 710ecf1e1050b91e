import path from 'node:path';
import { ExportIn } from '../api/http/exports';
import { createSessionFixture } from '../testkit/session-fixtures';
import { startIngestStack, type IngestStack } from '../testkit/media/harness';
import { createVehicleSession, vehicleFrames, type VehicleFrame } from '../testkit/media/vehicles';
import { recordHistoryIfAsked, replayRecordedHistory } from '../testkit/temporal';
import type { Box } from '../core/geometry';

/**
 * The explore group on the real stack (docs/quality-explore.md): an evaluation of an imported run
 * with known hits, class confusions, misses and false detections against a sealed gold set and
 * against the live human labels, its cells and patches (with their crops); facets of constructed
 * objects; UMAP and PCA projections of stored embeddings (two clusters), seeded, replayed, selected
 * by rectangle and polygon; tags; and a saved view whose export spec POST /api/export accepts.
 */
const HISTORY = path.join(__dirname, 'histories/explore-projection.json');
const NOWHERE = '00000000-0000-4000-8000-000000000000';

let stack: IngestStack;
let frames: VehicleFrame[];
let frameIds: string[];
let sessionId: string;
const classId: Record<string, number> = {};
/** The human objects of frames 0–2, by frame then class. */
const human: Array<{ bus: string; motorcycle: string }> = [];

const api = (method: string, p: string, token: string, body?: unknown) =>
  stack.api.call(method, p, { token, ...(body === undefined ? {} : { body }) });

/** Bytes of a GET (a crop), with its content type. */
async function bytesOf(p: string, token: string) {
  const res = await fetch(`${stack.api.url}${p}`, { headers: { authorization: `Bearer ${token}` } });
  return {
    status: res.status,
    type: res.headers.get('content-type'),
    bytes: Buffer.from(await res.arrayBuffer()),
  };
}
const isJpeg = (b: Buffer) => b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff;

beforeAll(async () => {
  stack = await startIngestStack();
  for (const c of await stack.api.deps.db.ontologyClass.findMany()) classId[c.name] = c.id;
  frames = await vehicleFrames(4, { width: 640 });
  const made = await createVehicleSession(stack.api.deps, frames);
  sessionId = made.session.id;
  frameIds = made.frames.map((f) => f.id);
  // Frames 0–2: the bus and the motorcycle drawn by a person (accepted, source human).
  for (const [i, f] of frames.slice(0, 3).entries()) {
    const ids = { bus: '', motorcycle: '' };
    for (const cls of ['bus', 'motorcycle'] as const) {
      const res = await api('POST', `/api/frames/${frameIds[i]}/objects`, stack.reviewer, {
        class_name: cls,
        bbox: f.truth[cls],
      });
      expect(res.status).toBe(201);
      ids[cls] = (res.body as { id: string }).id;
    }
    human.push(ids);
  }
  // Frame 3 holds an unreviewed machine proposal: not human-verified.
  await stack.api.deps.db.annoObject.create({
    data: {
      frameId: frameIds[3]!,
      bbox: frames[3]!.truth.bus,
      classId: classId.bus!,
      conf: 0.9,
      source: 'fused',
      state: 'review',
    },
  });
  // Frame 1 is dark by its recorded exposure (a lighting facet).
  await stack.api.deps.db.frame.update({
    where: { id: frameIds[1]! },
    data: { context: { exposure: { mean_luma: 30 } } },
  });
}, 120_000);

afterAll(async () => {
  await stack?.close();
});

describe('explore evaluations', () => {
  let goldId: string;
  let runId: string;
  let evalId: string;
  const FALSE_BOX: Box = [400, 10, 460, 60];

  beforeAll(async () => {
    const sealed = await api('POST', '/api/quality/gold/seal', stack.reviewer, {
      name: 'vehicles',
      frame_ids: frameIds.slice(0, 3),
    });
    expect(sealed.status).toBe(201);
    goldId = (sealed.body as { id: string }).id;
    const model = await api('POST', '/api/models/external', stack.reviewer, {
      model_version: 'vendor-det@3',
      name: 'vendor detector',
      class_names: ['bus', 'motorcycle', 'truck', 'bicycle', 'car'],
    });
    expect(model.status).toBe(201);
    const p = (i: number, cls: string, bbox: readonly number[], conf = 0.9) => ({
      frame_id: frameIds[i],
      class_name: cls,
      conf,
      bbox,
    });
    const t = (i: number) => frames[i]!.truth;
    const run = await api('POST', '/api/inference-runs', stack.reviewer, {
      mode: 'import',
      model_version: 'vendor-det@3',
      predictions: [
        p(0, 'bus', t(0).bus), // hit
        p(0, 'motorcycle', t(0).motorcycle), // hit
        p(0, 'car', [500, 20, 560, 80], 0.1), // under min_conf: out of the matrix, in AP
        p(1, 'truck', t(1).bus, 0.8), // the bus seen as a truck; frame 1's motorcycle missed
        p(2, 'bus', t(2).bus), // hit
        p(2, 'bicycle', t(2).motorcycle, 0.7), // the motorcycle seen as a bicycle
        p(2, 'car', FALSE_BOX, 0.6), // a false detection
        p(3, 'bus', t(3).bus), // frame 3 is not a reference frame
      ],
    });
    expect(run.status).toBe(201);
    runId = (run.body as { id: string }).id;
  });

  const expectedCells = () =>
    [
      [classId.bus, classId.bus, 2],
      [classId.bus, classId.truck, 1],
      [classId.motorcycle, classId.motorcycle, 1],
      [classId.motorcycle, classId.bicycle, 1],
      [classId.motorcycle, -1, 1],
      [-1, classId.car, 1],
    ]
      .map(([t, p, count]) => ({ true_class_id: t, pred_class_id: p, count }))
      .sort((a, b) => a.true_class_id! - b.true_class_id! || a.pred_class_id! - b.pred_class_id!);
  const cellsOf = (body: any) =>
    (body.cells as Array<{ true_class_id: number; pred_class_id: number; count: number }>).map(
      ({ true_class_id, pred_class_id, count }) => ({ true_class_id, pred_class_id, count }),
    );

  it('builds the confusion matrix against a gold set, with AP from the gold measure, in one recorded operation', async () => {
    const res = await api('POST', '/api/explore/eval', stack.annotator, {
      run_id: runId,
      gold_id: goldId,
      n_boot: 200,
    });
    expect(res.status).toBe(201);
    const body = res.body as any;
    evalId = body.eval_id;
    expect(cellsOf(body)).toEqual(expectedCells());
    expect(body).toMatchObject({
      reference: 'gold',
      gold_id: goldId,
      iou_thr: 0.5,
      min_conf: 0.25,
      frames: 3,
      predictions_below_min_conf: 1,
      totals: {
        references: 6,
        predictions: 6,
        matched: 5,
        true_positives: 3,
        class_confusions: 2,
        missed: 1,
        false_detections: 1,
      },
    });
    const fig = (name: string) => body.per_class.find((c: any) => c.class_name === name);
    expect(fig('bus')).toMatchObject({ references: 3, predictions: 2, true_positives: 2, precision: 1 });
    expect(fig('bus').recall).toBeCloseTo(2 / 3, 12);
    expect(fig('motorcycle')).toMatchObject({
      references: 3,
      true_positives: 1,
      missed: 1,
      confused_as_other: 1,
    });
    expect(fig('truck')).toMatchObject({ predictions: 1, precision: 0, recall: null });
    expect(fig('car')).toMatchObject({ predictions: 1, false_detections: 1, precision: 0 });
    // AP is the gold measure's, on every prediction (the 0.1 car too): the same numbers as its own route.
    const measured = await api('POST', `/api/quality/gold/${goldId}/measure`, stack.annotator, {
      run_id: runId,
      n_boot: 200,
    });
    expect(measured.status).toBe(200);
    expect(body.ap.map).toBe((measured.body as any).map);
    expect(body.ap.map_ci).toEqual((measured.body as any).map_ci);
    expect(body.ap.classes.map((c: any) => [c.class_id, c.ap])).toEqual(
      (measured.body as any).classes.map((c: any) => [c.class_id, c.ap]),
    );
    const db = stack.api.deps.db;
    expect(await db.exploreEvalMember.count({ where: { evalId } })).toBe(7);
    const op = await db.evalOperation.findUniqueOrThrow({ where: { id: evalId } });
    expect(op.opType).toBe('explore_eval');
    expect(op.subjectIds).toEqual(expect.arrayContaining([runId, goldId, 'vendor-det@3']));
  });

  it('answers the cells from the stored members, and lists evaluations newest first', async () => {
    const cells = await api('GET', `/api/explore/eval/${evalId}/cells`, stack.annotator);
    expect(cells.status).toBe(200);
    expect(cellsOf(cells.body)).toEqual(expectedCells());
    const named = (cells.body as any).cells.find(
      (c: any) => c.true_class_id === classId.bus && c.pred_class_id === classId.truck,
    );
    expect(named).toMatchObject({ true_class: 'bus', pred_class: 'truck' });
    expect((cells.body as any).cells.find((c: any) => c.true_class_id === -1).true_class).toBe('background');
    const list = await api('GET', '/api/explore/evals?limit=1', stack.annotator);
    expect(list.status).toBe(200);
    expect((list.body as any).items[0]).toMatchObject({ eval_id: evalId, run_id: runId, reference: 'gold' });
  });

  it('lists the members of a cell with crops that are JPEGs', async () => {
    const truck = await api(
      'GET',
      `/api/explore/eval/${evalId}/patches?true_class=bus&pred_class=truck`,
      stack.annotator,
    );
    expect(truck.status).toBe(200);
    const [confusion, ...rest] = (truck.body as any).items;
    expect(rest).toEqual([]);
    const truckPrediction = await stack.api.deps.db.prediction.findFirstOrThrow({
      where: { runId, classId: classId.truck },
    });
    expect(confusion).toMatchObject({
      kind: 'confusion',
      frame_id: frameIds[1],
      object_id: human[1]!.bus,
      prediction_id: truckPrediction.id,
      crop_url: `/api/predictions/${truckPrediction.id}/crop`,
      object_crop_url: `/api/objects/${human[1]!.bus}/crop`,
    });
    expect(confusion.iou).toBeCloseTo(1, 6);
    // The miss, by class id and `-1`; its crop is the missed object's.
    const missed = await api(
      'GET',
      `/api/explore/eval/${evalId}/patches?true_class=${classId.motorcycle}&pred_class=-1`,
      stack.annotator,
    );
    expect((missed.body as any).items).toEqual([
      expect.objectContaining({
        kind: 'missed',
        object_id: human[1]!.motorcycle,
        prediction_id: null,
        crop_url: `/api/objects/${human[1]!.motorcycle}/crop`,
      }),
    ]);
    const falseDetection = await api(
      'GET',
      `/api/explore/eval/${evalId}/patches?true_class=background`,
      stack.annotator,
    );
    expect((falseDetection.body as any).items).toEqual([
      expect.objectContaining({
        kind: 'false_detection',
        pred_class: 'car',
        bbox: FALSE_BOX,
        object_id: null,
      }),
    ]);
    for (const url of [
      confusion.crop_url,
      confusion.object_crop_url,
      (missed.body as any).items[0].crop_url,
    ]) {
      const crop = await bytesOf(`${url}?size=64`, stack.annotator);
      expect(crop.status).toBe(200);
      expect(crop.type).toBe('image/jpeg');
      expect(isJpeg(crop.bytes)).toBe(true);
    }
    // A whole row, paged: the motorcycle's three members, one at a time.
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: any = await api(
        'GET',
        `/api/explore/eval/${evalId}/patches?true_class=motorcycle&limit=1${cursor ? `&cursor=${cursor}` : ''}`,
        stack.annotator,
      );
      expect(page.status).toBe(200);
      seen.push(...page.body.items.map((m: any) => m.id));
      cursor = page.body.next_cursor;
    } while (cursor);
    expect(seen).toHaveLength(3);
    expect(new Set(seen).size).toBe(3);
  });

  it('evaluates against the live human labels of the verified frames, leaving the unverified frame out', async () => {
    const res = await api('POST', '/api/explore/eval', stack.annotator, { run_id: runId });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      reference: 'human',
      gold_id: null,
      frames: 3,
      frames_not_verified: 1,
      ap: null,
    });
    expect(cellsOf(res.body)).toEqual(expectedCells());
  });

  it('refuses AP for a reconstructed run by name, and gives its matrix alone when asked', async () => {
    const rebuilt = await api('POST', '/api/inference-runs', stack.reviewer, {
      mode: 'reconstruct',
      session_id: sessionId,
    });
    expect(rebuilt.status).toBe(201);
    const reconstructed = (rebuilt.body as { id: string }).id;
    const before = await stack.api.deps.db.evalOperation.count({ where: { opType: 'explore_eval' } });
    const refused = await api('POST', '/api/explore/eval', stack.annotator, {
      run_id: reconstructed,
      gold_id: goldId,
    });
    expect(refused.status).toBe(422);
    expect(refused.body).toMatchObject({ reason: 'reconstructed' });
    expect((refused.body as any).detail).toMatch(/reconstructed/);
    expect(await stack.api.deps.db.evalOperation.count({ where: { opType: 'explore_eval' } })).toBe(before);
    const matrix = await api('POST', '/api/explore/eval', stack.annotator, {
      run_id: reconstructed,
      gold_id: goldId,
      ap: false,
    });
    expect(matrix.status).toBe(201);
    // Its one proposal is on frame 3, outside the gold frames: every gold object is missed.
    expect(matrix.body).toMatchObject({ ap: null, totals: { references: 6, missed: 6, predictions: 0 } });
  });

  it('refuses bad input without writing anything', async () => {
    const db = stack.api.deps.db;
    const before = await db.evalOperation.count();
    const cases: Array<[unknown, number]> = [
      [{ run_id: NOWHERE }, 404],
      [{ run_id: runId, gold_id: NOWHERE }, 404],
      [{ run_id: 'not-a-uuid' }, 422],
      [{ run_id: runId, iou_thr: 2 }, 422],
      [{ run_id: runId, extra: 1 }, 422],
    ];
    for (const [body, status] of cases)
      expect((await api('POST', '/api/explore/eval', stack.annotator, body)).status).toBe(status);
    expect(await db.evalOperation.count()).toBe(before);
    expect((await api('GET', `/api/explore/eval/${NOWHERE}/cells`, stack.annotator)).status).toBe(404);
    expect((await api('GET', `/api/explore/eval/${NOWHERE}/patches`, stack.annotator)).status).toBe(404);
    const badClass = await api(
      'GET',
      `/api/explore/eval/${evalId}/patches?true_class=unicorn`,
      stack.annotator,
    );
    expect(badClass.status).toBe(422);
    expect((badClass.body as any).errors[0].field).toBe('query.true_class');
    expect((await api('GET', `/api/explore/eval/${evalId}/patches?limit=0`, stack.annotator)).status).toBe(
      422,
    );
    // Cursors this API did not issue, the well-formed one naming no instant included.
    const month13 = Buffer.from(JSON.stringify({ t: '2024-13-01T00:00:00Z', i: NOWHERE })).toString(
      'base64url',
    );
    for (const cursor of ['garbage', month13])
      for (const list of ['evals', 'projections', 'views']) {
        const res = await api('GET', `/api/explore/${list}?cursor=${cursor}`, stack.annotator);
        expect(res.status).toBe(422);
        expect((res.body as any).errors[0].field).toBe('query.cursor');
      }
    // A gold measure's operation is not an explore evaluation.
    const measure = await db.evalOperation.findFirstOrThrow({ where: { opType: 'gold_measure' } });
    expect((await api('GET', `/api/explore/eval/${measure.id}/cells`, stack.annotator)).status).toBe(404);
  });

  it('deletes an evaluation with its members (reviewer)', async () => {
    expect((await api('DELETE', `/api/explore/eval/${evalId}`, stack.annotator)).status).toBe(403);
    const res = await api('DELETE', `/api/explore/eval/${evalId}`, stack.reviewer);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ eval_id: evalId, deleted: true, members: 7 });
    const db = stack.api.deps.db;
    expect(await db.exploreEvalMember.count({ where: { evalId } })).toBe(0);
    expect(await db.evalOperation.findUnique({ where: { id: evalId } })).toBeNull();
    expect((await api('DELETE', `/api/explore/eval/${evalId}`, stack.reviewer)).status).toBe(404);
  });
});

describe('facets and tags', () => {
  it('tags frames and objects idempotently, every target checked', async () => {
    const first = await api('POST', '/api/explore/tag', stack.annotator, {
      tag: 'night',
      target_kind: 'frame',
      target_ids: [frameIds[2], frameIds[2]],
    });
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ targets: 1, tagged: 1, already_tagged: 0 });
    const again = await api('POST', '/api/explore/tag', stack.annotator, {
      tag: 'night',
      target_kind: 'frame',
      target_ids: [frameIds[2]],
    });
    expect(again.body).toMatchObject({ targets: 1, tagged: 0, already_tagged: 1 });
    const obj = await api('POST', '/api/explore/tag', stack.annotator, {
      tag: 'hard',
      target_kind: 'object',
      target_ids: [human[0]!.bus],
    });
    expect(obj.body).toMatchObject({ tagged: 1 });
    const missing = await api('POST', '/api/explore/tag', stack.annotator, {
      tag: 'hard',
      target_kind: 'object',
      target_ids: [human[0]!.motorcycle, NOWHERE],
    });
    expect(missing.status).toBe(404);
    expect(missing.body).toMatchObject({ missing: [NOWHERE] });
    expect(
      (
        await api('POST', '/api/explore/tag', stack.annotator, {
          tag: 'x',
          target_kind: 'session',
          target_ids: [NOWHERE],
        })
      ).status,
    ).toBe(422);
    expect(
      (
        await api('POST', '/api/explore/tag', stack.annotator, {
          tag: '  ',
          target_kind: 'frame',
          target_ids: [frameIds[0]],
        })
      ).status,
    ).toBe(422);
    const bell = await api('POST', '/api/explore/tag', stack.annotator, {
      tag: 'ring\u0007',
      target_kind: 'frame',
      target_ids: [frameIds[0]],
    });
    expect(bell.status).toBe(422);
    expect((bell.body as any).errors[0].field).toBe('body.tag');
    expect(await stack.api.deps.db.exploreTag.count()).toBe(2);
    const tags = await api('GET', '/api/explore/tags', stack.annotator);
    expect(tags.status).toBe(200);
    expect((tags.body as any).items).toEqual([
      { tag: 'hard', frames: 0, objects: 1, total: 1 },
      { tag: 'night', frames: 1, objects: 0, total: 1 },
    ]);
    const ofFrame = await api(
      'GET',
      `/api/explore/tags?target_kind=frame&target_id=${frameIds[2]}`,
      stack.annotator,
    );
    expect((ofFrame.body as any).items.map((t: any) => t.tag)).toEqual(['night']);
    expect((await api('GET', '/api/explore/tags?target_kind=track', stack.annotator)).status).toBe(422);
  });

  it('counts what a predicate selects by class, state, source, l1, lighting, session and tag', async () => {
    const ontology = await stack.api.deps.db.ontologyClass.findMany({
      where: { name: { in: ['bus', 'motorcycle'] } },
    });
    const l1 = Object.fromEntries(ontology.map((c) => [c.name, c.l1]));
    const res = await api('POST', '/api/explore/facets', stack.annotator, {
      predicate: { session_ids: [sessionId] },
    });
    expect(res.status).toBe(200);
    const f = res.body as any;
    expect(f).toMatchObject({ objects: 7, frames: 4, sessions: 1 });
    expect(Object.fromEntries(f.by_class.map((c: any) => [c.class_name, c.count]))).toEqual({
      bus: 4,
      motorcycle: 3,
    });
    expect(f.by_state).toEqual({ accepted: 6, review: 1 });
    expect(f.by_source).toEqual({ human: 6, fused: 1 });
    const byL1: Record<string, number> = {};
    byL1[l1.bus!] = (byL1[l1.bus!] ?? 0) + 4;
    byL1[l1.motorcycle!] = (byL1[l1.motorcycle!] ?? 0) + 3;
    expect(f.by_l1).toEqual(byL1);
    expect(f.by_lighting).toEqual({ dark: 2, unknown: 5 });
    expect(f.by_session).toEqual([{ session_id: sessionId, name: expect.any(String), count: 7 }]);
    expect(f.by_tag).toEqual([
      { tag: 'night', objects: 0, frames: 1, objects_on_frames: 2 },
      { tag: 'hard', objects: 1, frames: 0, objects_on_frames: 0 },
    ]);
    const buses = await api('POST', '/api/explore/facets', stack.annotator, {
      predicate: { session_ids: [sessionId], classes: ['bus'], states: ['accepted'] },
    });
    expect(buses.body).toMatchObject({
      objects: 3,
      frames: 3,
      by_state: { accepted: 3 },
      by_lighting: { dark: 1, unknown: 2 },
    });
    expect((buses.body as any).by_tag).toEqual([
      { tag: 'hard', objects: 1, frames: 0, objects_on_frames: 0 },
      { tag: 'night', objects: 0, frames: 1, objects_on_frames: 1 },
    ]);
    const unknown = await api('POST', '/api/explore/facets', stack.annotator, {
      predicate: { classes: ['unicorn'] },
    });
    expect(unknown.status).toBe(422);
    expect((unknown.body as any).errors[0].field).toBe('body.predicate.classes.0');
    expect((await api('POST', '/api/explore/facets', stack.annotator, { slice_id: NOWHERE })).status).toBe(
      404,
    );
    expect(
      (await api('POST', '/api/explore/facets', stack.annotator, { slice_id: NOWHERE, predicate: {} }))
        .status,
    ).toBe(422);
  });
});

describe('projections', () => {
  let projSession: string;
  let projFrames: string[];
  const N = 12;
  let umapId: string;
  let pcaId: string;
  let clusterA: Set<string>;

  /** Two well-separated clusters: frames 0..N-1 lean on the first half of the dimensions, N..2N-1 on the second. */
  const vector = (i: number) =>
    Array.from(
      { length: 576 },
      (_, k) => (k < 288 === i < N ? 1 : 0) + (((i * 131 + k * 29) % 17) - 8) / 160,
    );

  const finish = async (body: any) => {
    await stack.env.client.workflow.getHandle(body.workflow_id).result();
    return body.id as string;
  };
  const pointsOf = async (id: string) => {
    const res = await api('GET', `/api/explore/projection/${id}/points?limit=5000`, stack.annotator);
    expect(res.status).toBe(200);
    return (res.body as any).items as Array<{ frame_id: string; x: number; y: number }>;
  };
  /** Every point of cluster A is nearer to each other than to any point of cluster B, and vice versa. */
  const separated = (points: Array<{ frame_id: string; x: number; y: number }>) => {
    let within = 0;
    let between = Infinity;
    for (const p of points)
      for (const q of points) {
        if (p === q) continue;
        const d = Math.hypot(p.x - q.x, p.y - q.y);
        if (clusterA.has(p.frame_id) === clusterA.has(q.frame_id)) within = Math.max(within, d);
        else between = Math.min(between, d);
      }
    return between > within;
  };

  beforeAll(async () => {
    const made = await createSessionFixture(stack.api.deps, { frames: 2 * N, storeImages: false });
    projSession = made.session.id;
    projFrames = made.frames.map((f) => f.id);
    clusterA = new Set(projFrames.slice(0, N));
  });

  it('refuses while the frames have no embeddings, naming why', async () => {
    const res = await api('POST', '/api/explore/projection', stack.reviewer, { session_ids: [projSession] });
    expect(res.status).toBe(422);
    expect(res.body).toMatchObject({ reason: 'no_embeddings' });
    expect((res.body as any).detail).toMatch(/embed/);
    expect(await stack.api.deps.db.exploreProjection.count()).toBe(0);
    await stack.api.deps.db.frameEmbedding.createMany({
      data: projFrames.map((frameId, i) => ({ frameId, model: 'tiny-image-v1', vector: vector(i) })),
    });
  });

  it('lays out the embeddings by UMAP as a workflow; one seed gives one layout', async () => {
    const res = await api('POST', '/api/explore/projection', stack.reviewer, {
      method: 'umap',
      session_ids: [projSession],
      seed: 7,
      n_neighbors: 5,
    });
    expect(res.status).toBe(202);
    const body = res.body as any;
    expect(body.workflow_id).toBe(`explore-projection-${body.id}`);
    expect(res.headers.get('location')).toBe(`/api/explore/projection/${body.id}/points`);
    expect(body).toMatchObject({ frames_in_scope: 2 * N, frames_embedded: 2 * N, status: 'running' });
    umapId = await finish(body);
    await recordHistoryIfAsked(HISTORY, () =>
      stack.env.client.workflow.getHandle(body.workflow_id).fetchHistory(),
    );
    await expect(
      replayRecordedHistory(HISTORY, require.resolve('../workflows'), 'recorded'),
    ).resolves.toBeUndefined();
    const points = await pointsOf(umapId);
    expect(points.map((p) => p.frame_id).sort()).toEqual([...projFrames].sort());
    expect(separated(points)).toBe(true);
    const again = await api('POST', '/api/explore/projection', stack.reviewer, {
      method: 'umap',
      session_ids: [projSession],
      seed: 7,
      n_neighbors: 5,
    });
    expect(again.status).toBe(202);
    const second = await pointsOf(await finish(again.body));
    expect(second).toEqual(points);
  }, 120_000);

  it('lays out the embeddings by PCA, separating the clusters on the first axis', async () => {
    const res = await api('POST', '/api/explore/projection', stack.reviewer, {
      method: 'pca',
      session_ids: [projSession],
    });
    expect(res.status).toBe(202);
    pcaId = await finish(res.body);
    const points = await pointsOf(pcaId);
    expect(points).toHaveLength(2 * N);
    expect(separated(points)).toBe(true);
    const listed = await api('GET', '/api/explore/projections', stack.annotator);
    expect(listed.status).toBe(200);
    const items = (listed.body as any).items;
    expect(items[0]).toMatchObject({ id: pcaId, method: 'pca', status: 'completed', n_points: 2 * N });
    expect(items[0].outcome.explained_variance[0]).toBeGreaterThan(0.5);
    expect(items.map((p: any) => p.id)).toContain(umapId);
  }, 60_000);

  it('pages the points', async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const res: any = await api(
        'GET',
        `/api/explore/projection/${pcaId}/points?limit=10${cursor ? `&cursor=${cursor}` : ''}`,
        stack.annotator,
      );
      seen.push(...res.body.items.map((p: any) => p.frame_id));
      cursor = res.body.next_cursor;
      pages++;
    } while (cursor);
    expect(pages).toBe(3);
    expect(seen).toEqual([...projFrames].sort());
  });

  it('selects exactly the points inside a rectangle or polygon', async () => {
    const points = await pointsOf(pcaId);
    const a = points.filter((p) => clusterA.has(p.frame_id));
    const rect = {
      x_min: Math.min(...a.map((p) => p.x)),
      y_min: Math.min(...a.map((p) => p.y)),
      x_max: Math.max(...a.map((p) => p.x)),
      y_max: Math.max(...a.map((p) => p.y)),
    };
    const inside = points
      .filter((p) => p.x >= rect.x_min && p.x <= rect.x_max && p.y >= rect.y_min && p.y <= rect.y_max)
      .map((p) => p.frame_id)
      .sort();
    expect(inside).toEqual(expect.arrayContaining([...clusterA]));
    const res = await api('POST', '/api/explore/select', stack.annotator, { projection_id: pcaId, rect });
    expect(res.status).toBe(200);
    expect((res.body as any).total).toBe(inside.length);
    expect((res.body as any).items.map((p: any) => p.frame_id)).toEqual(inside);
    const { x_min, y_min, x_max, y_max } = rect;
    const polygon = await api('POST', '/api/explore/select', stack.annotator, {
      projection_id: pcaId,
      polygon: [
        [x_min, y_min],
        [x_max, y_min],
        [x_max, y_max],
        [x_min, y_max],
      ],
      include_objects: true,
      limit: 5,
    });
    expect(polygon.status).toBe(200);
    expect((polygon.body as any).items.map((p: any) => p.frame_id)).toEqual(inside.slice(0, 5));
    expect((polygon.body as any).items[0]).toMatchObject({ session_id: projSession, objects: [] });
    expect((polygon.body as any).next_cursor).toBe(inside[4]);
    const rest = await api('POST', '/api/explore/select', stack.annotator, {
      projection_id: pcaId,
      rect,
      cursor: inside[4],
      limit: 1000,
    });
    expect((rest.body as any).items.map((p: any) => p.frame_id)).toEqual(inside.slice(5));
    const empty = await api('POST', '/api/explore/select', stack.annotator, {
      projection_id: pcaId,
      rect: { x_min: 1e9, y_min: 1e9, x_max: 2e9, y_max: 2e9 },
    });
    expect(empty.body).toMatchObject({ total: 0, items: [], next_cursor: null });
    expect(
      (
        await api('POST', '/api/explore/select', stack.annotator, {
          projection_id: pcaId,
          rect,
          polygon: [
            [0, 0],
            [1, 0],
            [0, 1],
          ],
        })
      ).status,
    ).toBe(422);
    expect(
      (await api('POST', '/api/explore/select', stack.annotator, { projection_id: NOWHERE, rect })).status,
    ).toBe(404);
  });

  it('refuses unknown scopes, running projections and callers below reviewer', async () => {
    expect(
      (await api('POST', '/api/explore/projection', stack.annotator, { session_ids: [projSession] })).status,
    ).toBe(403);
    expect(
      (await api('POST', '/api/explore/projection', stack.reviewer, { session_ids: [NOWHERE] })).status,
    ).toBe(404);
    expect((await api('POST', '/api/explore/projection', stack.reviewer, { slice_id: NOWHERE })).status).toBe(
      404,
    );
    expect((await api('POST', '/api/explore/projection', stack.reviewer, { method: 'tsne' })).status).toBe(
      422,
    );
    expect((await api('POST', '/api/explore/projection', stack.reviewer, { max_frames: 1 })).status).toBe(
      422,
    );
    const running = await stack.api.deps.db.exploreProjection.create({
      data: { method: 'umap', params: {}, status: 'running' },
    });
    const select = await api('POST', '/api/explore/select', stack.annotator, {
      projection_id: running.id,
      rect: { x_min: 0, y_min: 0, x_max: 1, y_max: 1 },
    });
    expect(select.status).toBe(409);
    expect((await api('DELETE', `/api/explore/projection/${running.id}`, stack.reviewer)).status).toBe(409);
    await stack.api.deps.db.exploreProjection.delete({ where: { id: running.id } });
  });

  it('deletes a projection with its points (reviewer)', async () => {
    expect((await api('DELETE', `/api/explore/projection/${umapId}`, stack.annotator)).status).toBe(403);
    const res = await api('DELETE', `/api/explore/projection/${umapId}`, stack.reviewer);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ deleted: true, points: 2 * N });
    expect(await stack.api.deps.db.exploreProjectionPoint.count({ where: { projectionId: umapId } })).toBe(0);
    expect((await api('GET', `/api/explore/projection/${umapId}/points`, stack.annotator)).status).toBe(404);
    expect((await api('DELETE', `/api/explore/projection/${umapId}`, stack.reviewer)).status).toBe(404);
  });
});

describe('saved views', () => {
  it('saves a view as a slice plus its state, and exports exactly its slice', async () => {
    const body = {
      name: 'Accepted Buses!',
      predicate: { session_ids: [sessionId], classes: ['bus'], states: ['accepted'] },
      state: {
        projection: 'umap',
        colour_by: 'class',
        selection: [
          [0, 0],
          [1, 1],
        ],
      },
    };
    expect((await api('POST', '/api/explore/views', stack.annotator, body)).status).toBe(403);
    const res = await api('POST', '/api/explore/views', stack.reviewer, body);
    expect(res.status).toBe(201);
    const view = res.body as any;
    expect(view).toMatchObject({ name: 'Accepted Buses!', predicate: body.predicate, state: body.state });
    const listed = await api('GET', '/api/explore/views', stack.annotator);
    expect((listed.body as any).items[0]).toMatchObject({ slice_id: view.slice_id, state: body.state });
    // The view is a curation slice: it selects the three accepted buses.
    const materialized = await api(
      'GET',
      `/api/curation/slices/${view.slice_id}/materialize`,
      stack.annotator,
    );
    expect(materialized.status).toBe(200);
    expect((materialized.body as any).counts.objects).toBe(3);
    const spec = await api('GET', `/api/explore/views/${view.slice_id}/export-spec`, stack.annotator);
    expect(spec.status).toBe(200);
    expect(spec.body).toMatchObject({ name: 'accepted-buses', slice_id: view.slice_id, predicate: null });
    // What POST /api/export accepts, as it is and unchanged by its defaults.
    const parsed = ExportIn.safeParse(spec.body);
    expect(parsed.success).toBe(true);
    expect(parsed.data).toEqual(spec.body);
    expect((await api('GET', `/api/explore/views/${NOWHERE}/export-spec`, stack.annotator)).status).toBe(404);
  });

  it('refuses a view whose predicate names what does not exist, saving nothing', async () => {
    const before = await stack.api.deps.db.slice.count();
    const res = await api('POST', '/api/explore/views', stack.reviewer, {
      name: 'x',
      predicate: { classes: ['unicorn'] },
      state: {},
    });
    expect(res.status).toBe(422);
    expect(
      (await api('POST', '/api/explore/views', stack.reviewer, { name: 'x', predicate: {}, state: 'big' }))
        .status,
    ).toBe(422);
    expect(
      (
        await api('POST', '/api/explore/views', stack.reviewer, {
          name: 'x',
          predicate: {},
          state: { blob: 'x'.repeat(70_000) },
        })
      ).status,
    ).toBe(422);
    expect(await stack.api.deps.db.slice.count()).toBe(before);
    expect(await stack.api.deps.db.exploreView.count()).toBe(1);
  });
});
