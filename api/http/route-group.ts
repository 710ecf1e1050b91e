import { Router, type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import { z } from 'zod';
import { InputError } from '../../core/errors';
import type { Principal, Role } from '../auth/principal';
import type { TokenSources } from '../auth/guards';

/**
 * A route group of spec/routes.tsv, declared as data: the same declaration registers the Express
 * handler, drives authentication, role checks and validation, generates the OpenAPI document and
 * feeds the route-inventory test. A route is authenticated unless it says `public`.
 */

export type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';

/**
 * Who may call: `public` (no token), the lowest role allowed, or `bootstrap`: no token while the
 * user table is empty (creating the first user, spec Authentication 5), `admin` afterwards.
 */
export type Access = 'public' | 'bootstrap' | Role;

/** Path parameters, by name as the path writes them (`{object_id}`). */
export type PathParams = z.ZodObject;

export interface RouteSpec {
  summary: string;
  access: Access;
  /** Request body schema; its `name` (the spec's model name, e.g. `BulkReviewIn`) labels it in OpenAPI. */
  body?: { name: string; schema: z.ZodType };
  query?: z.ZodType;
  /**
   * Every `{name}` of the path, with its schema; a value that does not parse answers 422 naming
   * `path.<name>` before the handler runs. Required when the path has parameters.
   */
  params?: PathParams;
  /** Event streams may take the token from `?token=` (spec Authentication 6); no other route can. */
  streamToken?: boolean;
  /** Frame images and crops also take a media token (`?media_token=` or bearer), which no other route accepts. */
  mediaToken?: boolean;
  /** Status of a successful answer when not 200 (201 for a create, 202 for a started workflow). */
  successStatus?: number;
  /** Other successes the handler answers itself (a 202 for a started workflow beside a 201 create). */
  alsoSucceeds?: Record<number, string>;
  /** A response schema when the route declares one, for OpenAPI. */
  response?: { name: string; schema: z.ZodType };
  /**
   * The handler writes the response itself (a stream, an image) instead of returning a JSON
   * body; the media type it writes, for OpenAPI. Every other handler must return its body, so a
   * forgotten `return` is a type error rather than a request left hanging.
   */
  respondsItself?: { contentType: string };
  /** Error statuses the handler may answer (401/403/422/429 follow from the declaration itself). */
  statuses?: Record<number, string>;
}

type BodyOf<S> = S extends { body: { schema: infer X extends z.ZodType } } ? z.infer<X> : undefined;
type QueryOf<S> = S extends { query: infer X extends z.ZodType } ? z.infer<X> : undefined;
type ParamsOf<S> = S extends { params: infer X extends z.ZodType } ? z.infer<X> : Record<string, never>;
/** A public route has no caller; a bootstrap route has one once the first user exists. */
type PrincipalOf<S> = S extends { access: 'public' }
  ? undefined
  : S extends { access: 'bootstrap' }
    ? Principal | undefined
    : Principal;

export interface RouteContext<S> {
  req: Request;
  res: Response;
  body: BodyOf<S>;
  query: QueryOf<S>;
  params: ParamsOf<S>;
  principal: PrincipalOf<S>;
}

/** A JSON body: anything but `undefined`, which would leave the request unanswered. */
export type JsonBody = object | string | number | boolean | null;
type ResultOf<S> = S extends { respondsItself: object } ? void : JsonBody;

export type RouteHandler<S> = (ctx: RouteContext<S>) => Promise<ResultOf<S>> | ResultOf<S>;

export interface DeclaredRoute {
  group: string;
  method: Method;
  /** Path in the spec's notation: `/api/users/{user_id}/token`. */
  path: string;
  spec: RouteSpec;
}

/** Hooks the app supplies: resolving the caller and enforcing per-principal rate limits. */
export interface RouteGuards {
  authenticate(req: Request, sources: TokenSources): Promise<Principal>;
  authorize(principal: Principal, access: Role): void;
  limit(req: Request, principal: Principal | undefined): Promise<void>;
  /** True while no user exists. */
  bootstrapOpen(): Promise<boolean>;
}

export function zodFieldErrors(error: z.ZodError, prefix: string): Array<{ field: string; message: string }> {
  return error.issues.map((issue) => {
    const field = [prefix, ...issue.path.map(String)].filter(Boolean).join('.');
    // Unknown keys are reported on the parent; name them so the client sees which field is wrong.
    if (issue.code === 'unrecognized_keys') {
      return {
        field: [field, ...issue.keys].filter(Boolean).join('.'),
        message: `unknown field(s): ${issue.keys.join(', ')}`,
      };
    }
    return { field: field || prefix, message: issue.message };
  });
}

function parseOrThrow<S extends z.ZodType>(
  schema: S,
  value: unknown,
  where: 'body' | 'query' | 'path',
): z.infer<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const errors = zodFieldErrors(result.error, where);
  throw new InputError(
    `invalid ${where}: ${errors.map((e) => `${e.field}: ${e.message}`).join('; ')}`,
    errors,
  );
}

const expressPath = (specPath: string): string => specPath.replace(/\{([a-z_0-9]+)\}/gi, ':$1');
export const pathParamNames = (specPath: string): string[] =>
  [...specPath.matchAll(/\{([a-z_0-9]+)\}/gi)].map((m) => m[1]!);

