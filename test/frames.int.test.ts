import { startTestApi, createUserWithToken, type TestApi } from '../testkit/api';
import { createTestDatabase, type TestDatabase } from '../testkit/database';
import { createSessionFixture, type SessionFixture } from '../testkit/session-fixtures';
import { testConfig } from '../testkit/stack';
import { readObject } from '../activities/inspector/frame-objects';

let db: TestDatabase;
let api: TestApi;
let tokens: Record<'annotator' | 'reviewer' | 'admin', string>;
let withRedaction: SessionFixture;
let withoutRedaction: SessionFixture;
let original: Buffer;
let redacted: Buffer;

beforeAll(async () => {
  db = await createTestDatabase();
  api = await startTestApi(testConfig({ DATABASE_URL: db.url }));
  tokens = {
    annotator: (await createUserWithToken(api.deps, 'annotator')).token,
    reviewer: (await createUserWithToken(api.deps, 'reviewer')).token,
    admin: (await createUserWithToken(api.deps, 'admin')).token,
  };
  withRedaction = await createSessionFixture(api.deps, { frames: 2, redacted: true });
  withoutRedaction = await createSessionFixture(api.deps, { frames: 1 });
  const { storage } = api.deps;
  const key = withRedaction.frames[0]!.redactedUri!;
  original = await readObject(storage, { bucket: storage.bucket('frames'), key });
  redacted = await readObject(storage, { bucket: storage.bucket('redacted'), key });
});

afterAll(async () => {
  await api?.close();
  await db?.drop();
});

/** A raw fetch: the image routes answer bytes, not JSON. */
async function image(
  frameId: string,
  role: keyof typeof tokens,
  opts: { variant?: string; headers?: Record<string, string>; method?: string } = {},
) {
  const q = opts.variant ? `?variant=${opts.variant}` : '';
  const res = await fetch(`${api.url}/api/frames/${frameId}/image${q}`, {
    method: opts.method ?? 'GET',
    headers: { authorization: `Bearer ${tokens[role]}`, ...opts.headers },
  });
  const bytes = Buffer.from(await res.arrayBuffer());
  return { status: res.status, headers: res.headers, bytes, json: () => JSON.parse(bytes.toString('utf8')) };
}

describe('GET /api/frames/{frame_id}', () => {
  it('describes the frame with its PII audit', async () => {
    const frame = withRedaction.frames[1]!;
    await api.deps.db.piiAudit.create({
      data: { frameId: frame.id, nFaces: 1, regions: [{ kind: 'face', box: [1, 2, 3, 4] }] },
    });
    const res = await api.call('GET', `/api/frames/${frame.id}`, { token: tokens.annotator });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      id: frame.id,
      session_id: withRedaction.session.id,
      index: 1,
      width: 64,
      height: 48,
      redacted: true,
      pii: { examined: true, n_faces: 1, n_plates: 0 },
    });
    expect(res.body).not.toHaveProperty('uri'); // storage locations stay inside
    expect(
      (await api.call('GET', `/api/frames/${withoutRedaction.frames[0]!.id}`, { token: tokens.annotator }))
        .body.pii,
    ).toBeNull();
  });

  it('answers unknown and malformed ids with problem+json', async () => {
    expect(
      (await api.call('GET', '/api/frames/00000000-0000-4000-8000-000000000000', { token: tokens.annotator }))
        .status,
    ).toBe(404);
    const bad = await api.call('GET', '/api/frames/12345', { token: tokens.annotator });
    expect(bad.status).toBe(422);
    expect(bad.body.errors).toEqual([{ field: 'path.frame_id', message: 'must be a UUID' }]);
    expect((await image('00000000-0000-4000-8000-000000000000', 'admin')).status).toBe(404);
    expect((await image('nope', 'admin')).status).toBe(422);
    const variant = await image(withRedaction.frames[0]!.id, 'admin', { variant: 'raw' });
    expect(variant.status).toBe(422);
    expect(variant.json().errors[0].field).toBe('query.variant');
  });
});

