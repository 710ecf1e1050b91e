import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { createMaskStore } from '../activities/annotations/masks';
import type { Frame } from '../generated/prisma/client';
import { startIngestStack, type IngestStack } from '../testkit/media/harness';
import { readExport } from '../testkit/readers';
import { recordHistoryIfAsked, replayRecordedHistory } from '../testkit/temporal';
import { createSessionFixture } from '../testkit/session-fixtures';

/**
 * A reviewer exports slices on the real stack (PostgreSQL, Temporal, MinIO, the cpu worker):
 * every format read back by its reference reader, the privacy gate in each mode constructed case
 * by case, splits by session, and the commit the export becomes.
 */
const HISTORY = path.join(__dirname, 'histories/export.json');
let stack: IngestStack;
let tmp: string;
const classId: Record<string, number> = {};

interface Drive {
  sessionId: string;
  frames: Frame[];
}

beforeAll(async () => {
  stack = await startIngestStack();
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'drivelab-export-'));
  for (const c of await stack.api.deps.db.ontologyClass.findMany({
    where: { name: { in: ['car', 'pedestrian', 'person', 'traffic_light', 'truck'] } },
  }))
    classId[c.name] = c.id;
}, 120_000);

afterAll(async () => {
  await stack?.close();
  fs.rmSync(tmp, { recursive: true, force: true });
});

/** A drive of `n` frames (64×48, real JPEGs, redacted copies) with a PII audit per frame. */
async function drive(
  n: number,
  opts: { name: string; faceRegion?: number[] | null; audit?: boolean },
): Promise<Drive> {
  const { db, storage } = stack.api.deps;
  const { session, frames } = await createSessionFixture(
    { db, storage },
    {
      frames: n,
      redacted: true,
      session: { name: opts.name },
      context: (i) => ({ exposure: { mean_luma: i === 0 ? 20 : 120 } }),
    },
  );
  if (opts.audit ?? true)
    for (const f of frames)
      await db.piiAudit.create({
        data: {
          frameId: f.id,
          nFaces: opts.faceRegion ? 1 : 0,
          regions: opts.faceRegion ? [{ kind: 'face', bbox: opts.faceRegion, score: 0.9 }] : [],
        },
      });
  return { sessionId: session.id, frames };
}

async function object(
  frame: Frame,
  cls: string,
  bbox: number[],
  extra: { state?: string; maskPolygons?: number[][] } = {},
) {
  const { db, storage } = stack.api.deps;
  const o = await db.annoObject.create({
    data: {
      frameId: frame.id,
      classId: classId[cls]!,
      bbox,
      source: 'human',
      state: extra.state ?? 'accepted',
      conf: 0.9,
    },
  });
  if (extra.maskPolygons) {
    const uri = await createMaskStore(storage).put({
      object_id: o.id,
      version: 1,
      polygons: extra.maskPolygons,
    });
    await db.annoObject.update({ where: { id: o.id }, data: { maskUri: uri } });
  }
  return o;
}

function setGate(mode: 'off' | 'advisory' | 'enforcing') {
  stack.api.deps.config.pii.coverageGate = mode;
}

async function exportAndWait(body: Record<string, unknown>) {
  const res = await stack.api.call('POST', '/api/export', { token: stack.reviewer, body });
  if (res.status !== 202) return { res, outcome: null };
  const outcome = (await stack.env.client.workflow.getHandle(res.body.workflow_id).result()) as {
    state: string;
    commit_id: string | null;
  };
  return { res, outcome };
}

/** Copies a commit's files out of MinIO into a folder, laid out as the dataset is. */
async function downloadCommit(commitId: string): Promise<string> {
  const { db, storage } = stack.api.deps;
  const commit = await db.datasetCommit.findUniqueOrThrow({ where: { commitId } });
  const dir = path.join(tmp, commitId.slice(0, 12));
  for (const file of commit.files as Array<{ path: string }>) {
    const stream = (await storage.client.getObject(
      storage.bucket('exports'),
      `${commit.prefix}${file.path}`,
    )) as Readable;
    const chunks: Buffer[] = [];
    for await (const c of stream) chunks.push(c as Buffer);
    fs.mkdirSync(path.dirname(path.join(dir, file.path)), { recursive: true });
    fs.writeFileSync(path.join(dir, file.path), Buffer.concat(chunks));
  }
  return dir;
}

