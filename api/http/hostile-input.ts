import type { ErrorRequestHandler, Request, RequestHandler } from 'express';
import { InputError } from '../../core/errors';
import { sendProblem } from './problem';
import { passRouteGate, type DeclaredRoute, type Method, type RouteGuards } from './route-group';

/**
 * Hostile input is refused at one place, before any route handler, validator or query sees it:
 *
 * - a NUL character (`\u0000` in a JSON string or key, `%00` in a query value or path parameter):
 *   PostgreSQL refuses NUL in text and jsonb, so it would otherwise surface as a 500;
 * - JSON nested deeper than {@link MAX_JSON_DEPTH} levels (recursive validators and serialisers
 *   overflow the stack far below what the body limit lets through);
 * - a body on a declared route whose Content-Type is not JSON (415: it would be silently ignored);
 * - a method a known path does not serve (405 with `Allow`; OPTIONS answers 204 with `Allow`).
 *
 * Each refusal keeps the order the routes themselves follow: a caller without a valid token gets
 * 401 and a caller below the route's role 403 before any 405/415/422, so the route table and the
 * validation rules are not disclosed to strangers (the same rule as the 404 for unknown paths).
 * Only requests that are refused pay for that authentication; the checks themselves do no I/O.
 */

/** Deepest JSON nesting a body (or query) may have: the top-level object or array is level 1. */
export const MAX_JSON_DEPTH = 64;

/** At most this many offending fields are listed in one refusal. */
const MAX_REPORTED = 10;

export interface FieldProblem {
  field: string;
  message: string;
}

const NUL = '\u0000';
const NUL_MESSAGE = 'must not contain a NUL character (\\u0000)';

/** A key as it appears in a field path; a NUL in it is shown escaped. */
const keyLabel = (key: string): string => key.replaceAll(NUL, '\\u0000');

/**
 * The NUL characters and over-deep nesting in a parsed JSON value (or a parsed query), each named
 * by its field path under `prefix` (`body.tags.0`). The walk is iterative, so the depth of the
 * value cannot exhaust the stack; nesting is reported at the top-level member that holds it (the
 * full path would be as long as the nesting) and is not descended into further.
 */
export function findHostileValues(
  value: unknown,
  prefix: string,
  maxDepth: number = MAX_JSON_DEPTH,
): FieldProblem[] {
  const problems: FieldProblem[] = [];
  // depth: how many objects/arrays enclose the value, itself included when it is one.
  const stack: Array<{ value: unknown; path: string; top: string; depth: number }> = [
    { value, path: prefix, top: prefix, depth: 0 },
  ];
  while (stack.length && problems.length < MAX_REPORTED) {
    const item = stack.pop()!;
    const v = item.value;
    if (typeof v === 'string') {
      if (v.includes(NUL)) problems.push({ field: item.path, message: NUL_MESSAGE });
      continue;
    }
    if (v === null || typeof v !== 'object') continue;
    const depth = item.depth + 1;
    if (depth > maxDepth) {
      problems.push({ field: item.top, message: `must not be nested deeper than ${maxDepth} levels` });
      continue;
    }
    const entries: Array<[string, unknown]> = Array.isArray(v)
      ? v.map((x, i): [string, unknown] => [String(i), x])
      : Object.entries(v as Record<string, unknown>);
    // Pushed in reverse so the walk (and the report) follows document order.
    for (let i = entries.length - 1; i >= 0; i--) {
      const [key, child] = entries[i]!;
      const path = `${item.path}.${keyLabel(key)}`;
      const top = item.depth === 0 ? path : item.top;
      if (key.includes(NUL)) {
        problems.push({ field: path, message: `the name ${NUL_MESSAGE}` });
        continue;
      }
      stack.push({ value: child, path, top, depth });
    }
  }
  return problems;
}

/** A declared path (`/api/users/{user_id}`) as Express matches it: any case, optional trailing slash. */
export interface PathPattern {
  path: string;
  regex: RegExp;
  params: string[];
  /** One letter per segment, `L` literal or `P` parameter: `/api/objects/{object_id}` is `LLLP`. */
  shape: string;
  routes: DeclaredRoute[];
}

