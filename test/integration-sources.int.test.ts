import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { openSecret } from '../core/sealed';
import { useApiForFile } from '../testkit/api';
import { writeMcap, writeRos1Bag, type BagMessage } from '../testkit/media/bag';
import { makeZip } from '../testkit/media/zip';
import { localStackEnv } from '../testkit/stack';
import { capturedLogger, expectSecretsKept } from './helpers/identity';

/**
 * Sources against a real S3 store: a second bucket on the stack's MinIO, made and filled by this
 * file, registered and previewed through the API (docs/integrations.md).
 */
const logs = capturedLogger();
const ctx = useApiForFile({}, logs.logger);
const stack = localStackEnv();
/** A secret key the store refuses: a secret all the same, which must not be logged either. */
const wrongSecret = `wrong-secret-${randomBytes(12).toString('hex')}`;
/** Every response body read, searched for the secret keys at the end. */
const responses: string[] = [];
const endpoint = `http://${stack.APP_STORAGE__ENDPOINT}:${stack.APP_STORAGE__PORT}`;
const run = `${process.pid}-${Date.now()}`;
const bucket = `src-${run}`;
const vanishing = `src-gone-${run}`;
const s3 = (overrides: Record<string, unknown> = {}) => ({
  kind: 's3',
  name: `src ${run} ${Math.random()}`,
  endpoint,
  bucket,
  prefix: 'drives/',
  access_key_id: stack.APP_STORAGE__ACCESS_KEY,
  secret_access_key: stack.APP_STORAGE__SECRET_KEY,
  ...overrides,
});

const call = async (method: string, url: string, token?: string, body?: unknown) => {
  const res = await ctx.api.call(method, url, { token, body });
  responses.push(JSON.stringify(res.body));
  return res;
};

/** One message on a text topic: a real bag (ROS 1 or MCAP), which the ingest would take as kind `bag`. */
const chatter: BagMessage[] = [
  {
    topic: '/chatter',
    type: 'std_msgs/String',
    timeNs: 1_700_000_000_000_000_000n,
    message: { data: 'hello' },
  },
];

/** What the bucket holds, by key, and what the preview must say each one is. */
let objects: Array<{ key: string; data: Buffer; ingest_kind: string | null; format: string | null }>;

beforeAll(async () => {
  const client = ctx.api.deps.storage.client;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'drivelab-sources-'));
  const clip = path.join(dir, 'clip.mp4');
  execFileSync('ffmpeg', [
    ...['-loglevel', 'error', '-f', 'lavfi', '-i', 'testsrc2=size=160x120:rate=5', '-t', '1'],
    ...['-c:v', 'libx264', '-pix_fmt', 'yuv420p', clip],
  ]);
  const jpeg = await sharp({ create: { width: 64, height: 48, channels: 3, background: '#336699' } })
    .jpeg()
    .toBuffer();
  objects = [
    { key: 'drives/a-run.bag', data: writeRos1Bag(chatter), ingest_kind: 'bag', format: 'ROS 1 bag' },
    { key: 'drives/b-run.mcap', data: await writeMcap(chatter), ingest_kind: 'bag', format: 'MCAP' },
    {
      key: 'drives/c-clip.mp4',
      data: fs.readFileSync(clip),
      ingest_kind: 'video',
      format: 'mp4/mov (ISO BMFF)',
    },
    {
      key: 'drives/d-frames.zip',
      data: makeZip([{ name: '0001.jpg', data: jpeg }]),
      ingest_kind: 'frames',
      format: 'zip (of frames)',
    },
    { key: 'drives/e-loose/0001.jpg', data: jpeg, ingest_kind: 'frames', format: 'image/jpeg' },
    { key: 'drives/f-notes.txt', data: Buffer.from('calibration notes\n'), ingest_kind: null, format: null },
  ];
  fs.rmSync(dir, { recursive: true, force: true });
  for (const name of [bucket, vanishing]) await client.makeBucket(name);
  for (const o of objects) await client.putObject(bucket, o.key, o.data, o.data.length);
  await client.putObject(bucket, 'elsewhere/outside.bag', objects[0]!.data, objects[0]!.data.length);
  await client.putObject(vanishing, 'drives/x.bag', objects[0]!.data, objects[0]!.data.length);
});

