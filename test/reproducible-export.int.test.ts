import { listKeys } from '../activities/ingest/storage';
import { startIngestStack, type IngestStack } from '../testkit/media/harness';
import { createExportableDrive } from '../testkit/session-fixtures';

/**
 * `POST /api/hardening/reproducible` for a dataset commit on the real stack (PostgreSQL, Temporal,
 * MinIO, the cpu worker; docs/hardening.md "Reproducible"): the export is rebuilt by the export
 * workflow into a scratch prefix and compared file by file with the commit's manifest. Unchanged
 * data rebuilds to the same commit id and leaves nothing behind; an edited box, a withdrawn
 * drive and a tampered stored file are each named.
 */
let stack: IngestStack;
let carId: number;

beforeAll(async () => {
  stack = await startIngestStack();
  carId = (await stack.api.deps.db.ontologyClass.findFirstOrThrow({ where: { name: 'car' } })).id;
}, 120_000);

afterAll(async () => {
  await stack?.close();
});

const call = (method: string, path: string, token: string, body?: unknown) =>
  stack.api.call(method, path, { token, body });

const drive = (name: string) => createExportableDrive(stack.api.deps, { name, frames: 2, classId: carId });

interface Difference {
  path: string;
  original: unknown;
  now: unknown;
}

/** Starts a commit's rebuild, waits for its workflow, and answers the job as the API shows it. */
async function rebuild(commitId: string) {
  const res = await call('POST', '/api/hardening/reproducible', stack.reviewer, { commit_id: commitId });
  expect([res.status, res.body.detail]).toEqual([202, undefined]);
  expect(res.headers.get('location')).toBe(`/api/exports/${res.body.job_id}/progress`);
  await stack.env.client.workflow.getHandle(res.body.workflow_id).result();
  const job = await call('GET', res.headers.get('location')!, stack.reviewer);
  expect(job.status).toBe(200);
  return { started: res.body, job: job.body };
}

const paths = (differences: Difference[]) => differences.map((d) => d.path);