const escapeRegex = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

export function compilePatterns(routes: DeclaredRoute[]): PathPattern[] {
  const byPath = new Map<string, PathPattern>();
  for (const route of routes) {
    let pattern = byPath.get(route.path);
    if (!pattern) {
      const params: string[] = [];
      const source = route.path
        .split(/(\{[a-z_0-9]+\})/i)
        .map((part) => {
          const m = /^\{([a-z_0-9]+)\}$/i.exec(part);
          if (!m) return escapeRegex(part);
          params.push(m[1]!);
          return '([^/]+)';
        })
        .join('');
      const shape = route.path
        .split('/')
        .map((segment) => (segment.includes('{') ? 'P' : 'L'))
        .join('');
      pattern = { path: route.path, regex: new RegExp(`^${source}/?$`, 'i'), params, shape, routes: [] };
      byPath.set(route.path, pattern);
    }
    pattern.routes.push(route);
  }
  return [...byPath.values()];
}

export interface PathMatch {
  /** The declared routes of the most specific declared path(s) that match, whatever their method. */
  routes: DeclaredRoute[];
  /** Their decoded path parameters, by declared path; undefined when one is malformed (Express answers 400). */
  params: Map<string, Record<string, string> | undefined>;
}

/**
 * The declared path(s) a request path is for. Where several match, the most specific wins, a
 * literal segment before a parameter (`/api/objects/crops` is not an `{object_id}`): its methods
 * are the path's methods, so `DELETE /api/objects/crops` is a 405, not a malformed object id.
 */
export function matchPath(patterns: PathPattern[], path: string): PathMatch | undefined {
  const matched: Array<{ pattern: PathPattern; values: string[] }> = [];
  for (const pattern of patterns) {
    const m = pattern.regex.exec(path);
    if (m) matched.push({ pattern, values: m.slice(1) });
  }
  if (!matched.length) return undefined;
  // Matches have as many segments as the path; `L` sorts before `P`, so the least shape is the most literal.
  const best = matched.map((m) => m.pattern.shape).reduce((a, b) => (b < a ? b : a));
  const routes: DeclaredRoute[] = [];
  const params = new Map<string, Record<string, string> | undefined>();
  for (const { pattern, values } of matched.filter((m) => m.pattern.shape === best)) {
    routes.push(...pattern.routes);
    try {
      params.set(
        pattern.path,
        Object.fromEntries(pattern.params.map((name, i) => [name, decodeURIComponent(values[i]!)])),
      );
    } catch {
      params.set(pattern.path, undefined);
    }
  }
  return { routes, params };
}

/** The `Allow` header of a path: its declared methods, HEAD where GET is served, and OPTIONS. */
export function allowHeader(routes: DeclaredRoute[]): string {
  const methods = new Set(routes.map((r) => r.method.toUpperCase()));
  if (methods.has('GET')) methods.add('HEAD');
  methods.add('OPTIONS');
  const order = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];
  return order.filter((m) => methods.has(m)).join(', ');
}

/** The declared route a method reaches on a matched path (HEAD is served by GET). */
export function routeForMethod(routes: DeclaredRoute[], method: string): DeclaredRoute | undefined {
  const m = (method === 'HEAD' ? 'get' : method.toLowerCase()) as Method;
  return routes.find((r) => r.method === m);
}

/** Does the request carry a body (as opposed to an absent or zero-length one)? */
export function hasBody(req: Pick<Request, 'headers'>): boolean {
  if (req.headers['transfer-encoding'] !== undefined) return true;
  const length = Number(req.headers['content-length'] ?? 0);
  return Number.isFinite(length) && length > 0;
}

const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH']);

/**
 * `METHOD /path` of declared routes that read a non-JSON body themselves (`express.raw()` or a
 * stream), exempt from the 415. None today: drive parts travel to presigned object-store URLs, not
 * through the API. A route added with a raw body must be listed here.
 */
export const NON_JSON_BODY_ROUTES: ReadonlySet<string> = new Set<string>([]);

