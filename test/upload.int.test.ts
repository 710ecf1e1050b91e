import { createHash, randomBytes } from 'node:crypto';
import http from 'node:http';
import path from 'node:path';
import { createUserWithToken, type TestApi } from '../testkit/api';
import { startIngestStack, waitForHash, type IngestStack } from '../testkit/media/harness';
import { openEventStream } from '../testkit/sse';
import { recordHistoryIfAsked, replayRecordedHistory, scheduledActivities } from '../testkit/temporal';

/**
 * The upload group against the real MinIO and Temporal: multipart uploads with presigned part URLs
 * and real HTTP PUTs, surviving a connection dropped in the middle of a part; complete answers
 * 202 and the drive is hashed by UploadHashWorkflow `upload-<upload_id>` off the request. The
 * stack starts without a worker, so the first test sees the upload before any hash exists.
 */
let stack: IngestStack;
let api: TestApi;
let reviewer: string;
const MiB = 1024 * 1024;

beforeAll(async () => {
  stack = await startIngestStack({ worker: false, env: { APP_UPLOAD__PART_SIZE_MB: '5' } });
  api = stack.api;
  reviewer = stack.reviewer;
}, 120_000);
afterAll(async () => {
  await stack?.close();
});

const call = (path: string, body: unknown, token = reviewer) => api.call('POST', path, { token, body });
const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

