import express from 'express';
import request from 'supertest';
import { z } from 'zod';
import { NotAllowedError, NotAuthenticatedError } from '../../core/errors';
import type { Role } from '../auth/principal';
import {
  MAX_JSON_DEPTH,
  allowHeader,
  compilePatterns,
  findHostileValues,
  hasBody,
  matchPath,
  rejectHostileInput,
  requestProblems,
  routeForMethod,
} from './hostile-input';
import { errorHandler } from './problem';
import type { DeclaredRoute, RouteGuards } from './route-group';

const route = (method: DeclaredRoute['method'], path: string, access: DeclaredRoute['spec']['access']) =>
  ({ group: 'g', method, path, spec: { summary: '', access } }) as DeclaredRoute;

const nested = (levels: number, leaf: unknown = 1, key = 'a'): unknown => {
  let v = leaf;
  for (let i = 0; i < levels; i++) v = key ? { [key]: v } : [v];
  return v;
};

describe('findHostileValues', () => {
  it('names a NUL in a value by its path', () => {
    expect(findHostileValues({ name: 'ok', tags: ['x', 'a\u0000b'] }, 'body')).toEqual([
      { field: 'body.tags.1', message: expect.stringMatching(/NUL/) },
    ]);
  });

  it('names a NUL in a key, escaped, and in a bare string', () => {
    expect(findHostileValues({ 'a\u0000': 1 }, 'body')).toEqual([
      { field: 'body.a\\u0000', message: expect.stringMatching(/name .*NUL/) },
    ]);
    expect(findHostileValues('\u0000', 'body')).toEqual([{ field: 'body', message: expect.any(String) }]);
  });

  it('reports in document order and at most ten fields', () => {
    const many = Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`k${i}`, '\u0000']));
    const found = findHostileValues(many, 'body');
    expect(found.map((f) => f.field)).toEqual(Array.from({ length: 10 }, (_, i) => `body.k${i}`));
  });

  it(`accepts ${MAX_JSON_DEPTH} levels and refuses one more, naming the top-level member`, () => {
    // nested(n) under `attributes` makes n + 1 levels with the body itself.
    expect(findHostileValues({ attributes: nested(MAX_JSON_DEPTH - 1) }, 'body')).toEqual([]);
    expect(findHostileValues({ attributes: nested(MAX_JSON_DEPTH) }, 'body')).toEqual([
      { field: 'body.attributes', message: `must not be nested deeper than ${MAX_JSON_DEPTH} levels` },
    ]);
    expect(findHostileValues(nested(MAX_JSON_DEPTH + 1, 1, ''), 'body')).toEqual([
      { field: 'body.0', message: expect.stringMatching(/nested deeper/) },
    ]);
  });

  it('walks 200 000 levels without exhausting the stack', () => {
    const deep = JSON.parse('['.repeat(200_000) + ']'.repeat(200_000)) as unknown;
    expect(findHostileValues(deep, 'body')).toHaveLength(1);
  });

  it('ignores numbers, booleans and null', () => {
    expect(findHostileValues({ a: 1, b: true, c: null, d: [1.5, false] }, 'body')).toEqual([]);
  });
});