/** The body, query and path problems of a request on a declared route, for one 422. */
export function requestProblems(
  req: Pick<Request, 'body' | 'query'>,
  params: Record<string, string> | undefined,
): FieldProblem[] {
  const problems: FieldProblem[] = [];
  for (const [name, value] of Object.entries(params ?? {}))
    if (value.includes(NUL)) problems.push({ field: `path.${name}`, message: NUL_MESSAGE });
  problems.push(...findHostileValues(req.query, 'query'));
  if (req.body !== undefined) problems.push(...findHostileValues(req.body, 'body'));
  return problems.slice(0, MAX_REPORTED);
}

/**
 * For a method the path does not serve there is no route to take a role from: a valid token is
 * enough to learn the path's methods, as it is to learn that a path does not exist (404). A path
 * whose routes need no token (public, or bootstrap while no user exists) tells anyone.
 */
async function passPathGate(guards: RouteGuards, req: Request, routes: DeclaredRoute[]): Promise<void> {
  const access = routes.map((r) => r.spec.access);
  if (access.every((a) => a === 'public')) return;
  if (access.every((a) => a === 'public' || a === 'bootstrap') && (await guards.bootstrapOpen())) return;
  await guards.authenticate(req, { allowQueryToken: false });
}

/**
 * The middleware. Mounted right after `express.json()` (the `app.use` accepts the array): its error
 * half turns a JSON parser's stack overflow on absurdly deep input into the same 422 as the depth
 * walk, its request half does the checks above for requests on declared routes; everything else
 * (unknown paths, hostile or not) goes on to the routes and the 404 fallback unchanged.
 */
export function rejectHostileInput(
  routes: DeclaredRoute[],
  guards: RouteGuards,
): [ErrorRequestHandler, RequestHandler] {
  const patterns = compilePatterns(routes);

  const parseOverflow: ErrorRequestHandler = (err: unknown, _req, _res, next) => {
    // body-parser hands on JSON.parse's own error, status and type added: a RangeError is the stack.
    const e = err as { type?: string; name?: string } | undefined;
    if (e?.type === 'entity.parse.failed' && e.name === 'RangeError') {
      next(
        new InputError(`request body is nested deeper than ${MAX_JSON_DEPTH} levels`, [
          { field: 'body', message: `must not be nested deeper than ${MAX_JSON_DEPTH} levels` },
        ]),
      );
      return;
    }
    next(err);
  };

  const check: RequestHandler = async (req, res, next) => {
    try {
      const match = matchPath(patterns, req.path);
      if (!match) {
        next();
        return;
      }
      const route = routeForMethod(match.routes, req.method);
      if (!route) {
        await passPathGate(guards, req, match.routes);
        res.setHeader('Allow', allowHeader(match.routes));
        if (req.method === 'OPTIONS') {
          res.status(204).end();
          return;
        }
        sendProblem(res, {
          status: 405,
          type: 'urn:drivelab:problem:method-not-allowed',
          title: 'Method Not Allowed',
          detail: `${req.method} is not served on ${req.path}; allowed: ${allowHeader(match.routes)}`,
        });
        return;
      }
      if (
        BODY_METHODS.has(req.method) &&
        hasBody(req) &&
        !req.is('application/json') &&
        !NON_JSON_BODY_ROUTES.has(`${route.method.toUpperCase()} ${route.path}`)
      ) {
        await passRouteGate(guards, req, route.spec);
        sendProblem(res, {
          status: 415,
          type: 'urn:drivelab:problem:unsupported-media-type',
          detail: `a request body must be application/json; got ${req.headers['content-type'] ?? 'no Content-Type'}`,
        });
        return;
      }
      const problems = requestProblems(req, match.params.get(route.path));
      if (problems.length) {
        await passRouteGate(guards, req, route.spec);
        throw new InputError(
          `invalid request: ${problems.map((p) => `${p.field}: ${p.message}`).join('; ')}`,
          problems,
        );
      }
      next();
    } catch (err) {
      next(err);
    }
  };

  return [parseOverflow, check];
}
