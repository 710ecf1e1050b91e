import { randomUUID } from 'node:crypto';
import { listKeys, removeKeys } from '../activities/ingest/storage';
import {
  FRAME_COLUMNS,
  OBJECT_COLUMNS,
  parquetPart,
  partName,
  type FrameRow,
  type ObjectRow,
} from '../core/export/parquet-tables';
import type { DatasetCommit } from '../generated/prisma/client';
import { useApiForFile } from '../testkit/api';
import { createCommitFixture, objectRow } from '../testkit/commits';

/**
 * The dataset commit reads (docs/datasets-read.md) against the real PostgreSQL and MinIO: list,
 * versions, one commit, manifest, preview, vocabulary, diff, lineage and the lake, over commits
 * made by testkit/commits.ts with real Parquet parts.
 */

const ctx = useApiForFile();
const call = (method: string, path: string, token = ctx.token.annotator, body?: unknown) =>
  ctx.api.call(method, path, { token, body });

const run = randomUUID().slice(0, 8);
const NAME = `roads ${run}`;
const CLOSED_SET = `yolox_nano.onnx@${run}`;

type Cls = { class_id: number; class_name: string; l0: string; l1: string };
let cls: Record<'car' | 'person' | 'truck' | 'bus', Cls>;
let s1: string;
let s2: string;
let reviewerId: string;
let a: DatasetCommit;
let b: DatasetCommit;
/** Frame and object ids of commit a, by page. */
const frames: FrameRow[][] = [[], []];
const objects: ObjectRow[][] = [[], []];

function frame(sessionId: string, index: number, split: string, withImage: boolean): FrameRow {
  const frameId = randomUUID();
  return {
    frame_id: frameId,
    session_id: sessionId,
    frame_index: index,
    timestamp_ms: index * 333,
    split,
    width: 640,
    height: 360,
    image: withImage ? `images/${split}/${frameId}.jpg` : null,
    lighting: 'day',
    context: '{}',
    pii_audited: true,
    pii_faces: 0,
    pii_plates: 0,
    objects: 0,
  };
}

function object(f: FrameRow, c: Cls, box: [number, number, number, number], over: Partial<ObjectRow> = {}) {
  f.objects++;
  const [x1, y1, x2, y2] = box;
  return objectRow({
    object_id: randomUUID(),
    frame_id: f.frame_id,
    session_id: f.session_id,
    frame_index: f.frame_index,
    timestamp_ms: f.timestamp_ms,
    split: f.split,
    ...c,
    x1,
    y1,
    x2,
    y2,
    conf: 0.9,
    source: 'auto_accept',
    ...over,
  });
}

/** A commit of two export pages: page 0 from the fixture's own tables, page 1 as extra files. */
function commit(
  name: string,
  pages: { frames: FrameRow[][]; objects: ObjectRow[][] },
  modelVersions: string[],
) {
  return createCommitFixture(ctx.api.deps, {
    name,
    frames: pages.frames[0],
    objects: pages.objects[0]!,
    files: {
      [partName('frames', 1)]: parquetPart(FRAME_COLUMNS, pages.frames[1]!),
      [partName('objects', 1)]: parquetPart(OBJECT_COLUMNS, pages.objects[1]!),
      'data.yaml': 'names: []\n',
    },
    sessionIds: [s1, s2],
    modelVersions,
    createdBy: reviewerId,
  });
}

