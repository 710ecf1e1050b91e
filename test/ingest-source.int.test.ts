import { execFileSync } from 'node:child_process';
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import { removeSourceCopy } from '../activities/ingest/storage';
import { sourceCopyKey } from '../core/sources/ingest';
import { ingestAndWait, objectKeys, startIngestStack, type IngestStack } from '../testkit/media/harness';
import { makeDriveVideo } from '../testkit/media/video';
import { localStackEnv } from '../testkit/stack';
import { recordHistoryIfAsked, replayRecordedHistory, scheduledActivities } from '../testkit/temporal';
import { capturedLogger, expectSecretsKept } from './helpers/identity';

/**
 * Ingest from a registered source (docs/ingest.md "From a registered source"): a drive in a second
 * bucket on the stack's MinIO, registered as an S3 source, ingested through POST /api/ingest. The
 * workflow's first step copies it into the uploads bucket; the pipeline then runs as for an
 * upload, and the copy is gone when the ingest ends, completed or failed. The requests only check
 * (one stat): unknown source, absent key, key outside the prefix, too large, wrong role.
 */
const logs = capturedLogger();
const env = localStackEnv();
const secret = env.APP_STORAGE__SECRET_KEY!;
const run = `${process.pid}-${Date.now()}`;
const bucket = `src-ingest-${run}`;
const responses: string[] = [];
let stack: IngestStack;
let sourceId: string;
/** The first three seconds of the test drive: nine distinct frames at 3 fps (testkit/media/video.ts). */
let clip: Buffer;

const call = async (method: string, url: string, token: string | undefined, body?: unknown) => {
  const res = await stack.api.call(method, url, { token, body });
  responses.push(JSON.stringify(res.body));
  return res;
};
const ingest = (body: Record<string, unknown>, token = stack.reviewer) =>
  call('POST', '/api/ingest', token, body);
/** Everything the uploads bucket holds under the folder of source copies. */
const copies = () => objectKeys(stack, 'uploads', 'source-copies/');

beforeAll(async () => {
  // At most 1 MiB from a source, so the size refusal is cheap to provoke.
  stack = await startIngestStack({ env: { APP_INGEST__SOURCE_MAX_MB: '1' }, logger: logs.logger });
  const full = makeDriveVideo(stack.dir);
  const cut = path.join(stack.dir, 'clip.mp4');
  execFileSync('/usr/bin/ffmpeg', ['-v', 'error', '-y', '-i', full, '-t', '3', '-c:v', 'libx264', cut]);
  clip = fs.readFileSync(cut);
  const jpeg = await sharp({ create: { width: 64, height: 48, channels: 3, background: '#336699' } })
    .jpeg()
    .toBuffer();
  const client = stack.api.deps.storage.client;
  await client.makeBucket(bucket);
  const put = (key: string, data: Buffer) => client.putObject(bucket, key, data, data.length);
  await put('drives/clip.mp4', clip);
  // Other bytes than clip.mp4 (a byte more), so that it is no duplicate of it.
  await put('drives/padded.mp4', Buffer.concat([clip, Buffer.from([0])]));
  await put('drives/big.mp4', Buffer.concat([clip, randomBytes(1024 * 1024)]));
  await put('drives/empty.mp4', Buffer.alloc(0));
  await put('drives/loose/0001.jpg', jpeg);
  await put('elsewhere/clip.mp4', clip);
  const made = await call('POST', '/api/integrations/sources', stack.admin, {
    kind: 's3',
    name: `drives ${run}`,
    endpoint: `http://${env.APP_STORAGE__ENDPOINT}:${env.APP_STORAGE__PORT}`,
    bucket,
    prefix: 'drives/',
    access_key_id: env.APP_STORAGE__ACCESS_KEY,
    secret_access_key: secret,
  });
  expect(made.status).toBe(201);
  sourceId = made.body.id as string;
});

afterAll(async () => {
  const client = stack?.api.deps.storage.client;
  if (client && (await client.bucketExists(bucket))) {
    const keys: string[] = [];
    for await (const o of client.listObjectsV2(bucket, '', true)) if (o.name) keys.push(o.name);
    await client.removeObjects(bucket, keys);
    await client.removeBucket(bucket);
  }
  await stack?.close();
});