describe('GET /api/frames/{frame_id}/image by role', () => {
  const id = () => withRedaction.frames[0]!.id;

  it('serves the redacted copy by default, to every role', async () => {
    expect(original.equals(redacted)).toBe(false);
    for (const role of ['annotator', 'reviewer', 'admin'] as const) {
      const res = await image(id(), role);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('image/jpeg');
      expect(res.bytes.equals(redacted)).toBe(true);
    }
  });

  it('serves the original only to reviewers and admins', async () => {
    const denied = await image(id(), 'annotator', { variant: 'original' });
    expect(denied.status).toBe(403);
    expect(denied.json().detail).toMatch(/only redacted frames/);
    for (const role of ['reviewer', 'admin'] as const) {
      const res = await image(id(), role, { variant: 'original' });
      expect(res.status).toBe(200);
      expect(res.bytes.equals(original)).toBe(true);
    }
  });

  it('never substitutes the original for a missing redacted copy', async () => {
    const frameId = withoutRedaction.frames[0]!.id;
    for (const role of ['annotator', 'reviewer', 'admin'] as const) {
      const res = await image(frameId, role);
      expect(res.status).toBe(409);
      expect(res.headers.get('content-type')).toMatch(/application\/problem\+json/);
      expect(res.json().detail).toMatch(/no redacted copy yet/);
    }
    expect((await image(frameId, 'reviewer', { variant: 'original' })).status).toBe(200);
  });

  it('answers 404 when the stored image is gone', async () => {
    const { session } = await createSessionFixture(api.deps, {
      frames: 1,
      storeImages: false,
      redacted: true,
    });
    const frame = await api.deps.db.frame.findFirstOrThrow({ where: { sessionId: session.id } });
    const res = await image(frame.id, 'admin', { variant: 'original' });
    expect(res.status).toBe(404);
    expect(res.json().detail).toMatch(/missing from object storage/);
  });
});

describe('caching headers', () => {
  const id = () => withRedaction.frames[0]!.id;

  it('carries ETag, Last-Modified and a private Cache-Control, distinct per variant', async () => {
    const red = await image(id(), 'admin');
    const orig = await image(id(), 'admin', { variant: 'original' });
    expect(red.headers.get('etag')).toMatch(/^"redacted-[0-9a-f]+"$/);
    expect(orig.headers.get('etag')).toMatch(/^"original-[0-9a-f]+"$/);
    expect(Date.parse(red.headers.get('last-modified')!)).not.toBeNaN();
    expect(red.headers.get('cache-control')).toBe('private, max-age=300');
    expect(red.headers.get('vary')).toMatch(/Authorization/);
    expect(red.headers.get('accept-ranges')).toBe('bytes');
  });

  it('answers 304 to a matching If-None-Match or a current If-Modified-Since, and 200 otherwise', async () => {
    const first = await image(id(), 'annotator');
    const etag = first.headers.get('etag')!;
    const notModified = await image(id(), 'annotator', { headers: { 'if-none-match': etag } });
    expect(notModified.status).toBe(304);
    expect(notModified.bytes.length).toBe(0);
    expect(
      (
        await image(id(), 'annotator', {
          headers: { 'if-modified-since': first.headers.get('last-modified')! },
        })
      ).status,
    ).toBe(304);
    expect(
      (await image(id(), 'annotator', { headers: { 'if-none-match': '"redacted-stale"' } })).status,
    ).toBe(200);
    // The redacted copy's tag never validates the original.
    expect(
      (await image(id(), 'admin', { variant: 'original', headers: { 'if-none-match': etag } })).status,
    ).toBe(200);
  });
});

describe('range requests', () => {
  const id = () => withRedaction.frames[0]!.id;

  it.each([
    ['bytes=0-99', 0, 99],
    ['bytes=100-', 100, -1],
    ['bytes=-50', -50, -1],
  ])('%s answers 206 with exactly that slice', async (range, start, end) => {
    const size = redacted.length;
    const from = start < 0 ? size + start : start;
    const to = end < 0 ? size - 1 : end;
    const res = await image(id(), 'annotator', { headers: { range } });
    expect(res.status).toBe(206);
    expect(res.headers.get('content-range')).toBe(`bytes ${from}-${to}/${size}`);
    expect(Number(res.headers.get('content-length'))).toBe(to - from + 1);
    expect(res.bytes.equals(redacted.subarray(from, to + 1))).toBe(true);
  });

  it('answers 416 with the size to a range past the end', async () => {
    const res = await image(id(), 'annotator', { headers: { range: `bytes=${redacted.length}-` } });
    expect(res.status).toBe(416);
    expect(res.headers.get('content-range')).toBe(`bytes */${redacted.length}`);
    expect(res.json().type).toBe('urn:drivelab:problem:range-not-satisfiable');
  });

  it('answers the whole image to a malformed range, to several ranges, and when If-Range is stale', async () => {
    const cases: Array<Record<string, string>> = [
      { range: 'bytes=abc' },
      { range: 'bytes=0-10, 500-600' },
      { range: 'bytes=0-10', 'if-range': '"redacted-old"' },
    ];
    for (const headers of cases) {
      const res = await image(id(), 'annotator', { headers });
      expect({ headers, status: res.status }).toEqual({ headers, status: 200 });
      expect(res.bytes.equals(redacted)).toBe(true);
    }
    const etag = (await image(id(), 'annotator')).headers.get('etag')!;
    expect(
      (await image(id(), 'annotator', { headers: { range: 'bytes=0-10', 'if-range': etag } })).status,
    ).toBe(206);
  });

  it('does not let a range reach the original for an annotator', async () => {
    expect(
      (await image(id(), 'annotator', { variant: 'original', headers: { range: 'bytes=0-10' } })).status,
    ).toBe(403);
  });
});