beforeAll(async () => {
  const { db } = ctx.api.deps;
  const rows = await db.ontologyClass.findMany({
    where: { name: { in: ['car', 'person', 'truck', 'bus'] } },
  });
  cls = Object.fromEntries(
    rows.map((r) => [r.name, { class_id: r.id, class_name: r.name, l0: r.l0, l1: r.l1 }]),
  ) as typeof cls;
  s1 = (await db.session.create({ data: { name: `drive one ${run}`, sourceKind: 'frames' } })).id;
  s2 = (await db.session.create({ data: { name: `drive two ${run}`, sourceKind: 'frames' } })).id;
  reviewerId = (await db.user.findFirstOrThrow({ where: { role: 'reviewer' } })).id;

  // Page 0: three frames of drive one; page 1: two frames of drive two, one without its image.
  frames[0] = [frame(s1, 0, 'train', true), frame(s1, 1, 'train', true), frame(s1, 2, 'train', true)];
  frames[1] = [frame(s2, 0, 'val', true), frame(s2, 1, 'val', false)];
  const [f0, f1, f2] = frames[0] as [FrameRow, FrameRow, FrameRow];
  const [f3, f4] = frames[1] as [FrameRow, FrameRow];
  objects[0] = [
    object(f0, cls.car, [10, 20, 110, 80]),
    object(f0, cls.person, [200, 100, 240, 200], { conf: 0.4, source: 'human' }),
    object(f1, cls.car, [30, 30, 90, 70]),
    object(f2, cls.truck, [300, 50, 500, 250], { conf: null }),
  ];
  objects[1] = [
    object(f3, cls.car, [5, 5, 50, 50]),
    object(f3, cls.person, [60, 60, 80, 120]),
    object(f4, cls.car, [100, 100, 150, 150], { state: 'pending' }),
  ];
  a = await commit(NAME, { frames, objects }, ['closed-set-v1']);

  // b: the car of f0 moved, the person of f0 relabelled rider→truck-like change (class), the
  // truck removed, a bus added, the pending car accepted, a box within 0.01 px left as it was.
  const [car0, person0, car1, ,] = objects[0] as ObjectRow[];
  const [car3, person3, car4] = objects[1] as ObjectRow[];
  const bus = object(f2, cls.bus, [1, 1, 2, 2]);
  f2.objects--; // the truck is gone from f2 in b, the bus took its place
  b = await commit(
    NAME,
    {
      frames,
      objects: [
        [{ ...car0!, x2: 111 }, { ...person0!, ...cls.truck }, { ...car1!, x1: car1!.x1 + 0.001 }, bus],
        [car3!, person3!, { ...car4!, state: 'accepted', version: 2 }],
      ],
    },
    [],
  );

  // Review activity on a's objects (one after the commit), an auto-label job of each drive, and
  // the export job that made a.
  const review = (objectId: string, action: string, reviewer: string, createdAt?: Date) =>
    db.review.create({
      data: {
        objectId,
        action,
        reviewer,
        reviewerId: null,
        before: {},
        after: {},
        ...(createdAt ? { createdAt } : {}),
      },
    });
  const before = new Date(a.createdAt.getTime() - 60_000);
  await review(car0!.object_id, 'confirm', 'ann', before);
  await review(person0!.object_id, 'confirm', 'ann', before);
  await review(person0!.object_id, 'reclassify', 'bob', before);
  await review(car3!.object_id, 'reject', 'bob', new Date(a.createdAt.getTime() + 60_000));
  await review(randomUUID(), 'confirm', 'eve', before);
  await db.autolabelJob.create({
    data: {
      sessionId: s1,
      workflowId: `autolabel-${s1}`,
      state: 'completed',
      paths: { closed_set: CLOSED_SET, open_vocab: `owl-${run}, dino-${run}` },
      createdAt: before,
    },
  });
  await db.autolabelJob.create({
    data: {
      sessionId: s2,
      workflowId: `autolabel-${s2}`,
      state: 'completed',
      paths: { closed_set: CLOSED_SET },
      // After the commit: not a source of a.
      createdAt: new Date(a.createdAt.getTime() + 60_000),
    },
  });
  await db.exportJob.create({
    data: {
      id: a.jobId,
      name: NAME,
      predicate: {},
      formats: ['parquet'],
      split: {},
      gateMode: 'advisory',
      state: 'succeeded',
      commitId: a.commitId,
      createdBy: reviewerId,
    },
  });
});

afterAll(async () => {
  const { storage } = ctx.api.deps;
  for (const c of [a, b].filter(Boolean))
    await removeKeys(
      storage,
      storage.bucket('exports'),
      await listKeys(storage, storage.bucket('exports'), c.prefix),
    );
  const lake = storage.bucket('lake');
  await removeKeys(storage, lake, await listKeys(storage, lake, `t_${run}`));
});