afterAll(async () => {
  const client = ctx.api.deps.storage.client;
  for (const name of [bucket, vanishing]) {
    if (!(await client.bucketExists(name))) continue;
    const keys: string[] = [];
    for await (const o of client.listObjectsV2(name, '', true)) if (o.name) keys.push(o.name);
    await client.removeObjects(name, keys);
    await client.removeBucket(name);
  }
});

describe('who may call', () => {
  const id = '00000000-0000-4000-8000-000000000000';
  it.each([
    ['GET', '/api/integrations/sources', 'annotator'],
    ['GET', `/api/integrations/sources/${id}/preview`, 'annotator'],
    ['POST', '/api/integrations/sources', 'reviewer'],
    ['DELETE', `/api/integrations/sources/${id}`, 'reviewer'],
  ] as const)('%s %s answers 401 without a token and 403 to %s', async (method, url, below) => {
    expect((await call(method, url, undefined, method === 'POST' ? s3() : undefined)).status).toBe(401);
    expect((await call(method, url, ctx.token[below], method === 'POST' ? s3() : undefined)).status).toBe(
      403,
    );
  });
});

describe('an S3 source', () => {
  it('is registered after one listing, keeps its secret sealed, and never answers it', async () => {
    const res = await call('POST', '/api/integrations/sources', ctx.token.admin, s3({ name: `main ${run}` }));
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      name: `main ${run}`,
      kind: 's3',
      endpoint,
      bucket,
      prefix: 'drives/',
      region: 'us-east-1',
      access_key_id: stack.APP_STORAGE__ACCESS_KEY,
      force_path_style: true,
    });
    const secret = stack.APP_STORAGE__SECRET_KEY!;
    expect(JSON.stringify(res.body)).not.toContain(secret);
    const listed = await call('GET', '/api/integrations/sources', ctx.token.reviewer);
    expect(listed.body.items.map((s: { id: string }) => s.id)).toContain(res.body.id);
    expect(JSON.stringify(listed.body)).not.toContain(secret);
    const row = await ctx.api.deps.db.integrationSource.findUniqueOrThrow({ where: { id: res.body.id } });
    expect(JSON.stringify(row)).not.toContain(secret);
    expect(openSecret(ctx.api.deps.config.auth.sealingKey, row.secretCipher!)).toBe(secret);
  });

  it('previews the keys under its prefix with their sizes and what the ingest would take each as', async () => {
    const made = await call('POST', '/api/integrations/sources', ctx.token.admin, s3());
    const res = await call('GET', `/api/integrations/sources/${made.body.id}/preview`, ctx.token.reviewer);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ source_id: made.body.id, bucket, prefix: 'drives/', truncated: false });
    expect(
      res.body.keys.map((k: Record<string, unknown>) => [k.key, k.size, k.ingest_kind, k.format]),
    ).toEqual(objects.map((o) => [o.key, o.data.length, o.ingest_kind, o.format]));
    expect(res.body.ingestable).toBe(5);

    const firstTwo = await call(
      'GET',
      `/api/integrations/sources/${made.body.id}/preview?limit=2`,
      ctx.token.reviewer,
    );
    expect(firstTwo.body.keys.map((k: { key: string }) => k.key)).toEqual([
      'drives/a-run.bag',
      'drives/b-run.mcap',
    ]);
    expect(firstTwo.body.truncated).toBe(true);
  });

  it('refuses, at registration and naming what the store said, a wrong key, a missing bucket and an endpoint that does not answer', async () => {
    const closed = await new Promise<number>((resolve) => {
      const server = net.createServer().listen(0, '127.0.0.1', () => {
        const { port } = server.address() as net.AddressInfo;
        server.close(() => resolve(port));
      });
    });
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ access_key_id: `nobody-${run}` }, /could not be listed: InvalidAccessKeyId/],
      [{ secret_access_key: wrongSecret }, /could not be listed: SignatureDoesNotMatch/],
      [{ bucket: `absent-${run}` }, /could not be listed: NoSuchBucket/],
      [{ endpoint: `http://127.0.0.1:${closed}` }, /could not be listed: .*ECONNREFUSED/],
    ];
    for (const [overrides, detail] of cases) {
      const res = await call('POST', '/api/integrations/sources', ctx.token.admin, s3(overrides));
      expect({ status: res.status, detail: res.body.detail }).toEqual({
        status: 422,
        detail: expect.stringMatching(detail),
      });
    }
    const names = (await ctx.api.deps.db.integrationSource.findMany()).map((s) => s.config);
    expect(names).not.toContainEqual(expect.objectContaining({ bucket: `absent-${run}` }));
  });

  it('refuses a second source of the same name', async () => {
    const body = s3({ name: `twice ${run}` });
    expect((await call('POST', '/api/integrations/sources', ctx.token.admin, body)).status).toBe(201);
    const again = await call('POST', '/api/integrations/sources', ctx.token.admin, body);
    expect(again.status).toBe(409);
    expect(again.body.detail).toBe(`a source named twice ${run} exists already`);
  });

  it('answers 503 naming the store error when a registered bucket has gone', async () => {
    const made = await call('POST', '/api/integrations/sources', ctx.token.admin, s3({ bucket: vanishing }));
    expect(made.status).toBe(201);
    const client = ctx.api.deps.storage.client;
    await client.removeObject(vanishing, 'drives/x.bag');
    await client.removeBucket(vanishing);
    const res = await call('GET', `/api/integrations/sources/${made.body.id}/preview`, ctx.token.reviewer);
    expect(res.status).toBe(503);
    expect(res.body.detail).toMatch(
      new RegExp(`bucket ${vanishing} at ${endpoint}\\) did not answer: NoSuchBucket`),
    );
  });

  it('is forgotten on delete while its bucket keeps every object', async () => {
    const made = await call('POST', '/api/integrations/sources', ctx.token.admin, s3());
    const res = await call('DELETE', `/api/integrations/sources/${made.body.id}`, ctx.token.admin);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ id: made.body.id, deleted: true });
    expect((await call('DELETE', `/api/integrations/sources/${made.body.id}`, ctx.token.admin)).status).toBe(
      404,
    );
    expect(
      (await call('GET', `/api/integrations/sources/${made.body.id}/preview`, ctx.token.reviewer)).status,
    ).toBe(404);
    const keys: string[] = [];
    for await (const o of ctx.api.deps.storage.client.listObjectsV2(bucket, '', true))
      if (o.name) keys.push(o.name);
    expect(keys.sort()).toEqual([...objects.map((o) => o.key), 'elsewhere/outside.bag'].sort());
  });
});