async function putPart(url: string, bytes: Buffer): Promise<string> {
  const res = await fetch(url, { method: 'PUT', body: bytes });
  expect(res.status).toBe(200);
  return res.headers.get('etag')!.replace(/"/g, '');
}

/** Sends part of a body, then drops the connection, as a client losing its network would. */
function putAndDrop(url: string, bytes: Buffer, sendBytes: number): Promise<void> {
  return new Promise((resolve) => {
    const req = http.request(url, { method: 'PUT', headers: { 'content-length': String(bytes.length) } });
    req.on('error', () => resolve());
    req.write(bytes.subarray(0, sendBytes), () =>
      setTimeout(() => {
        req.destroy();
        resolve();
      }, 100),
    );
  });
}

describe('multipart upload', () => {
  const drive = randomBytes(11 * MiB);
  const parts = [drive.subarray(0, 5 * MiB), drive.subarray(5 * MiB, 10 * MiB), drive.subarray(10 * MiB)];

  it('survives a dropped connection: the store keeps the whole parts, the client re-sends the rest, the drive is hashed', async () => {
    const init = await call('/api/upload/init', {
      filename: 'my drive (1).mp4',
      content_type: 'video/mp4',
      size: drive.length,
    });
    expect(init.status).toBe(201);
    expect(init.body).toMatchObject({
      state: 'open',
      mode: 'multipart',
      part_size: 5 * MiB,
      part_count: 3,
      max_parts: 10000,
    });
    expect(init.body.object_key).toBe(`${init.body.upload_id}/my_drive__1_.mp4`);
    const id = init.body.upload_id;

    const urls = await call('/api/upload/presign-put', { upload_id: id, part_numbers: [1, 2, 3] });
    expect(urls.body.parts.map((p: { part_number: number }) => p.part_number)).toEqual([1, 2, 3]);
    expect(urls.body.uploaded).toEqual([]);
    const etag1 = await putPart(urls.body.parts[0].url, parts[0]!);
    await putAndDrop(urls.body.parts[1].url, parts[1]!, 2 * MiB);

    // Reconnected: the store holds part 1 only; part 2's half is not a part.
    const resume = await call('/api/upload/presign-put', { upload_id: id, part_numbers: [2, 3] });
    expect(resume.body.uploaded).toEqual([{ part_number: 1, etag: etag1, size: 5 * MiB }]);
    // Completing now is refused: the parts do not add up to the declared size.
    const early = await call('/api/upload/complete', { upload_id: id });
    expect(early.status).toBe(422);
    expect(early.body.detail).toMatch(/hold 5242880 bytes but the upload declared 11534336/);

    const etag2 = await putPart(resume.body.parts[0].url, parts[1]!);
    const etag3 = await putPart(resume.body.parts[1].url, parts[2]!);
    const wrong = await call('/api/upload/complete', {
      upload_id: id,
      parts: [
        { part_number: 1, etag: etag1 },
        { part_number: 2, etag: etag3 },
        { part_number: 3, etag: etag3 },
      ],
    });
    expect(wrong.status).toBe(422);
    expect(wrong.body.errors[0].field).toBe('body.parts.1.etag');

    const done = await call('/api/upload/complete', {
      upload_id: id,
      parts: [
        { part_number: 1, etag: etag1 },
        { part_number: 2, etag: etag2 },
        { part_number: 3, etag: `"${etag3}"` },
      ],
    });
    // 202 at once: the drive is assembled, its hash is not there yet (no worker runs so far).
    expect(done.status).toBe(202);
    expect(done.headers.get('location')).toBe('/api/events/jobs');
    expect(done.body).toMatchObject({
      state: 'hashing',
      size: drive.length,
      sha256: null,
      workflow_id: `upload-${id}`,
      events_url: '/api/events/jobs',
    });
    expect(await api.deps.db.upload.findUniqueOrThrow({ where: { id } })).toMatchObject({
      state: 'hashing',
      sha256: null,
    });
    const stored = await api.deps.storage.client.statObject('uploads', init.body.object_key);
    expect(stored.size).toBe(drive.length);

    // While it is hashed: ingest and dry-run refuse it by name, abort too, complete answers the same.
    for (const route of ['/api/ingest', '/api/imports/dry-run']) {
      const early = await call(route, { upload_id: id, kind: 'video' });
      expect({ route, status: early.status }).toEqual({ route, status: 409 });
      expect(early.body).toMatchObject({ upload_id: id, state: 'hashing', workflow_id: `upload-${id}` });
      expect(early.body.detail).toMatch(/still being hashed/);
    }
    expect(await api.deps.db.session.count()).toBe(0);
    expect((await call('/api/upload/abort', { upload_id: id })).status).toBe(409);
    const again = await call('/api/upload/complete', { upload_id: id });
    expect(again.status).toBe(202);
    expect(again.body).toMatchObject({ state: 'hashing', sha256: null });

    // The worker comes: the hash lands, announced on the jobs stream.
    const stream = await openEventStream(api.url, '/api/events/jobs', stack.annotator);
    await stack.startWorker();
    expect(await waitForHash(stack, id)).toEqual({ sha256: sha256(drive), size: drive.length });
    const events = await stream.readUntil((e) => e.some((x) => x.event === 'upload.hashed'), 30_000);
    expect(events.find((e) => e.event === 'upload.hashed')?.data).toMatchObject({
      upload_id: id,
      state: 'completed',
      sha256: sha256(drive),
    });

    // Completing again answers the completed upload; it is a drive now and cannot be aborted.
    const completed = await call('/api/upload/complete', { upload_id: id });
    expect(completed.status).toBe(202);
    expect(completed.body).toMatchObject({ state: 'completed', size: drive.length, sha256: sha256(drive) });
    expect((await call('/api/upload/abort', { upload_id: id })).status).toBe(409);
    expect((await call('/api/upload/presign-put', { upload_id: id, part_numbers: [1] })).status).toBe(409);
    const audit = await api.deps.db.auditLog.findMany({
      where: { subjectType: 'upload', subjectId: id },
      orderBy: { id: 'asc' },
    });
    expect(audit.map((a) => a.action)).toEqual(['upload.started', 'upload.assembled', 'upload.completed']);

    // One hashing workflow however often complete was called; its history replays.
    const handle = stack.env.client.workflow.getHandle(`upload-${id}`);
    const history = await handle.fetchHistory();
    expect(scheduledActivities(history)).toEqual(['hashUpload']);
    const file = path.join(__dirname, 'histories/upload-hash.json');
    await recordHistoryIfAsked(file, () => Promise.resolve(history));
    await expect(
      replayRecordedHistory(file, require.resolve('../workflows'), 'recorded'),
    ).resolves.toBeUndefined();
  });

  it('takes the parts from the store when the client does not name them', async () => {
    const init = await call('/api/upload/init', { filename: 'b.bin' });
    const urls = await call('/api/upload/presign-put', {
      upload_id: init.body.upload_id,
      part_numbers: [1, 2],
    });
    await putPart(urls.body.parts[0].url, parts[0]!);
    await putPart(urls.body.parts[1].url, parts[2]!);
    expect((await call('/api/upload/complete', { upload_id: init.body.upload_id })).status).toBe(202);
    await waitForHash(stack, init.body.upload_id);
    const done = await call('/api/upload/complete', { upload_id: init.body.upload_id });
    expect(done.body).toMatchObject({
      state: 'completed',
      size: 6 * MiB,
      sha256: sha256(Buffer.concat([parts[0]!, parts[2]!])),
    });
  });

  it('abort deletes the parts and closes the upload', async () => {
    const init = await call('/api/upload/init', { filename: 'c.bin' });
    const urls = await call('/api/upload/presign-put', { upload_id: init.body.upload_id, part_numbers: [1] });
    await putPart(urls.body.parts[0].url, parts[2]!);
    const aborted = await call('/api/upload/abort', { upload_id: init.body.upload_id });
    expect(aborted.body.state).toBe('aborted');
    const after = await fetch(urls.body.parts[0].url, { method: 'PUT', body: parts[2]! });
    expect(after.status).toBe(404); // NoSuchUpload: the store forgot it
    expect((await call('/api/upload/complete', { upload_id: init.body.upload_id })).status).toBe(409);
    expect((await call('/api/upload/abort', { upload_id: init.body.upload_id })).status).toBe(200);
  });
});

describe('single presigned PUT (sign)', () => {
  it('uploads a small drive in one PUT and hashes it after complete', async () => {
    const bytes = randomBytes(300_000);
    const signed = await call('/api/upload/sign', { filename: 'small.mp4', size: bytes.length });
    expect(signed.status).toBe(201);
    expect(signed.body).toMatchObject({ mode: 'single', method: 'PUT', state: 'open' });
    const nothing = await call('/api/upload/complete', { upload_id: signed.body.upload_id });
    expect(nothing.status).toBe(422);
    expect(nothing.body.detail).toMatch(/nothing was uploaded/);
    expect((await fetch(signed.body.url, { method: 'PUT', body: bytes })).status).toBe(200);
    const assembled = await call('/api/upload/complete', { upload_id: signed.body.upload_id });
    expect(assembled.status).toBe(202);
    expect(assembled.body).toMatchObject({ state: 'hashing', size: bytes.length });
    await waitForHash(stack, signed.body.upload_id);
    const done = await call('/api/upload/complete', { upload_id: signed.body.upload_id });
    expect(done.body).toMatchObject({ state: 'completed', size: bytes.length, sha256: sha256(bytes) });
    expect(
      (await call('/api/upload/presign-put', { upload_id: signed.body.upload_id, part_numbers: [1] })).status,
    ).toBe(409);
  });
});

describe('hostile or malformed requests', () => {
  it('answers problem+json naming the field, and leaves nothing behind', async () => {
    const before = await api.deps.db.upload.count();
    const cases: Array<[string, unknown, number, string?]> = [
      ['/api/upload/init', { filename: '' }, 422, 'body.filename'],
      ['/api/upload/init', { filename: 'a', size: -1 }, 422, 'body.size'],
      ['/api/upload/init', { filename: 'a', extra: 1 }, 422, 'body.extra'],
      ['/api/upload/init', { filename: 'a', content_type: 'not a mime' }, 422, 'body.content_type'],
      ['/api/upload/sign', { filename: 'a', size: 6 * 1024 ** 3 }, 422, 'body.size'],
      [
        '/api/upload/presign-put',
        { upload_id: '00000000-0000-4000-8000-000000000000', part_numbers: [0] },
        422,
        'body.part_numbers.0',
      ],
      [
        '/api/upload/presign-put',
        { upload_id: '00000000-0000-4000-8000-000000000000', part_numbers: [1] },
        404,
      ],
      ['/api/upload/complete', { upload_id: 'nope' }, 422, 'body.upload_id'],
    ];
    for (const [path, body, status, field] of cases) {
      const res = await call(path, body);
      expect({ path, status: res.status }).toEqual({ path, status });
      expect(res.headers.get('content-type')).toMatch(/application\/problem\+json/);
      if (field) expect(res.body.errors.map((e: { field: string }) => e.field)).toContain(field);
    }
    const annotator = (await createUserWithToken(api.deps, 'annotator')).token;
    expect((await call('/api/upload/init', { filename: 'a' }, annotator)).status).toBe(403);
    expect(await api.deps.db.upload.count()).toBe(before);
  });
});