const UNKNOWN = 'f'.repeat(64);

describe('listing and reading commits', () => {
  it('lists commits newest first, pages by cursor and filters by name', async () => {
    const all = await call('GET', '/api/datasets');
    expect(all.status).toBe(200);
    expect(all.body.items.map((c: { commit_id: string }) => c.commit_id)).toEqual([b.commitId, a.commitId]);
    expect(all.body.items[0]).toMatchObject({
      name: NAME,
      version: 2,
      parent_id: a.commitId,
      sessions: 2,
      files: 5,
      href: `/api/datasets/${b.commitId}`,
    });
    expect(all.body.items[0].certificate).toBeUndefined();

    const first = await call('GET', '/api/datasets?limit=1');
    expect(first.body.items).toHaveLength(1);
    const second = await call('GET', `/api/datasets?limit=1&cursor=${first.body.next_cursor}`);
    expect(second.body.items[0].commit_id).toBe(a.commitId);
    expect(second.body.next_cursor).toBeNull();

    expect((await call('GET', `/api/datasets?name=${encodeURIComponent(NAME)}`)).body.items).toHaveLength(2);
    expect((await call('GET', '/api/datasets?name=nothing')).body.items).toEqual([]);
    const bad = await call('GET', '/api/datasets?cursor=bm9wZQ');
    expect(bad.status).toBe(422);
    expect(bad.body.errors[0].field).toBe('query.cursor');
  });

  it('lists the versions of a name oldest first with their parents', async () => {
    const res = await call('GET', `/api/datasets/versions/${encodeURIComponent(NAME)}`);
    expect(res.status).toBe(200);
    expect(res.body.latest).toBe(b.commitId);
    expect(
      res.body.versions.map((v: { version: number; parent_id: string | null }) => [v.version, v.parent_id]),
    ).toEqual([
      [1, null],
      [2, a.commitId],
    ]);
    expect((await call('GET', '/api/datasets/versions/no-such-dataset')).status).toBe(404);
  });

  it('answers one commit without its certificate body, with hrefs and a files summary', async () => {
    const res = await call('GET', `/api/datasets/${a.commitId}`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      commit_id: a.commitId,
      name: NAME,
      version: 1,
      job_id: a.jobId,
      prefix: a.prefix,
      session_ids: [s1, s2],
      model_versions: ['closed-set-v1'],
      key_id: a.keyId,
      signature: a.signature,
      download: `/api/datasets/${a.commitId}/download`,
      certificate: `/api/export/${a.commitId}/certificate`,
      lineage: `/api/datasets/${a.commitId}/lineage`,
    });
    expect(res.body.files.count).toBe(5);
    expect(res.body.files.by_kind.parquet.files).toBe(4);
    expect(res.body.files.by_kind['data.yaml']).toEqual({ files: 1, bytes: 10 });
    expect(JSON.stringify(res.body)).not.toContain('drivelab.dataset-certificate');

    expect((await call('GET', `/api/datasets/${UNKNOWN}`)).status).toBe(404);
    for (const id of ['nope', 'F'.repeat(64), 'a'.repeat(63)]) {
      const bad = await call('GET', `/api/datasets/${id}`);
      expect(bad.status).toBe(422);
      expect(bad.body.errors[0].field).toBe('path.commit_id');
    }
  });

  it('compiles the manifest: every file with its hash, size and href', async () => {
    const res = await call('GET', `/api/datasets/compile?commit_id=${a.commitId}`);
    expect(res.status).toBe(200);
    const recorded = a.files as Array<{ path: string; sha256: string; size: number }>;
    expect(res.body.files).toEqual(
      recorded.map((f) => ({
        ...f,
        href: `/api/datasets/blob?commit_id=${a.commitId}&path=${encodeURIComponent(f.path)}`,
      })),
    );
    expect(res.body).toMatchObject({
      commit_id: a.commitId,
      version: 1,
      formats: ['parquet'],
      sessions: [s1, s2],
      model_versions: ['closed-set-v1'],
      parent: null,
      gate: { mode: 'advisory', outcome: 'passed' },
    });
    expect((await call('GET', `/api/datasets/compile?commit_id=${UNKNOWN}`)).status).toBe(404);
    expect((await call('GET', '/api/datasets/compile')).status).toBe(422);
  });
});