describe('other kinds', () => {
  it.each(['gcs', 'azure', 'folder'])('refuses a %s source by name', async (kind) => {
    const res = await call('POST', '/api/integrations/sources', ctx.token.admin, {
      kind,
      name: 'x',
      path: '/data',
    });
    expect(res.status).toBe(422);
    expect(res.body.detail).toBe(
      `source kind ${kind} is not served: only S3-compatible buckets (kind s3) can be registered (docs/integrations.md)`,
    );
  });

  it('answers 422 naming the field for a kind nobody knows, and for a malformed S3 source', async () => {
    const unknown = await call('POST', '/api/integrations/sources', ctx.token.admin, s3({ kind: 'ftp' }));
    expect(unknown.status).toBe(422);
    expect(unknown.body.errors.map((e: { field: string }) => e.field)).toContain('body.kind');
    const bad = await call(
      'POST',
      '/api/integrations/sources',
      ctx.token.admin,
      s3({ endpoint: 'ftp://x', bucket: 'A' }),
    );
    expect(bad.status).toBe(422);
    expect(bad.body.errors.map((e: { field: string }) => e.field).sort()).toEqual([
      'body.bucket',
      'body.endpoint',
    ]);
  });
});

describe('after all of the above', () => {
  it('kept every secret key, accepted or refused, out of the API log and out of every response', () => {
    // Registered, previewed, refused and deleted: the log has those requests, never the keys.
    expect(logs.text()).toMatch(/"url":"\/api\/integrations\/sources\/[0-9a-f-]{36}\/preview"/);
    expectSecretsKept(logs.text(), responses, {
      never: [stack.APP_STORAGE__SECRET_KEY!, wrongSecret],
      shownOnce: [],
    });
  });
});
