import { MAX_JSON_DEPTH } from '../api/http/hostile-input';
import { useApiForFile, type ApiForFile } from '../testkit/api';

/**
 * Hostile input is refused at one place (api/http/hostile-input.ts, docs/api.md "Hostile input"),
 * against the real app and PostgreSQL: a NUL anywhere answers 422 naming the field (PostgreSQL
 * refuses NUL in text, so it used to be a 500), JSON nested deeper than the documented maximum
 * answers 422 and stores nothing, a non-JSON body 415, an undeclared method 405 with Allow.
 */

const ctx = useApiForFile();
let api: ApiForFile['api'];
let admin: string;
let annotator: string;
beforeAll(() => {
  ({ api } = ctx);
  ({ admin, annotator } = ctx.token);
});

function expectFieldProblem(res: { status: number; body: any; headers: Headers }, field: string): void {
  expect(res.status).toBe(422);
  expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(res.body).toMatchObject({ status: 422, type: 'urn:drivelab:problem:invalid-request' });
  expect(res.body.errors).toContainEqual({ field, message: expect.any(String) });
}

/** `levels` objects (`{"a":…}`) or arrays around a leaf, as raw JSON text. */
const nestedJson = (levels: number, kind: 'object' | 'array'): string =>
  kind === 'object'
    ? '{"a":'.repeat(levels) + '1' + '}'.repeat(levels)
    : '['.repeat(levels) + ']'.repeat(levels);

describe('a NUL character answers 422 naming the field, for any role', () => {
  it('in a JSON body: user, asset and upload creation store nothing', async () => {
    const users = await api.deps.db.user.count();
    const user = await api.call('POST', '/api/users', {
      token: admin,
      body: { email: 'nul@example.org', name: 'a\u0000b', password: 'a long enough passphrase' },
    });
    expectFieldProblem(user, 'body.name');
    expect(await api.deps.db.user.count()).toBe(users);

    const asset = await api.call('POST', '/api/assets', {
      token: annotator,
      body: {
        project_id: 'p1',
        items: [{ kind: 'image', name: 'ok', meta: { 'k\u0000': 1, v: ['x\u0000'] } }],
      },
    });
    expectFieldProblem(asset, 'body.items.0.meta.k\\u0000');
    expect(asset.body.errors).toContainEqual({ field: 'body.items.0.meta.v.0', message: expect.any(String) });
    expect(await api.deps.db.asset.count()).toBe(0);

    const upload = await api.call('POST', '/api/upload/init', {
      token: admin,
      body: { filename: 'drive\u0000.mcap', content_type: 'application/octet-stream' },
    });
    expectFieldProblem(upload, 'body.filename');
    expect(await api.deps.db.upload.count()).toBe(0);
  });

  it('in a query value or a path parameter', async () => {
    expectFieldProblem(
      await api.call('GET', '/api/sessions?vehicle_id=a%00b', { token: annotator }),
      'query.vehicle_id',
    );
    expectFieldProblem(
      await api.call('GET', '/api/projects/a%00b/assets', { token: annotator }),
      'path.project_id',
    );
    expectFieldProblem(await api.call('DELETE', '/api/objects/%00', { token: admin }), 'path.object_id');
  });

  it('still answers 401 to a caller without a token first', async () => {
    const res = await api.call('GET', '/api/sessions?vehicle_id=a%00b');
    expect(res.status).toBe(401);
  });
});

describe(`JSON nested deeper than ${MAX_JSON_DEPTH} levels answers 422 and stores nothing`, () => {
  const assetBody = (meta: string) =>
    `{"project_id":"deep","items":[{"kind":"image","name":"deep","meta":{"m":${meta}}}]}`;
  // The body, items, the item and meta are four levels around the value of `m`.
  const around = 4;

  it.each([
    ['objects', 5000, 'object'],
    ['arrays', 3000, 'array'],
    ['objects', 4000, 'object'],
  ] as const)('%s nested %i levels', async (_label, levels, kind) => {
    const res = await api.call('POST', '/api/assets', {
      token: annotator,
      rawBody: assetBody(nestedJson(levels, kind)),
    });
    expectFieldProblem(res, 'body.items');
    expect(res.body.errors[0].message).toMatch(new RegExp(`nested deeper than ${MAX_JSON_DEPTH}`));
    expect(await api.deps.db.asset.count({ where: { projectId: 'deep' } })).toBe(0);
  });

  it(`accepts exactly ${MAX_JSON_DEPTH} levels and refuses one more`, async () => {
    const at = await api.call('POST', '/api/assets', {
      token: annotator,
      rawBody: assetBody(nestedJson(MAX_JSON_DEPTH - around, 'object')),
    });
    expect(at.status).toBe(201);
    const over = await api.call('POST', '/api/assets', {
      token: annotator,
      rawBody: assetBody(nestedJson(MAX_JSON_DEPTH - around + 1, 'object')),
    });
    expectFieldProblem(over, 'body.items');
    expect(await api.deps.db.asset.count({ where: { projectId: 'deep' } })).toBe(1);
  });
});

describe('a body that is not JSON answers 415', () => {
  it.each(['text/plain', 'application/x-www-form-urlencoded', undefined])('Content-Type %s', async (type) => {
    const users = await api.deps.db.user.count();
    const res = await fetch(`${api.url}/api/users`, {
      method: 'POST',
      headers: { authorization: `Bearer ${admin}`, ...(type ? { 'content-type': type } : {}) },
      body: new TextEncoder().encode('email=x@example.org&name=x&password=a+long+enough+passphrase'),
    });
    expect(res.status).toBe(415);
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(((await res.json()) as { status: number }).status).toBe(415);
    expect(await api.deps.db.user.count()).toBe(users);
  });

  it('while a JSON body with a charset, and no body at all, go on to the route', async () => {
    const res = await fetch(`${api.url}/api/auth/refresh`, {
      method: 'POST',
      headers: { authorization: `Bearer ${admin}` },
    });
    expect(res.status).toBe(200);
    const json = await fetch(`${api.url}/api/users`, {
      method: 'POST',
      headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json; charset=utf-8' },
      body: JSON.stringify({ email: 'charset@example.org', name: 'C', password: 'a long enough passphrase' }),
    });
    expect(json.status).toBe(201);
  });
});

describe('a method a known path does not serve answers 405 with Allow', () => {
  it('lists the declared methods of the path', async () => {
    const res = await api.call('PUT', '/api/users', { token: annotator });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('GET, HEAD, POST, OPTIONS');
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(res.body.status).toBe(405);
    // A literal path is not read as a parameter of its neighbour: /api/objects/crops serves POST only.
    const crops = await api.call('DELETE', '/api/objects/crops', { token: admin });
    expect([crops.status, crops.headers.get('allow')]).toEqual([405, 'POST, OPTIONS']);
    const options = await api.call('OPTIONS', '/api/users', { token: annotator });
    expect([options.status, options.headers.get('allow')]).toEqual([204, 'GET, HEAD, POST, OPTIONS']);
  });

  it('tells a caller without a token only about public paths', async () => {
    expect((await api.call('PUT', '/api/users')).status).toBe(401);
    const health = await api.call('DELETE', '/api/health');
    expect([health.status, health.headers.get('allow')]).toEqual([405, 'GET, HEAD, OPTIONS']);
    // Unknown paths keep their 401 / 404.
    expect((await api.call('PUT', '/api/nowhere')).status).toBe(401);
    expect((await api.call('PUT', '/api/nowhere', { token: annotator })).status).toBe(404);
  });
});