describe('preview', () => {
  it('answers a window of frames across parts with their objects and thumbnails', async () => {
    const res = await call('GET', `/api/datasets/preview?commit_id=${a.commitId}&offset=2&limit=2`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ total: 5, offset: 2, limit: 2, next_offset: 4 });
    const [f2, f3] = res.body.items;
    expect(f2.frame_id).toBe(frames[0]![2]!.frame_id);
    expect(f3.frame_id).toBe(frames[1]![0]!.frame_id);
    expect(f2.thumbnail).toBe(
      `/api/datasets/blob?commit_id=${a.commitId}&path=${encodeURIComponent(frames[0]![2]!.image!)}`,
    );
    expect(f2.objects).toEqual([
      expect.objectContaining({
        class_name: 'truck',
        bbox: [300, 50, 500, 250],
        conf: null,
        crop: `/api/objects/${objects[0]![3]!.object_id}/crop?size=128`,
      }),
    ]);
    expect(f3.objects.map((o: { class_name: string }) => o.class_name)).toEqual(['car', 'person']);

    const last = await call('GET', `/api/datasets/preview?commit_id=${a.commitId}&offset=4`);
    expect(last.body.items).toHaveLength(1);
    expect(last.body.next_offset).toBeNull();
    // Without the image in the commit, the frame's own (redacted) image route.
    expect(last.body.items[0].thumbnail).toBe(`/api/frames/${frames[1]![1]!.frame_id}/image`);
    expect(last.body.items[0].objects[0]).toMatchObject({ state: 'pending', bbox: [100, 100, 150, 150] });

    expect((await call('GET', `/api/datasets/preview?commit_id=${a.commitId}&offset=9`)).body.items).toEqual(
      [],
    );
    expect((await call('GET', `/api/datasets/preview?commit_id=${a.commitId}&limit=101`)).status).toBe(422);
    expect((await call('GET', `/api/datasets/preview?commit_id=${UNKNOWN}`)).status).toBe(404);
  });
});

describe('vocabulary', () => {
  it("lists a commit's classes in YOLO order (class id ascending) with counts and ontology ids", async () => {
    const res = await call('GET', `/api/datasets/vocabulary?commit_id=${a.commitId}`);
    expect(res.status).toBe(200);
    const present = [cls.car, cls.person, cls.truck].sort((x, y) => x.class_id - y.class_id);
    expect(res.body.names).toEqual(present.map((c) => c.class_name));
    expect(res.body.nc).toBe(3);
    const counts: Record<string, number> = { car: 4, person: 2, truck: 1 };
    res.body.classes.forEach(
      (c: { index: number; name: string; count: number; class_id: number }, i: number) => {
        expect(c.index).toBe(i);
        expect(c.count).toBe(counts[c.name]);
      },
    );
    const car = res.body.classes.find((c: { name: string }) => c.name === 'car');
    expect(car).toMatchObject({ class_id: cls.car.class_id, l0: 'object', l1: 'vehicle' });
    expect(car.ontology.sources).toContain('cityscapes:car');
    expect(car.ontology.current_name).toBe('car');
  });

  it("without a commit, lists the live ontology's classes, retired ones left out", async () => {
    const live = await ctx.api.deps.db.ontologyClass.count({ where: { retiredAt: null } });
    const res = await call('GET', '/api/datasets/vocabulary');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ commit_id: null, source: 'ontology', nc: live });
    const ids = res.body.classes.map((c: { class_id: number }) => c.class_id);
    expect(ids).toEqual([...ids].sort((x: number, y: number) => x - y));
    expect(res.body.classes[0]).toMatchObject({ index: 0, count: null });
    expect((await call('GET', `/api/datasets/vocabulary?commit_id=${UNKNOWN}`)).status).toBe(404);
  });
});