describe('a video in a registered S3 source', () => {
  let result: Awaited<ReturnType<typeof ingestAndWait>>;

  beforeAll(async () => {
    result = await ingestAndWait(stack, { source_id: sourceId, key: 'drives/clip.mp4', kind: 'video' });
  });

  it('is ingested: its frames are in the frames bucket, decoded from the copied bytes', async () => {
    if (!result.outcome.ok) throw result.outcome.error;
    const { db, storage } = stack.api.deps;
    const sessionId = result.started.session_id;
    const session = await db.session.findUniqueOrThrow({ where: { id: sessionId } });
    expect(session).toMatchObject({ state: 'ready', frameCount: 9, duplicateCount: 0, name: 'clip.mp4' });
    const frames = await db.frame.findMany({ where: { sessionId }, orderBy: { index: 'asc' } });
    expect(frames.map((f) => f.index)).toEqual([...Array(9).keys()]);
    expect(await objectKeys(stack, 'frames', `${sessionId}/`)).toEqual(frames.map((f) => f.uri).sort());
    expect(await objectKeys(stack, 'redacted', `${sessionId}/`)).toHaveLength(9);
    for (const frame of [frames[0]!, frames[8]!]) {
      const stream = await storage.client.getObject(storage.bucket('frames'), frame.uri);
      const parts: Buffer[] = [];
      for await (const part of stream) parts.push(part as Buffer);
      expect(await sharp(Buffer.concat(parts)).metadata()).toMatchObject({
        format: 'jpeg',
        width: 640,
        height: 360,
      });
    }
  });

  it('records where the drive came from: the source and key on the session and the job, the hash of its bytes', async () => {
    const { db } = stack.api.deps;
    const sessionId = result.started.session_id;
    const session = await db.session.findUniqueOrThrow({ where: { id: sessionId } });
    expect(session.sourceUri).toBe(`source:${sourceId}/drives/clip.mp4`);
    expect(session.contentHash).toBe(createHash('sha256').update(clip).digest('hex'));
    const job = await call('GET', `/api/imports/${result.started.job_id}`, stack.annotator);
    expect(job.body).toMatchObject({
      state: 'completed',
      source: { source_id: sourceId, source_name: `drives ${run}`, bucket, key: 'drives/clip.mp4' },
    });
    const hashed = await db.auditLog.findFirstOrThrow({
      where: { subjectId: sessionId, action: 'ingest.hashed' },
    });
    expect(hashed.detail).toMatchObject({ source_id: sourceId, key: 'drives/clip.mp4', size: clip.length });
  });

  it('copies first, then runs the pipeline unchanged, and leaves no copy behind', async () => {
    const history = await stack.env.client.workflow.getHandle(result.started.workflow_id).fetchHistory();
    expect(scheduledActivities(history)).toEqual([
      'copySourceObject',
      'probeDrive',
      'extractFrames',
      'gateFrameQuality',
      'dropNearDuplicates',
      'registerFrames',
      'redactPii',
      'inspectSessionHealth',
      'completeIngest',
    ]);
    // The source's secret is opened by the activity: never in the workflow's input or history.
    // Payloads are base64 in the history's JSON form: decoded, they are the workflow's and steps' data.
    const payloads: string[] = [];
    JSON.stringify(history, (key, v: unknown) => {
      if (key === 'data' && typeof v === 'string') payloads.push(Buffer.from(v, 'base64').toString('utf8'));
      return v;
    });
    const decoded = payloads.join('\n');
    expect(decoded).toContain(`"sourceObject":{"sourceId":"${sourceId}","key":"drives/clip.mp4"}`);
    expect(decoded).not.toContain(secret);
    expect(await copies()).toEqual([]);
    const file = path.join(__dirname, 'histories/ingest-source.json');
    await recordHistoryIfAsked(file, () => Promise.resolve(history));
    await expect(
      replayRecordedHistory(file, require.resolve('../workflows'), 'recorded'),
    ).resolves.toBeUndefined();
  });

  it('fails the same bytes a second time after copying them, naming the first session, and removes the copy', async () => {
    const again = await ingestAndWait(stack, { source_id: sourceId, key: 'drives/clip.mp4', kind: 'video' });
    expect(again.outcome.ok).toBe(false);
    const { db } = stack.api.deps;
    const session = await db.session.findUniqueOrThrow({ where: { id: again.started.session_id } });
    expect(session.state).toBe('failed');
    expect(session.error).toContain(`already ingested as session ${result.started.session_id}`);
    expect(await db.frame.count({ where: { sessionId: session.id } })).toBe(0);
    expect(await objectKeys(stack, 'frames', `${session.id}/`)).toEqual([]);
    expect(await copies()).toEqual([]);
  });

  it('fails a drive that is not what it was declared as, after the copy, and removes the copy', async () => {
    const wrong = await ingestAndWait(stack, { source_id: sourceId, key: 'drives/padded.mp4', kind: 'bag' });
    expect(wrong.outcome.ok).toBe(false);
    const session = await stack.api.deps.db.session.findUniqueOrThrow({
      where: { id: wrong.started.session_id },
    });
    expect(session.error).toMatch(/declared as kind "bag"/);
    expect(session.contentHash).toBeNull();
    expect(await copies()).toEqual([]);
  });
});