describe('reproducing a dataset commit by rebuilding its export', () => {
  let kept: Awaited<ReturnType<typeof drive>>;
  let other: Awaited<ReturnType<typeof drive>>;
  let commit: { commitId: string; prefix: string; files: unknown };

  beforeAll(async () => {
    kept = await drive('kept drive');
    other = await drive('other drive');
    const res = await call('POST', '/api/export', stack.reviewer, {
      name: 'reproduced',
      formats: ['coco', 'yolo', 'parquet'],
      predicate: { session_ids: [kept.sessionId, other.sessionId] },
      split: { seed: 3, train: 1, val: 0, test: 0 },
    });
    expect([res.status, res.body.detail]).toEqual([202, undefined]);
    const outcome = (await stack.env.client.workflow.getHandle(res.body.workflow_id).result()) as {
      commit_id: string;
    };
    commit = await stack.api.deps.db.datasetCommit.findUniqueOrThrow({
      where: { commitId: outcome.commit_id },
    });
  });

  it('rebuilds unchanged data to the same files and commit id, records no commit and leaves no scratch file', async () => {
    const { db, storage } = stack.api.deps;
    const commitsBefore = await db.datasetCommit.count();
    const { started, job } = await rebuild(commit.commitId);
    expect(started).toMatchObject({
      state: 'running',
      subject: { kind: 'commit', id: commit.commitId, name: 'reproduced', version: 1 },
    });
    expect(job).toMatchObject({ state: 'succeeded', commit_id: null, formats: ['coco', 'yolo', 'parquet'] });
    const files = commit.files as Array<{ path: string; size: number }>;
    expect(job.reproduces).toMatchObject({
      commit_id: commit.commitId,
      check_id: started.check_id,
      result: {
        reproduced: true,
        differences: [],
        differences_total: 0,
        now: {
          files: files.length,
          signature: 'valid',
          rebuild: {
            job_id: started.job_id,
            commit_id: commit.commitId,
            files: files.length,
            bytes: files.reduce((n, f) => n + f.size, 0),
            sessions_left_out: [],
          },
        },
      },
    });
    // Every kind of file took part: images, labels, Parquet parts, COCO, data.yaml, the datasheet.
    expect(new Set(files.map((f) => f.path.split('/')[0]))).toEqual(
      new Set(['annotations', 'data.yaml', 'datasheet.json', 'datasheet.md', 'images', 'labels', 'parquet']),
    );
    expect(await db.datasetCommit.count()).toBe(commitsBefore);
    expect(await listKeys(storage, storage.bucket('exports'), `jobs/${started.job_id}/`)).toEqual([]);
    expect((await listKeys(storage, storage.bucket('exports'), commit.prefix)).length).toBe(files.length);
    const check = await db.governanceRun.findUniqueOrThrow({ where: { id: started.check_id } });
    expect(check).toMatchObject({
      kind: 'reproducible',
      status: 'completed',
      params: { subject: 'commit', id: commit.commitId, job_id: started.job_id },
    });
    expect(job.reproduces.result).toEqual({
      check_id: check.id,
      ...(check.result as object),
      created_at: check.createdAt.toISOString(),
    });
    const audits = await db.auditLog.findMany({
      where: { subjectId: commit.commitId, action: { startsWith: 'hardening.reproducible' } },
      orderBy: { createdAt: 'asc' },
    });
    expect(audits.map((a) => a.action)).toEqual([
      'hardening.reproducible_started',
      'hardening.reproducible_checked',
    ]);
    expect(audits[1]!.detail).toMatchObject({ check_id: started.check_id, reproduced: true, differences: 0 });
  });

  it('names the files an edited box changes, and only those', async () => {
    const { db } = stack.api.deps;
    const frame = kept.frames[0]!;
    const object = await db.annoObject.findFirstOrThrow({ where: { frameId: frame.id } });
    await db.annoObject.update({ where: { id: object.id }, data: { bbox: [6, 6, 44, 34] } });
    try {
      const { job } = await rebuild(commit.commitId);
      const result = job.reproduces.result;
      expect(result.reproduced).toBe(false);
      expect(result.now.rebuild.commit_id).not.toBe(commit.commitId);
      const changed = paths(result.differences);
      expect(changed).toEqual(
        expect.arrayContaining([
          'annotations/instances_train.json.sha256',
          `labels/train/${frame.id}.txt.sha256`,
          expect.stringMatching(/^parquet\/objects\/part-\d+\.parquet\.sha256$/),
        ]),
      );
      // The other frame's labels, every image and the stored files are as they were.
      expect(changed.filter((p) => p.startsWith('images/') || p.startsWith('stored/'))).toEqual([]);
      expect(changed).not.toContain(`labels/train/${kept.frames[1]!.id}.txt.sha256`);
    } finally {
      await db.annoObject.update({ where: { id: object.id }, data: { bbox: [4, 4, 40, 30] } });
    }
  });

  it('names a stored file altered after the commit, while the rebuild still matches the manifest', async () => {
    const { storage } = stack.api.deps;
    const bucket = storage.bucket('exports');
    const key = `${commit.prefix}datasheet.md`;
    const original = await storage.client.getObject(bucket, key);
    const bytes = Buffer.concat(await original.toArray());
    await storage.client.putObject(bucket, key, Buffer.from('altered'));
    try {
      const { job } = await rebuild(commit.commitId);
      expect(job.reproduces.result).toMatchObject({ reproduced: false, differences_total: 2 });
      expect(paths(job.reproduces.result.differences)).toEqual([
        'stored/datasheet.md.sha256',
        'stored/datasheet.md.size',
      ]);
    } finally {
      await storage.client.putObject(bucket, key, bytes);
    }
  });

  it('leaves out a drive whose consent was withdrawn, and says so', async () => {
    const set = await call('POST', '/api/govern/consent', stack.admin, {
      session_id: other.sessionId,
      consent_status: 'withdrawn',
      legal_basis: 'data subject request',
    });
    expect(set.status).toBe(200);
    const { job } = await rebuild(commit.commitId);
    const result = job.reproduces.result;
    expect(result.reproduced).toBe(false);
    expect(result.now.rebuild.sessions_left_out).toEqual([other.sessionId]);
    expect(result.now.rebuild.consent_excluded).toEqual([
      expect.objectContaining({ session_id: other.sessionId, consent_status: 'withdrawn' }),
    ]);
    for (const f of other.frames)
      expect(result.differences).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ path: `images/train/${f.id}.jpg`, now: null }),
          expect.objectContaining({ path: `labels/train/${f.id}.txt`, now: null }),
        ]),
      );
  });

  it('is refused while the kill switch is engaged, leaving no job and no check', async () => {
    const { db } = stack.api.deps;
    const engage = await call('POST', '/api/govern/killswitch/engage', stack.admin, { reason: 'incident 7' });
    expect(engage.status).toBe(200);
    try {
      const [jobs, checks] = [await db.exportJob.count(), await db.governanceRun.count()];
      const res = await call('POST', '/api/hardening/reproducible', stack.reviewer, {
        commit_id: commit.commitId,
      });
      expect(res.status).toBe(409);
      expect(res.headers.get('content-type')).toMatch(/application\/problem\+json/);
      expect(res.body.detail).toMatch(/incident 7/);
      expect([await db.exportJob.count(), await db.governanceRun.count()]).toEqual([jobs, checks]);
    } finally {
      expect((await call('POST', '/api/govern/killswitch/release', stack.admin)).status).toBe(200);
    }
  });
});
