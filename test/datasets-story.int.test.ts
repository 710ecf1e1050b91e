import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { extract } from 'tar-stream';
import { SplitIn, splitOf } from '../core/export/splits';
import { startIngestStack, type IngestStack } from '../testkit/media/harness';
import { createSessionFixture } from '../testkit/session-fixtures';

/**
 * Issue 13's "done when", on the real stack: a reviewer selects a slice, exports it (COCO, YOLO
 * and Parquet), changes a label and exports the next version, downloads the commit, verifies its
 * certificate, diffs it against the previous commit and reads its lineage; and an enforcing gate
 * refuses a slice with an unredacted face in a pedestrian box, naming the session.
 */
let stack: IngestStack;
let sessionId: string;
let frameIds: string[];

beforeAll(async () => {
  stack = await startIngestStack();
  const { db, storage } = stack.api.deps;
  const { session, frames } = await createSessionFixture(
    { db, storage },
    { frames: 3, redacted: true, session: { name: 'story drive' } },
  );
  sessionId = session.id;
  frameIds = frames.map((f) => f.id);
  for (const f of frames)
    await db.piiAudit.create({
      data: { frameId: f.id, nFaces: 1, regions: [{ kind: 'face', bbox: [12, 4, 18, 10], score: 0.9 }] },
    });
}, 120_000);

afterAll(() => stack?.close());

const call = (method: string, path: string, body?: unknown) =>
  stack.api.call(method, path, { token: stack.reviewer, body });

async function draw(frameId: string, className: string, bbox: number[]) {
  const res = await call('POST', `/api/frames/${frameId}/objects`, {
    class_name: className,
    bbox,
    state: 'accepted',
  });
  expect(res.status).toBe(201);
  return res.body.id as string;
}

async function exportSlice(sliceId: string): Promise<string> {
  const res = await call('POST', '/api/datasets/export', { name: 'story', slice_id: sliceId });
  expect(res.status).toBe(202);
  const outcome = (await stack.env.client.workflow.getHandle(res.body.workflow_id).result()) as {
    commit_id: string;
  };
  return outcome.commit_id;
}