describe('diff', () => {
  it('finds objects added, removed and changed by class, either way round', async () => {
    const res = await call('GET', `/api/datasets/${a.commitId}/diff/${b.commitId}`);
    expect(res.status).toBe(200);
    expect(res.body.a).toMatchObject({ commit_id: a.commitId, version: 1 });
    expect(res.body.b).toMatchObject({ commit_id: b.commitId, version: 2 });
    expect(res.body.totals).toEqual({ added: 1, removed: 1, changed: 3, unchanged: 3 });
    expect(res.body.by_class).toEqual({
      bus: { added: 1, removed: 0, changed: 0 },
      car: { added: 0, removed: 0, changed: 2 },
      truck: { added: 0, removed: 1, changed: 1 },
    });
    const [car0, person0, , truck] = objects[0]!;
    expect(res.body.samples.removed).toEqual([truck!.object_id]);
    expect(res.body.samples.changed).toEqual(
      expect.arrayContaining([car0!.object_id, person0!.object_id, objects[1]![2]!.object_id]),
    );

    const back = await call('GET', `/api/datasets/${b.commitId}/diff/${a.commitId}`);
    expect(back.body.totals).toEqual({ added: 1, removed: 1, changed: 3, unchanged: 3 });
    expect(back.body.samples.added).toEqual([truck!.object_id]);

    const same = await call('GET', `/api/datasets/${a.commitId}/diff/${a.commitId}`);
    expect(same.body.totals).toEqual({ added: 0, removed: 0, changed: 0, unchanged: 7 });
    expect((await call('GET', `/api/datasets/${a.commitId}/diff/${UNKNOWN}`)).status).toBe(404);
    expect((await call('GET', `/api/datasets/${a.commitId}/diff/nope`)).status).toBe(422);
  });
});

describe('lineage', () => {
  it("answers a commit's sessions, frames, reviews, models, export and parent, on both routes", async () => {
    const res = await call('GET', `/api/datasets/${a.commitId}/lineage`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      commit: { commit_id: a.commitId, version: 1 },
      parent: null,
      children: [expect.objectContaining({ commit_id: b.commitId, version: 2 })],
      export: { job_id: a.jobId, state: 'succeeded', created_by: reviewerId },
      exported_by: { user_id: reviewerId },
      frames: 5,
      objects: 7,
    });
    expect(res.body.exported_by.email).toMatch(/^reviewer-/);
    expect(res.body.sessions).toEqual([
      expect.objectContaining({
        session_id: s1,
        name: `drive one ${run}`,
        frames: 3,
        objects: 4,
        exists: true,
      }),
      expect.objectContaining({
        session_id: s2,
        name: `drive two ${run}`,
        frames: 2,
        objects: 3,
        exists: true,
      }),
    ]);
    // The review of an object outside the commit is not counted; one came after the commit.
    expect(res.body.reviews).toMatchObject({
      total: 4,
      since_commit: 1,
      objects_reviewed: 3,
      by_action: { confirm: 2, reclassify: 1, reject: 1 },
      distinct_reviewers: 2,
    });
    // The drive-two job started after the commit, so only drive one's models are a's sources.
    expect(res.body.model_versions).toEqual(
      ['closed-set-v1', CLOSED_SET, `dino-${run}`, `owl-${run}`].sort(),
    );
    expect(res.body.autolabel_jobs).toEqual([expect.objectContaining({ session_id: s1 })]);

    const same = await call('GET', `/api/lineage/dataset/${a.commitId}`);
    expect(same.status).toBe(200);
    expect(same.body).toEqual(res.body);

    const child = await call('GET', `/api/lineage/dataset/${b.commitId}`);
    expect(child.body.parent).toMatchObject({ commit_id: a.commitId, version: 1 });
    expect(child.body.export).toBeNull();
    expect((await call('GET', `/api/lineage/dataset/${UNKNOWN}`)).status).toBe(404);
    expect((await call('GET', `/api/datasets/${UNKNOWN}/lineage`)).status).toBe(404);
  });

  it('answers the commits holding a session, and 404 for a session nothing knows', async () => {
    const res = await call('GET', `/api/lineage/session/${s2}`);
    expect(res.status).toBe(200);
    expect(res.body.session).toEqual({ name: `drive two ${run}`, state: 'created' });
    expect(res.body.commits.map((c: { commit_id: string }) => c.commit_id)).toEqual([b.commitId, a.commitId]);
    expect(res.body.autolabel_jobs).toHaveLength(1);
    expect((await call('GET', `/api/lineage/session/${randomUUID()}`)).status).toBe(404);
    expect((await call('GET', '/api/lineage/session/nope')).status).toBe(422);
  });

  it('answers a model version with no training yet and the sessions it auto-labelled', async () => {
    const res = await call('GET', `/api/lineage/model/${encodeURIComponent(CLOSED_SET)}`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      model_version: CLOSED_SET,
      trained_on: null,
      note: 'no training runs are recorded yet',
      commits: [],
    });
    expect(res.body.autolabelled_sessions.map((s: { session_id: string }) => s.session_id).sort()).toEqual(
      [s1, s2].sort(),
    );
    const named = await call('GET', `/api/lineage/model/owl-${run}`);
    expect(named.body.autolabelled_sessions).toEqual([
      expect.objectContaining({ session_id: s1, name: `drive one ${run}` }),
    ]);
    const recorded = await call('GET', '/api/lineage/model/closed-set-v1');
    expect(recorded.body.commits.map((c: { commit_id: string }) => c.commit_id)).toEqual([a.commitId]);
    expect((await call('GET', '/api/lineage/model/never-seen')).body).toMatchObject({
      trained_on: null,
      commits: [],
      autolabelled_sessions: [],
    });
  });
});