describe('path matching', () => {
  const routes = [
    route('get', '/api/users', 'reviewer'),
    route('post', '/api/users', 'bootstrap'),
    route('get', '/api/users/{user_id}', 'reviewer'),
    route('post', '/api/users/{user_id}/revoke-tokens', 'admin'),
    route('get', '/api/sessions/stats', 'annotator'),
    route('delete', '/api/sessions/{session_id}', 'admin'),
  ];
  const patterns = compilePatterns(routes);

  it('matches like Express: decoded params, any case, an optional trailing slash', () => {
    const m = matchPath(patterns, '/api/users/a%00b/');
    expect(m?.routes.map((r) => r.method)).toEqual(['get']);
    expect(m?.params.get('/api/users/{user_id}')).toEqual({ user_id: 'a\u0000b' });
    expect(matchPath(patterns, '/API/Users')?.routes).toHaveLength(2);
    expect(matchPath(patterns, '/api/users/x/y')).toBeUndefined();
    expect(matchPath(patterns, '/api/nothing')).toBeUndefined();
  });

  it('leaves a malformed escape undecoded (Express answers it 400)', () => {
    expect(matchPath(patterns, '/api/users/%E0%A4%A')?.params.get('/api/users/{user_id}')).toBeUndefined();
  });

  it('takes the methods of the most specific declared path: a literal segment before a parameter', () => {
    const m = matchPath(patterns, '/api/sessions/stats')!;
    expect(allowHeader(m.routes)).toBe('GET, HEAD, OPTIONS');
    expect(routeForMethod(m.routes, 'HEAD')?.method).toBe('get');
    expect(routeForMethod(m.routes, 'DELETE')).toBeUndefined();
    expect(allowHeader(matchPath(patterns, '/api/sessions/s1')!.routes)).toBe('DELETE, OPTIONS');
  });
});

describe('hasBody and requestProblems', () => {
  it('counts a body by its length or transfer encoding', () => {
    expect(hasBody({ headers: {} })).toBe(false);
    expect(hasBody({ headers: { 'content-length': '0' } })).toBe(false);
    expect(hasBody({ headers: { 'content-length': '3' } })).toBe(true);
    expect(hasBody({ headers: { 'transfer-encoding': 'chunked' } })).toBe(true);
  });

  it('names path, query and body fields together', () => {
    expect(
      requestProblems(
        { body: { name: 'x\u0000' }, query: { vehicle_id: 'a\u0000b', tag: ['ok', '\u0000'] } },
        { session_id: '\u0000' },
      ).map((p) => p.field),
    ).toEqual(['path.session_id', 'query.vehicle_id', 'query.tag.1', 'body.name']);
  });
});