it('selects, exports, versions, downloads, verifies, diffs and traces a dataset', async () => {
  // Persons (a class with descendants: pedestrians count) and cars, as reviewed.
  await draw(frameIds[0]!, 'pedestrian', [10, 2, 22, 40]);
  await draw(frameIds[1]!, 'person', [8, 0, 30, 44]);
  const car = await draw(frameIds[2]!, 'car', [1, 20, 9, 30]);
  await draw(frameIds[2]!, 'traffic_light', [40, 2, 44, 12]);

  const slice = await call('POST', '/api/curation/slices', {
    name: 'people and cars',
    predicate: { classes: ['person', 'car'], states: ['accepted'], session_ids: [sessionId] },
  });
  expect(slice.status).toBe(201);
  const materialized = await call('GET', `/api/curation/slices/${slice.body.id}/materialize`);
  expect(materialized.status).toBe(200);
  expect(materialized.body).toMatchObject({ counts: { objects: 3, frames: 3 } });

  const first = await exportSlice(slice.body.id);
  // A reviewer draws one more car; the next export is the next version.
  const added = await draw(frameIds[0]!, 'car', [30, 20, 40, 30]);
  const second = await exportSlice(slice.body.id);
  expect(second).not.toBe(first);

  const versions = await call('GET', '/api/datasets/versions/story');
  expect(
    versions.body.versions.map((v: { commit_id: string; version: number }) => [v.version, v.commit_id]),
  ).toEqual([
    [1, first],
    [2, second],
  ]);
  const commit = await call('GET', `/api/datasets/${second}`);
  expect(commit.status).toBe(200);
  expect(commit.body).toMatchObject({ commit_id: second, version: 2, parent_id: first });

  // The download is the commit's files, each as its certificate hashes it.
  const download = await fetch(`${stack.api.url}/api/datasets/${second}/download`, {
    headers: { authorization: `Bearer ${stack.reviewer}` },
  });
  expect(download.status).toBe(200);
  const archive = Buffer.from(await download.arrayBuffer());
  const entries = new Map<string, string>();
  const reader = extract();
  const done = new Promise<void>((resolve, reject) => {
    reader.on('entry', (header, stream, next) => {
      const hash = createHash('sha256');
      stream.on('data', (c: unknown) => {
        hash.update(c as Buffer);
      });
      stream.on('end', () => {
        entries.set(header.name, hash.digest('hex'));
        next();
      });
    });
    reader.on('finish', resolve);
    reader.on('error', reject);
  });
  Readable.from(archive).pipe(reader);
  await done;
  const certificate = await call('GET', `/api/export/${second}/certificate`);
  expect(certificate.status).toBe(200);
  const files = certificate.body.certificate.files as Array<{ path: string; sha256: string }>;
  expect(new Map(files.map((f) => [f.path, f.sha256]))).toEqual(entries);
  // The drive's split is drawn from the default seed and its own (random) id.
  const split = splitOf(SplitIn.parse({}), sessionId);
  expect([...entries.keys()]).toEqual(
    expect.arrayContaining([
      `annotations/instances_${split}.json`,
      'data.yaml',
      'datasheet.md',
      `images/${split}/${frameIds[0]}.jpg`,
    ]),
  );

  const verified = await call('GET', `/api/release/${second}/verify`);
  expect(verified.body).toMatchObject({
    valid: true,
    signature_valid: true,
    manifest_valid: true,
    mismatches: [],
  });

  const diff = await call('GET', `/api/datasets/${first}/diff/${second}`);
  expect(diff.status).toBe(200);
  expect(diff.body.totals).toEqual({ added: 1, removed: 0, changed: 0, unchanged: 3 });
  expect(diff.body.by_class.car).toMatchObject({ added: 1, removed: 0, changed: 0 });
  expect(JSON.stringify(diff.body.samples)).toContain(added);
  expect(JSON.stringify(diff.body.samples)).not.toContain(car);

  const lineage = await call('GET', `/api/datasets/${second}/lineage`);
  expect(lineage.status).toBe(200);
  expect(lineage.body).toMatchObject({
    commit: { commit_id: second, version: 2 },
    parent: expect.objectContaining({ commit_id: first }),
    sessions: [expect.objectContaining({ session_id: sessionId, name: 'story drive' })],
  });
  const bySession = await call('GET', `/api/lineage/session/${sessionId}`);
  expect(bySession.body.commits.map((c: { commit_id: string }) => c.commit_id)).toEqual([second, first]);
});

it('refuses an enforcing export with an unredacted face in a pedestrian box, naming the session', async () => {
  const { db, storage } = stack.api.deps;
  const { session, frames } = await createSessionFixture(
    { db, storage },
    { frames: 1, redacted: true, session: { name: 'drive with a face left in' } },
  );
  // Audited, but the face the pass missed is not among the redacted regions.
  await db.piiAudit.create({ data: { frameId: frames[0]!.id, nFaces: 0, regions: [] } });
  await draw(frames[0]!.id, 'pedestrian', [20, 5, 30, 45]);
  stack.api.deps.config.pii.coverageGate = 'enforcing';
  try {
    const res = await call('POST', '/api/export', {
      name: 'story-enforced',
      predicate: { classes: ['person'], states: ['accepted'], session_ids: [session.id] },
    });
    expect(res.status).toBe(422);
    expect(res.body.detail).toContain('drive with a face left in');
    expect(res.body.blocking_sessions).toEqual([
      expect.objectContaining({
        session_id: session.id,
        name: 'drive with a face left in',
        uncovered_objects: 1,
      }),
    ]);
  } finally {
    stack.api.deps.config.pii.coverageGate = 'advisory';
  }
});