describe('an export of a reviewed slice', () => {
  let a: Drive;
  let commitId: string;
  const predicate = () => ({ states: ['accepted'], session_ids: [a.sessionId] });

  beforeAll(async () => {
    // A pedestrian whose face was redacted (the region lies inside its box), cars with their plates'
    // regions inside, a masked car for segmentation, and a rejected object that must not leave.
    a = await drive(3, { name: 'export drive a', faceRegion: [12, 4, 18, 10] });
    await object(a.frames[0]!, 'pedestrian', [10, 2, 22, 40]);
    await object(a.frames[0]!, 'traffic_light', [40, 2, 44, 12]);
    await object(a.frames[1]!, 'person', [8, 0, 30, 44]);
    await object(a.frames[2]!, 'traffic_light', [30, 5, 34, 15], { state: 'rejected' });
    await object(a.frames[2]!, 'traffic_light', [1, 1, 5, 9], {
      maskPolygons: [[1, 1, 5, 1, 5, 9, 1, 9]],
    });
  });

  it('writes COCO, YOLO and Parquet that the reference readers read back, with a datasheet and a signed commit', async () => {
    setGate('advisory');
    const { res, outcome } = await exportAndWait({
      name: 'story',
      predicate: predicate(),
      split: { seed: 7, train: 1, val: 0, test: 0 },
    });
    expect(res.status).toBe(202);
    expect(res.headers.get('location')).toBe(`/api/exports/${res.body.job_id}/progress`);
    // An advisory gate runs in the workflow; the job reports it.
    expect(res.body.gate).toMatchObject({ mode: 'advisory', outcome: 'pending' });
    expect(outcome).toMatchObject({ state: 'succeeded' });
    commitId = outcome!.commit_id!;
    await recordHistoryIfAsked(HISTORY, () =>
      stack.env.client.workflow.getHandle(res.body.workflow_id).fetchHistory(),
    );
    await expect(
      replayRecordedHistory(HISTORY, require.resolve('../workflows'), 'recorded'),
    ).resolves.toBeUndefined();
    expect(commitId).toMatch(/^[0-9a-f]{64}$/);

    const progress = await stack.api.call('GET', `/api/exports/${res.body.job_id}/progress`, {
      token: stack.reviewer,
    });
    expect(progress.status).toBe(200);
    expect(progress.body).toMatchObject({
      state: 'succeeded',
      commit_id: commitId,
      progress: { frames_done: 3, frames_total: 3, objects_done: 4, objects_total: 4, fraction: 1 },
      gate: { mode: 'advisory', outcome: 'passed', checked_frames: 3, frames_without_audit: 0 },
    });

    const dir = await downloadCommit(commitId);
    const coco = await readExport('coco', path.join(dir, 'annotations/instances_train.json'));
    expect(coco.images).toBe(3);
    expect(coco.annotations).toBe(4);
    expect(coco.per_category).toEqual({ person: 1, pedestrian: 1, traffic_light: 2 });
    expect(coco.categories.find((c) => c.name === 'pedestrian')).toMatchObject({
      id: classId.pedestrian,
      supercategory: 'vru',
    });
    // [x, y, w, h]: 10+2+12+38 + 40+2+4+10 + 8+0+22+44 + 1+1+4+8
    expect(coco.bbox_sum).toBeCloseTo(62 + 56 + 74 + 14, 5);
    expect(coco.segm_annotations).toBe(1);
    expect(coco.segm_area_sum).toBeGreaterThan(20);

    const yolo = await readExport('yolo', dir, 'train');
    expect(yolo).toMatchObject({ images: 3, boxes: 4, polygons: 0, normalised_ok: true });
    expect(yolo.per_class).toEqual({ person: 1, pedestrian: 1, traffic_light: 2 });
    expect(yolo.names).toEqual(
      ['person', 'pedestrian', 'traffic_light'].sort((x, y) => classId[x]! - classId[y]!),
    );

    const objects = await readExport('parquet', path.join(dir, 'parquet/objects/part-00000.parquet'));
    expect(objects.rows).toBe(4);
    expect(objects.columns).toEqual(
      expect.arrayContaining([
        'object_id',
        'class_name',
        'l0',
        'l1',
        'x1',
        'mask_polygons',
        'provenance',
        'split',
      ]),
    );
    const frames = await readExport('parquet', path.join(dir, 'parquet/frames/part-00000.parquet'));
    expect(frames.rows).toBe(3);
    const byClass = await readExport(
      'duckdb',
      path.join(dir, 'parquet/objects/part-00000.parquet'),
      `select l1, count(*) from read_parquet('${dir}/parquet/objects/*.parquet') group by l1 order by l1`,
    );
    expect(byClass.rows).toEqual([
      ['traffic_control', 2],
      ['vru', 2],
    ]);

    // Images are the redacted copies, byte for byte.
    const { storage } = stack.api.deps;
    const redacted = (await storage.client.getObject(
      storage.bucket('redacted'),
      a.frames[0]!.redactedUri!,
    )) as Readable;
    const chunks: Buffer[] = [];
    for await (const c of redacted) chunks.push(c as Buffer);
    expect(
      fs.readFileSync(path.join(dir, `images/train/${a.frames[0]!.id}.jpg`)).equals(Buffer.concat(chunks)),
    ).toBe(true);

    const datasheet = JSON.parse(fs.readFileSync(path.join(dir, 'datasheet.json'), 'utf8'));
    expect(datasheet).toMatchObject({
      totals: { objects: 4, frames: 3, sessions: 1 },
      perL1: { vru: 2, traffic_control: 2 },
      perContext: { lighting: { dark: 1, normal: 2 } },
      verification: { human_verified: 4, auto_accepted: 0 },
      pii: { frames_audited: 3, frames: 3 },
      gate: { mode: 'advisory', outcome: 'passed' },
      controlPrecision: { status: 'not_yet_measurable' },
    });
    expect(fs.readFileSync(path.join(dir, 'datasheet.md'), 'utf8')).toMatch(
      /## Composition[\s\S]*## Privacy/,
    );
  });

  it('writes the YOLO segmentation variant: a polygon per object, from the mask or the box', async () => {
    const { outcome } = await exportAndWait({
      name: 'segment',
      formats: ['yolo'],
      yolo_task: 'segment',
      predicate: predicate(),
      split: { seed: 7, train: 1, val: 0, test: 0 },
    });
    const dir = await downloadCommit(outcome!.commit_id!);
    const yolo = await readExport('yolo', dir, 'train');
    expect(yolo).toMatchObject({ images: 3, boxes: 4, polygons: 4, normalised_ok: true });
    const masked = fs
      .readdirSync(path.join(dir, 'labels/train'))
      .map((f) => fs.readFileSync(path.join(dir, 'labels/train', f), 'utf8'))
      .join('');
    // The masked light's ring (1,1 5,1 5,9 1,9) on the 64×48 frame, normalised.
    expect(masked).toContain('0.015625 0.020833 0.078125 0.020833 0.078125 0.187500 0.015625 0.187500');
  });

  it('splits by session, deterministically: a drive never straddles splits', async () => {
    const b = await drive(2, { name: 'export drive b', faceRegion: null });
    await object(b.frames[0]!, 'traffic_light', [1, 1, 9, 9]);
    await object(b.frames[1]!, 'traffic_light', [2, 2, 9, 9]);
    const c = await drive(2, { name: 'export drive c', faceRegion: null });
    await object(c.frames[0]!, 'traffic_light', [1, 1, 9, 9]);
    const body = {
      name: 'splits',
      formats: ['parquet'],
      include_images: false,
      predicate: {
        classes: ['traffic_light'],
        states: ['accepted'],
        session_ids: [b.sessionId, c.sessionId],
      },
      split: { seed: 3, train: 0.5, val: 0.5, test: 0 },
    };
    const first = await exportAndWait(body);
    const dir = await downloadCommit(first.outcome!.commit_id!);
    const perSession = await readExport(
      'duckdb',
      path.join(dir, 'parquet/objects/part-00000.parquet'),
      `select session_id, count(distinct split) from export group by session_id`,
    );
    expect(perSession.rows.every((r) => r[1] === 1)).toBe(true);
    // The same request again writes the same files: the same content-addressed commit.
    const again = await exportAndWait(body);
    expect(again.outcome!.commit_id).toBe(first.outcome!.commit_id);
  });

  it('refuses in enforcing mode when a pedestrian box holds an unredacted face, naming the session', async () => {
    const faceless = await drive(1, { name: 'unredacted pedestrian drive', faceRegion: null });
    const walker = await object(faceless.frames[0]!, 'pedestrian', [20, 5, 30, 45]);
    const noAudit = await drive(1, { name: 'never audited drive', audit: false });
    await object(noAudit.frames[0]!, 'traffic_light', [1, 1, 5, 5]);
    const body = {
      name: 'gate',
      formats: ['parquet'],
      include_images: false,
      predicate: { session_ids: [faceless.sessionId, noAudit.sessionId, a.sessionId] },
    };

    setGate('enforcing');
    const refused = await stack.api.call('POST', '/api/export', { token: stack.reviewer, body });
    expect(refused.status).toBe(422);
    expect(refused.headers.get('content-type')).toMatch(/application\/problem\+json/);
    expect(refused.body.detail).toContain('unredacted pedestrian drive');
    expect(refused.body).toMatchObject({
      gate_mode: 'enforcing',
      frames_without_audit: 1,
      uncovered_objects: 1,
    });
    const blocking = refused.body.blocking_sessions as Array<{
      session_id: string;
      frames: Array<{ frame_id: string; missing_audit: boolean; uncovered_objects: string[] }>;
    }>;
    expect(blocking.map((s) => s.session_id).sort()).toEqual([faceless.sessionId, noAudit.sessionId].sort());
    expect(blocking.find((s) => s.session_id === faceless.sessionId)!.frames).toEqual([
      expect.objectContaining({
        frame_id: faceless.frames[0]!.id,
        missing_audit: false,
        uncovered_objects: [walker.id],
      }),
    ]);
    expect(blocking.find((s) => s.session_id === noAudit.sessionId)!.frames[0]).toMatchObject({
      missing_audit: true,
    });
    expect(await stack.api.deps.db.exportJob.count({ where: { name: 'gate' } })).toBe(0);

    // Advisory lets the same export through and records the gaps in the datasheet and the commit.
    setGate('advisory');
    const advisory = await exportAndWait(body);
    const advised = await stack.api.call('GET', `/api/exports/${advisory.res.body.job_id}/progress`, {
      token: stack.reviewer,
    });
    expect(advised.body.gate).toMatchObject({
      outcome: 'gaps',
      frames_without_audit: 1,
      uncovered_objects: 1,
      sessions_with_gaps: expect.arrayContaining([faceless.sessionId, noAudit.sessionId]),
    });
    const commit = await stack.api.deps.db.datasetCommit.findUniqueOrThrow({
      where: { commitId: advisory.outcome!.commit_id! },
    });
    expect(commit.gate).toMatchObject({ mode: 'advisory', outcome: 'gaps', uncovered_objects: 1 });

    // Off checks nothing.
    setGate('off');
    const off = await exportAndWait(body);
    const unchecked = await stack.api.call('GET', `/api/exports/${off.res.body.job_id}/progress`, {
      token: stack.reviewer,
    });
    expect(unchecked.body.gate).toMatchObject({ mode: 'off', outcome: 'off' });
    expect(off.outcome!.state).toBe('succeeded');
    setGate('advisory');
  });

  it('exempts frames without a person or vehicle and accepts a redaction reaching a little past the box', async () => {
    const edge = await drive(1, { name: 'face at the edge', faceRegion: [9, 0, 16, 7] });
    // The grown face region sticks out 1 px above and left of the box: within a quarter of its size.
    await object(edge.frames[0]!, 'pedestrian', [10, 1, 30, 45]);
    const lights = await drive(1, { name: 'only lights', faceRegion: null });
    await object(lights.frames[0]!, 'traffic_light', [1, 1, 5, 5]);
    setGate('enforcing');
    const res = await exportAndWait({
      name: 'exempt',
      formats: ['parquet'],
      include_images: false,
      predicate: { session_ids: [edge.sessionId, lights.sessionId] },
    });
    setGate('advisory');
    expect(res.res.status).toBe(202);
    expect(res.res.body.gate).toMatchObject({ outcome: 'passed', checked_frames: 2 });
  });

  it('answers malformed and hostile requests with problem+json and starts nothing', async () => {
    const before = await stack.api.deps.db.exportJob.count();
    const cases: Array<[unknown, number]> = [
      [{ formats: ['tiff'] }, 422],
      [{ predicate: { classes: ['no_such_class'] } }, 422],
      [{ predicate: { states: ['accepted'] }, slice_id: '00000000-0000-4000-8000-000000000000' }, 422],
      [{ slice_id: '00000000-0000-4000-8000-000000000000' }, 404],
      [{ split: { train: 0.9, val: 0.9, test: 0 } }, 422],
      [{ name: '../../etc' }, 422],
      [{ predicate: { context: { "x'; drop table objects; --": 'a' } } }, 422],
      [{ predicate: { session_ids: ['00000000-0000-4000-8000-000000000000'] } }, 422],
    ];
    for (const [body, status] of cases) {
      const res = await stack.api.call('POST', '/api/export', { token: stack.reviewer, body });
      expect({ body, status: res.status }).toEqual({ body, status });
      expect(res.headers.get('content-type')).toMatch(/application\/problem\+json/);
    }
    expect((await stack.api.call('POST', '/api/export', { token: stack.annotator, body: {} })).status).toBe(
      403,
    );
    expect(await stack.api.deps.db.exportJob.count()).toBe(before);
  });

  it('lists nothing resumable while every export finished, and refuses to resume a finished one', async () => {
    const list = await stack.api.call('GET', '/api/exports/resumable', { token: stack.reviewer });
    expect(list.status).toBe(200);
    expect(list.body.items).toEqual([]);
    const job = await stack.api.deps.db.exportJob.findFirstOrThrow({ where: { state: 'succeeded' } });
    const resume = await stack.api.call('POST', `/api/exports/${job.id}/resume`, { token: stack.reviewer });
    expect(resume.status).toBe(409);
    expect(resume.body.detail).toContain('already finished');
  });
});