describe('rejectHostileInput (an Express app with stand-in guards)', () => {
  const tokens: Record<string, Role> = { admin: 'admin', annotator: 'annotator' };
  const guards: RouteGuards = {
    async authenticate(req) {
      const role = tokens[/^Bearer (\w+)$/.exec(req.headers.authorization ?? '')?.[1] ?? ''];
      if (!role) throw new NotAuthenticatedError('a bearer token is required');
      return {
        userId: role,
        email: '',
        role,
        tokenVersion: 0,
        sessionId: null,
        tokenId: '',
        expiresAt: new Date(),
      };
    },
    authorize(principal, required) {
      if (required === 'admin' && principal.role !== 'admin') throw new NotAllowedError('role too low');
    },
    async limit() {},
    async bootstrapOpen() {
      return false;
    },
  };
  const routes = [
    route('get', '/api/health', 'public'),
    route('get', '/api/items', 'annotator'),
    route('post', '/api/items', 'admin'),
    route('delete', '/api/items/{item_id}', 'admin'),
  ];
  const app = express();
  app.use(express.json());
  app.use(rejectHostileInput(routes, guards));
  const handled = jest.fn();
  app.get('/api/health', (_req, res) => void res.json({ ok: true }));
  app.get('/api/items', (_req, res) => void res.json([]));
  app.post('/api/items', (req, res) => {
    handled(req.body);
    const parsed = z.object({ name: z.string() }).safeParse(req.body);
    res.status(parsed.success ? 201 : 422).json(parsed.data ?? {});
  });
  app.delete('/api/items/:item_id', (_req, res) => void res.status(204).end());
  app.use(errorHandler({ error: () => undefined } as never));
  beforeEach(() => handled.mockClear());

  it('lets ordinary requests through', async () => {
    await request(app)
      .post('/api/items')
      .set('authorization', 'Bearer admin')
      .send({ name: 'x' })
      .expect(201);
    await request(app).get('/api/items?q=a').set('authorization', 'Bearer annotator').expect(200);
    await request(app).head('/api/items').set('authorization', 'Bearer annotator').expect(200);
    await request(app).get('/api/unknown%00').expect(404);
  });

  it('refuses a NUL in the body, query or path with 422 naming the field', async () => {
    const body = await request(app)
      .post('/api/items')
      .set('authorization', 'Bearer admin')
      .send({ name: 'a\u0000b' })
      .expect(422)
      .expect('content-type', /application\/problem\+json/);
    expect(body.body.errors).toEqual([{ field: 'body.name', message: expect.stringMatching(/NUL/) }]);
    const query = await request(app).get('/api/items?q=a%00b').set('authorization', 'Bearer annotator');
    expect([query.status, query.body.errors[0].field]).toEqual([422, 'query.q']);
    const path = await request(app).delete('/api/items/a%00b').set('authorization', 'Bearer admin');
    expect([path.status, path.body.errors[0].field]).toEqual([422, 'path.item_id']);
    expect(handled).not.toHaveBeenCalled();
  });

  it('refuses over-deep JSON with 422 before the handler sees it', async () => {
    const res = await request(app)
      .post('/api/items')
      .set('authorization', 'Bearer admin')
      .set('content-type', 'application/json')
      .send(`{"name":"x","extra":${'{"a":'.repeat(5000)}1${'}'.repeat(5000)}}`);
    expect(res.status).toBe(422);
    expect(res.body.errors).toEqual([{ field: 'body.extra', message: expect.stringMatching(/nested/) }]);
    expect(handled).not.toHaveBeenCalled();
  });

  it('answers 401 and 403 before 422, as the route itself would', async () => {
    await request(app).post('/api/items').send({ name: '\u0000' }).expect(401);
    await request(app)
      .post('/api/items')
      .set('authorization', 'Bearer annotator')
      .send({ name: '\u0000' })
      .expect(403);
  });

  it('answers 415 to a non-JSON body and lets an empty one through', async () => {
    const res = await request(app)
      .post('/api/items')
      .set('authorization', 'Bearer admin')
      .set('content-type', 'text/plain')
      .send('name=x');
    expect(res.status).toBe(415);
    expect(res.headers['content-type']).toMatch(/application\/problem\+json/);
    // No body (or an empty one) is the route's to judge.
    await request(app).post('/api/items').set('authorization', 'Bearer admin').expect(422);
    expect(handled).toHaveBeenCalledWith(undefined);
  });

  it('answers 405 with Allow to an undeclared method, and OPTIONS with 204 and Allow', async () => {
    const res = await request(app).put('/api/items').set('authorization', 'Bearer annotator');
    expect(res.status).toBe(405);
    expect(res.headers.allow).toBe('GET, HEAD, POST, OPTIONS');
    expect(res.body.status).toBe(405);
    const options = await request(app).options('/api/items/1').set('authorization', 'Bearer annotator');
    expect([options.status, options.headers.allow]).toEqual([204, 'DELETE, OPTIONS']);
    // Without a token a protected path does not disclose its methods; a public one does.
    await request(app).put('/api/items').expect(401);
    const health = await request(app).post('/api/health');
    expect([health.status, health.headers.allow]).toEqual([405, 'GET, HEAD, OPTIONS']);
  });

  it('turns a JSON parser stack overflow into the depth 422, and only that', async () => {
    const failing = (error: Error) => {
      const app = express();
      app.use((_req, _res, next) => next(Object.assign(error, { status: 400, type: 'entity.parse.failed' })));
      app.use(rejectHostileInput(routes, guards));
      app.use(errorHandler({ error: () => undefined } as never));
      return request(app).post('/api/items').send({});
    };
    const overflow = await failing(new RangeError('Maximum call stack size exceeded'));
    expect([overflow.status, overflow.body.errors[0].field]).toEqual([422, 'body']);
    // A syntax error quoting the body ("nested", "stack") stays the parser's 400.
    const syntax = await failing(
      new SyntaxError('Unexpected token \'n\', "nested call stack" is not valid JSON'),
    );
    expect(syntax.status).toBe(400);
  });
});