/** Path parameters that are UUIDs (object, frame, session, job ids …). */
export function uuidParams<const K extends string>(...names: K[]): z.ZodObject<Record<K, z.ZodUUID>> {
  return z.object(
    Object.fromEntries(names.map((n) => [n, z.uuid({ error: 'must be a UUID' })])) as Record<K, z.ZodUUID>,
  );
}

/** Declarations that cannot serve are refused when the group is built, not at the first request. */
function checkDeclaration(method: Method, path: string, spec: RouteSpec): void {
  const where = `${method.toUpperCase()} ${path}`;
  const inPath = pathParamNames(path).sort();
  const declared = Object.keys(spec.params?.shape ?? {}).sort();
  if (inPath.join() !== declared.join())
    throw new Error(`${where}: path parameters {${inPath.join(', ')}} declared as {${declared.join(', ')}}`);
  for (const status of Object.keys(spec.statuses ?? {}))
    if (Number(status) < 400) throw new Error(`${where}: statuses lists errors; a success is successStatus`);
  for (const status of Object.keys(spec.alsoSucceeds ?? {}))
    if (Number(status) >= 300) throw new Error(`${where}: alsoSucceeds lists successes`);
}

/**
 * A route's gate, before anything else looks at the request: no token on a public route (nor on a
 * bootstrap route while no user exists), otherwise a valid token and at least the route's role.
 * The caller, when there is one.
 */
export async function passRouteGate(
  guards: RouteGuards,
  req: Request,
  spec: Pick<RouteSpec, 'access' | 'streamToken' | 'mediaToken'>,
): Promise<Principal | undefined> {
  if (spec.access === 'public') return undefined;
  if (spec.access === 'bootstrap' && (await guards.bootstrapOpen())) return undefined;
  const principal = await guards.authenticate(req, {
    allowQueryToken: Boolean(spec.streamToken) && req.method === 'GET',
    allowMediaToken: Boolean(spec.mediaToken) && (req.method === 'GET' || req.method === 'HEAD'),
  });
  guards.authorize(principal, spec.access === 'bootstrap' ? 'admin' : spec.access);
  return principal;
}

export class RouteGroup {
  readonly routes: DeclaredRoute[] = [];
  private readonly handlers: Array<{ route: DeclaredRoute; handler: RouteHandler<RouteSpec> }> = [];

  constructor(readonly name: string) {}

  private add(method: Method, path: string, spec: RouteSpec, handler: (ctx: never) => unknown): this {
    checkDeclaration(method, path, spec);
    const route: DeclaredRoute = { group: this.name, method, path, spec };
    this.routes.push(route);
    this.handlers.push({ route, handler: handler as RouteHandler<RouteSpec> });
    return this;
  }

  get<const S extends RouteSpec & { body?: undefined }>(
    path: string,
    spec: S,
    handler: RouteHandler<S>,
  ): this {
    return this.add('get', path, spec, handler);
  }
  post<const S extends RouteSpec>(path: string, spec: S, handler: RouteHandler<S>): this {
    return this.add('post', path, spec, handler);
  }
  put<const S extends RouteSpec>(path: string, spec: S, handler: RouteHandler<S>): this {
    return this.add('put', path, spec, handler);
  }
  patch<const S extends RouteSpec>(path: string, spec: S, handler: RouteHandler<S>): this {
    return this.add('patch', path, spec, handler);
  }
  delete<const S extends RouteSpec & { body?: undefined }>(
    path: string,
    spec: S,
    handler: RouteHandler<S>,
  ): this {
    return this.add('delete', path, spec, handler);
  }

  /** Builds the Express router. Handlers return the JSON body, or write the response when they say so. */
  toRouter(guards: RouteGuards): Router {
    const router = Router();
    for (const { route, handler } of this.handlers) {
      const { spec } = route;
      const wrapped: RequestHandler = async (req: Request, res: Response, next: NextFunction) => {
        // Every answer of the route counts toward its group's SLO, refusals included (docs/slo.md).
        res.locals.routeGroup = route.group;
        try {
          const principal = await passRouteGate(guards, req, spec);
          await guards.limit(req, principal);
          const params = spec.params ? parseOrThrow(spec.params, req.params, 'path') : {};
          const body = spec.body ? parseOrThrow(spec.body.schema, req.body ?? {}, 'body') : undefined;
          // The media token is the gate's, not the route's own query.
          const { media_token: _mediaToken, ...ownQuery } = req.query;
          const query = spec.query
            ? parseOrThrow(spec.query, spec.mediaToken ? ownQuery : req.query, 'query')
            : undefined;
          const result = await handler({
            req,
            res,
            body,
            query,
            principal,
            params,
          } as RouteContext<RouteSpec>);
          if (spec.respondsItself) return;
          if (res.headersSent)
            throw new Error(
              `${route.method} ${route.path} wrote its response without declaring respondsItself`,
            );
          if (result === undefined) throw new Error(`${route.method} ${route.path} returned no body`);
          // A handler that chose a status (202 for a started workflow) keeps it.
          if (res.statusCode === 200 && spec.successStatus) res.status(spec.successStatus);
          res.json(result);
        } catch (err) {
          next(err);
        }
      };
      router[route.method](expressPath(route.path), wrapped);
    }
    return router;
  }
}
