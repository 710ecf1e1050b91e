import { Router, type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import type { z } from 'zod';
import { InputError } from '../../core/errors';
import type { Principal, Role } from '../auth/principal';

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

export interface RouteSpec<B extends z.ZodType | undefined, Q extends z.ZodType | undefined> {
  summary: string;
  access: Access;
  /** Request body schema; its `name` (the spec's model name, e.g. `BulkReviewIn`) labels it in OpenAPI. */
  body?: B extends z.ZodType ? { name: string; schema: B } : undefined;
  query?: Q;
  /** Event streams may take the token from `?token=` (spec Authentication 6); no other route can. */
  streamToken?: boolean;
  /** Status of a successful answer when not 200 (201 for a create). */
  successStatus?: number;
  /** A response schema when the route declares one, for OpenAPI. */
  response?: { name: string; schema: z.ZodType };
  /** Extra statuses worth documenting (beyond 401/403/422 which every authenticated route has). */
  statuses?: Record<number, string>;
}

export interface RouteContext<B, Q> {
  req: Request;
  res: Response;
  body: B;
  query: Q;
  /** The authenticated caller; undefined only on public routes. */
  principal: Principal | undefined;
  params: Record<string, string>;
}

type Infer<S> = S extends z.ZodType ? z.infer<S> : undefined;

export type RouteHandler<B, Q> = (ctx: RouteContext<B, Q>) => Promise<unknown> | unknown;

export interface DeclaredRoute {
  group: string;
  method: Method;
  /** Path in the spec's notation: `/api/users/{user_id}/token`. */
  path: string;
  spec: RouteSpec<z.ZodType | undefined, z.ZodType | undefined>;
}

/** Hooks the app supplies: resolving the caller and enforcing per-principal rate limits. */
export interface RouteGuards {
  authenticate(req: Request, opts: { allowQueryToken: boolean }): Promise<Principal>;
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

function parseOrThrow<S extends z.ZodType>(schema: S, value: unknown, where: 'body' | 'query'): z.infer<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const errors = zodFieldErrors(result.error, where);
  throw new InputError(
    `invalid ${where}: ${errors.map((e) => `${e.field}: ${e.message}`).join('; ')}`,
    errors,
  );
}

const expressPath = (specPath: string): string => specPath.replace(/\{([a-z_0-9]+)\}/gi, ':$1');

export class RouteGroup {
  readonly routes: DeclaredRoute[] = [];
  private readonly handlers: Array<{ route: DeclaredRoute; handler: RouteHandler<unknown, unknown> }> = [];

  constructor(readonly name: string) {}

  private add<B extends z.ZodType | undefined, Q extends z.ZodType | undefined>(
    method: Method,
    path: string,
    spec: RouteSpec<B, Q>,
    handler: RouteHandler<Infer<B>, Infer<Q>>,
  ): this {
    const route: DeclaredRoute = { group: this.name, method, path, spec: spec as DeclaredRoute['spec'] };
    this.routes.push(route);
    this.handlers.push({ route, handler: handler as RouteHandler<unknown, unknown> });
    return this;
  }

  get<Q extends z.ZodType | undefined = undefined>(
    path: string,
    spec: RouteSpec<undefined, Q>,
    handler: RouteHandler<undefined, Infer<Q>>,
  ): this {
    return this.add('get', path, spec, handler);
  }
  post<B extends z.ZodType | undefined = undefined, Q extends z.ZodType | undefined = undefined>(
    path: string,
    spec: RouteSpec<B, Q>,
    handler: RouteHandler<Infer<B>, Infer<Q>>,
  ): this {
    return this.add('post', path, spec, handler);
  }
  put<B extends z.ZodType | undefined = undefined, Q extends z.ZodType | undefined = undefined>(
    path: string,
    spec: RouteSpec<B, Q>,
    handler: RouteHandler<Infer<B>, Infer<Q>>,
  ): this {
    return this.add('put', path, spec, handler);
  }
  patch<B extends z.ZodType | undefined = undefined, Q extends z.ZodType | undefined = undefined>(
    path: string,
    spec: RouteSpec<B, Q>,
    handler: RouteHandler<Infer<B>, Infer<Q>>,
  ): this {
    return this.add('patch', path, spec, handler);
  }
  delete<Q extends z.ZodType | undefined = undefined>(
    path: string,
    spec: RouteSpec<undefined, Q>,
    handler: RouteHandler<undefined, Infer<Q>>,
  ): this {
    return this.add('delete', path, spec, handler);
  }

  /** Builds the Express router. Handlers return the JSON body (201/200) or write the response themselves. */
  toRouter(guards: RouteGuards): Router {
    const router = Router();
    for (const { route, handler } of this.handlers) {
      const { spec } = route;
      const wrapped: RequestHandler = async (req: Request, res: Response, next: NextFunction) => {
        try {
          let principal: Principal | undefined;
          const required: Role | undefined =
            spec.access === 'bootstrap'
              ? (await guards.bootstrapOpen())
                ? undefined
                : 'admin'
              : spec.access === 'public'
                ? undefined
                : spec.access;
          if (required) {
            principal = await guards.authenticate(req, {
              allowQueryToken: Boolean(spec.streamToken) && req.method === 'GET',
            });
            guards.authorize(principal, required);
          }
          await guards.limit(req, principal);
          const body = spec.body ? parseOrThrow(spec.body.schema, req.body ?? {}, 'body') : undefined;
          const query = spec.query ? parseOrThrow(spec.query, req.query, 'query') : undefined;
          const result = await handler({
            req,
            res,
            body,
            query,
            principal,
            params: req.params as Record<string, string>,
          });
          if (!res.headersSent && result !== undefined) {
            // A handler that chose a status (202 for a started workflow) keeps it.
            if (res.statusCode === 200 && spec.successStatus) res.status(spec.successStatus);
            res.json(result);
          }
        } catch (err) {
          next(err);
        }
      };
      router[route.method](expressPath(route.path), wrapped);
    }
    return router;
  }
}