describe('lake', () => {
  const base = `t_${run}`;
  const publish = (body: unknown, token = ctx.token.reviewer) =>
    call('POST', '/api/datasets/lake/publish', token, body);
  const query = (table: string, qs = '') => call('GET', `/api/datasets/lake/${table}${qs}`);

  it('publishes a commit, then queries it with filters, projection and paging', async () => {
    expect((await publish({ commit_id: a.commitId, table: base }, ctx.token.annotator)).status).toBe(403);
    const res = await publish({ commit_id: a.commitId, table: base });
    expect(res.status).toBe(201);
    expect(res.body.tables).toEqual([
      expect.objectContaining({
        table: `${base}_objects`,
        kind: 'objects',
        parts: 2,
        rows: 7,
        replaced_commit_id: null,
      }),
      expect.objectContaining({ table: `${base}_frames`, kind: 'frames', parts: 2, rows: 5 }),
    ]);
    const { storage } = ctx.api.deps;
    expect(await listKeys(storage, storage.bucket('lake'), `${base}_objects/`)).toEqual([
      `${base}_objects/${a.commitId}/part-00000.parquet`,
      `${base}_objects/${a.commitId}/part-00001.parquet`,
    ]);

    const all = await query(`${base}_objects`);
    expect(all.status).toBe(200);
    expect(all.body).toMatchObject({
      commit_id: a.commitId,
      kind: 'objects',
      total_matching: 7,
      next_offset: null,
    });
    expect(all.body.rows.map((r: { object_id: string }) => r.object_id)).toEqual(
      [...objects[0]!, ...objects[1]!].map((o) => o.object_id),
    );

    const cars = await query(`${base}_objects`, '?class_name=car&columns=object_id,session_id&limit=2');
    expect(cars.body).toMatchObject({
      total_matching: 4,
      next_offset: 2,
      columns: ['object_id', 'session_id'],
    });
    expect(cars.body.rows).toEqual(
      [objects[0]![0]!, objects[0]![2]!].map((o) => ({ object_id: o.object_id, session_id: o.session_id })),
    );
    const rest = await query(`${base}_objects`, '?class_name=car&columns=object_id&limit=2&offset=2');
    expect(rest.body.rows.map((r: { object_id: string }) => r.object_id)).toEqual(
      [objects[1]![0]!, objects[1]![2]!].map((o) => o.object_id),
    );
    expect(rest.body.next_offset).toBeNull();

    const confident = await query(`${base}_objects`, `?min_conf=0.5&session_id=${s1}&columns=object_id,conf`);
    expect(confident.body.rows).toEqual([
      { object_id: objects[0]![0]!.object_id, conf: 0.9 },
      { object_id: objects[0]![2]!.object_id, conf: 0.9 },
    ]);
    const pending = await query(`${base}_objects`, '?state=pending&columns=object_id');
    expect(pending.body.total_matching).toBe(1);

    const val = await query(`${base}_frames`, '?split=val&columns=frame_id,session_id,image');
    expect(val.body.total_matching).toBe(2);
    expect(val.body.rows[1]).toEqual({ frame_id: frames[1]![1]!.frame_id, session_id: s2, image: null });
    const window = await query(`${base}_frames`, '?offset=2&limit=2&columns=frame_id');
    expect(window.body.rows.map((r: { frame_id: string }) => r.frame_id)).toEqual([
      frames[0]![2]!.frame_id,
      frames[1]![0]!.frame_id,
    ]);
    expect(window.body.total_matching).toBe(5);
  });

  it('refuses filters and columns a table does not have, unknown tables and commits', async () => {
    const wrong = await query(`${base}_frames`, '?class_name=car');
    expect(wrong.status).toBe(422);
    expect(wrong.body.errors[0].field).toBe('query.class_name');
    expect((await query(`${base}_frames`, '?min_conf=0.5')).status).toBe(422);
    expect((await query(`${base}_objects`, '?columns=object_id,nope')).status).toBe(422);
    expect((await query(`${base}_objects`, '?where=1')).status).toBe(422);
    expect((await query(`nothing_${run}_objects`)).status).toBe(404);
    expect((await query('objects')).status).toBe(422);
    expect((await publish({ commit_id: UNKNOWN })).status).toBe(404);
    expect((await publish({ commit_id: a.commitId, kinds: ['objects', 'objects'] })).status).toBe(422);
    expect((await publish({ commit_id: a.commitId, table: 'Bad-Name' })).status).toBe(422);
  });

  it('republishes a table from a newer commit, removing the old parts after the switch', async () => {
    const res = await publish({ commit_id: b.commitId, table: base, kinds: ['objects'] });
    expect(res.status).toBe(201);
    expect(res.body.tables).toEqual([
      expect.objectContaining({ table: `${base}_objects`, replaced_commit_id: a.commitId, rows: 7 }),
    ]);
    const { storage } = ctx.api.deps;
    expect(await listKeys(storage, storage.bucket('lake'), `${base}_objects/`)).toEqual([
      `${base}_objects/${b.commitId}/part-00000.parquet`,
      `${base}_objects/${b.commitId}/part-00001.parquet`,
    ]);
    const buses = await query(`${base}_objects`, '?class_name=bus');
    expect(buses.body).toMatchObject({ commit_id: b.commitId, total_matching: 1 });
    // The frames table was not asked for: it still serves a.
    expect((await query(`${base}_frames`)).body.commit_id).toBe(a.commitId);

    // Republishing the live commit keeps its parts.
    expect((await publish({ commit_id: b.commitId, table: base, kinds: ['objects'] })).status).toBe(201);
    expect(await listKeys(storage, storage.bucket('lake'), `${base}_objects/`)).toHaveLength(2);
    expect((await query(`${base}_objects`)).body.total_matching).toBe(7);
  });

  it("names tables after the commit's name by default", async () => {
    const res = await publish({ commit_id: a.commitId, kinds: ['frames'] });
    expect(res.status).toBe(201);
    expect(res.body.tables[0].table).toBe(`roads_${run}_frames`);
    const { storage } = ctx.api.deps;
    await removeKeys(
      storage,
      storage.bucket('lake'),
      await listKeys(storage, storage.bucket('lake'), `roads_${run}_`),
    );
  });
});