describe('dry-run of a source object', () => {
  it('judges the object by its first bytes, reading nothing else', async () => {
    const ok = await call('POST', '/api/imports/dry-run', stack.reviewer, {
      source_id: sourceId,
      key: 'drives/clip.mp4',
      kind: 'video',
    });
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ ok: true, problem: null, size_bytes: clip.length, sha256: null });
    const wrong = await call('POST', '/api/imports/dry-run', stack.reviewer, {
      source_id: sourceId,
      key: 'drives/clip.mp4',
      kind: 'bag',
    });
    expect(wrong.body).toMatchObject({ ok: false, problem: expect.stringMatching(/declared as kind "bag"/) });
  });
});

describe('refusals, before anything is started or copied', () => {
  const unknown = '00000000-0000-4000-8000-000000000000';

  it.each([
    ['an unknown source', () => ({ source_id: unknown, key: 'drives/clip.mp4' }), 404, /no source/, null],
    [
      'an absent key',
      () => ({ source_id: sourceId, key: 'drives/nope.mp4' }),
      404,
      /no object drives\/nope\.mp4 in source/,
      null,
    ],
    [
      'a key outside the prefix',
      () => ({ source_id: sourceId, key: 'elsewhere/clip.mp4' }),
      422,
      /outside the source's prefix "drives\/"/,
      'body.key',
    ],
    [
      'a dot segment',
      () => ({ source_id: sourceId, key: 'drives/../elsewhere/clip.mp4' }),
      422,
      /"\.\." segment/,
      'body.key',
    ],
    ['a folder', () => ({ source_id: sourceId, key: 'drives/loose/' }), 422, /names a folder/, 'body.key'],
    [
      'a loose frame',
      () => ({ source_id: sourceId, key: 'drives/loose/0001.jpg' }),
      422,
      /one frame image/,
      'body.key',
    ],
    ['an empty object', () => ({ source_id: sourceId, key: 'drives/empty.mp4' }), 422, /is empty/, null],
    [
      'an object over the size limit',
      () => ({ source_id: sourceId, key: 'drives/big.mp4' }),
      422,
      /over the 1 MiB .*APP_INGEST__SOURCE_MAX_MB/,
      null,
    ],
    ['source_id without key', () => ({ source_id: sourceId }), 422, /./, 'body.key'],
    ['key without source_id', () => ({ key: 'drives/clip.mp4', path: '/tmp' }), 422, /./, 'body.key'],
    [
      'source_id beside upload_id',
      () => ({ source_id: sourceId, key: 'drives/clip.mp4', upload_id: unknown }),
      422,
      /./,
      'body.upload_id',
    ],
  ] as const)('%s', async (_what, body, status, detail, field) => {
    const sessions = await stack.api.deps.db.session.count();
    const res = await ingest({ ...body(), kind: 'video' });
    expect(res.status).toBe(status);
    expect(res.body.detail).toMatch(detail);
    if (field) expect((res.body.errors ?? []).map((e: { field: string }) => e.field)).toContain(field);
    expect(await stack.api.deps.db.session.count()).toBe(sessions);
    expect(await copies()).toEqual([]);
  });

  it('refuses by name a source of a kind that cannot be read', async () => {
    const gcs = await stack.api.deps.db.integrationSource.create({
      data: { name: `gcs ${run}`, kind: 'gcs', config: { bucket: 'x' } },
    });
    const res = await ingest({ source_id: gcs.id, key: 'drives/clip.mp4', kind: 'video' });
    expect(res.status).toBe(422);
    expect(res.body.detail).toMatch(/kind gcs, which is not served: only S3-compatible buckets/);
  });

  it('answers 401 without a token and 403 to an annotator', async () => {
    const body = { source_id: sourceId, key: 'drives/clip.mp4', kind: 'video' };
    expect((await call('POST', '/api/ingest', undefined, body)).status).toBe(401);
    expect((await ingest(body, stack.annotator)).status).toBe(403);
  });
});

describe('the copy folder', () => {
  it('is emptied of a multipart copy a crashed worker left unfinished', async () => {
    const { storage } = stack.api.deps;
    const sessionId = randomUUID();
    const key = sourceCopyKey(sessionId);
    // Two attempts that each died with a part stored.
    for (const attempt of [1, 2]) {
      const uploadId = await storage.client.initiateNewMultipartUpload(storage.bucket('uploads'), key, {});
      await storage.client.uploadPart(
        {
          bucketName: storage.bucket('uploads'),
          objectName: key,
          uploadID: uploadId,
          partNumber: 1,
          headers: {},
        },
        Buffer.alloc(1024, attempt),
      );
    }
    const unfinished = async () =>
      (
        await storage.client.listIncompleteUploadsQuery(storage.bucket('uploads'), key, '', '', '')
      ).uploads.map((u) => u.key);
    expect(await unfinished()).toEqual([key, key]);
    await removeSourceCopy(storage, sessionId);
    expect(await unfinished()).toEqual([]);
  });
});

it('never logs or answers the source secret', () => {
  expectSecretsKept(logs.text(), responses, { never: [secret], shownOnce: [] });
});
