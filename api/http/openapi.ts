import { z } from 'zod';
import { pathParamNames, type DeclaredRoute, type RouteSpec } from './route-group';

type JsonSchema = Record<string, unknown>;

const problemSchema: JsonSchema = {
  type: 'object',
  description: 'RFC 9457 problem details',
  required: ['type', 'title', 'status', 'detail'],
  properties: {
    type: { type: 'string' },
    title: { type: 'string' },
    status: { type: 'integer' },
    detail: { type: 'string' },
    instance: { type: 'string' },
    request_id: { type: 'string' },
    errors: {
      type: 'array',
      items: { type: 'object', properties: { field: { type: 'string' }, message: { type: 'string' } } },
    },
  },
};

const problemResponse = (description: string) => ({
  description,
  content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } },
});

/**
 * Every status a route can answer, derived from what the router does with its declaration: the
 * guards answer 401/403 (and 429, for every caller), validation answers 422 wherever a path
 * parameter, query or body is parsed, a body adds 400 (not JSON) and 415 (not application/json).
 */
function responsesOf(spec: RouteSpec): Record<string, unknown> {
  const success = spec.respondsItself
    ? { description: 'success', content: { [spec.respondsItself.contentType]: {} } }
    : {
        description: 'success',
        content: {
          'application/json': {
            schema: spec.response ? { $ref: `#/components/schemas/${spec.response.name}` } : {},
          },
        },
      };
  return {
    [String(spec.successStatus ?? 200)]: success,
    ...Object.fromEntries(
      Object.entries(spec.alsoSucceeds ?? {}).map(([status, description]) => [
        status,
        { ...success, description },
      ]),
    ),
    ...(spec.access === 'public'
      ? {}
      : { 401: problemResponse('no valid token'), 403: problemResponse('role too low') }),
    ...(spec.params || spec.body || spec.query
      ? { 422: problemResponse('invalid path parameter, query or body; `errors` names each field') }
      : {}),
    ...(spec.body
      ? {
          400: problemResponse('body is not valid JSON'),
          413: problemResponse('body larger than the JSON limit'),
          415: problemResponse('body is not application/json'),
        }
      : {}),
    429: problemResponse('request budget spent; Retry-After says when to try again'),
    503: problemResponse('a dependency the route needs (database, storage, Temporal) does not answer'),
    ...Object.fromEntries(
      Object.entries(spec.statuses ?? {}).map(([status, d]) => [status, problemResponse(d)]),
    ),
  };
}

/** OpenAPI 3.1 document generated from the same declarations (and zod schemas) that validate requests. */
export function buildOpenApi(routes: DeclaredRoute[], info: { title: string; version: string }): JsonSchema {
  const schemas: Record<string, JsonSchema> = { Problem: problemSchema };
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    const { spec } = route;
    const pathSchemas = spec.params
      ? ((
          z.toJSONSchema(spec.params, { io: 'input', unrepresentable: 'any' }) as {
            properties?: Record<string, JsonSchema>;
          }
        ).properties ?? {})
      : {};
    const operation: Record<string, unknown> = {
      tags: [route.group],
      summary: spec.summary,
      operationId: `${route.method}${route.path.replace(/[{}]/g, '').replace(/[^a-zA-Z0-9]+(.)?/g, (_, c: string | undefined) => (c ? c.toUpperCase() : ''))}`,
      security: spec.access === 'public' ? [] : [{ bearer: [] }],
      'x-required-role': spec.access,
      parameters: pathParamNames(route.path).map((name) => ({
        name,
        in: 'path',
        required: true,
        schema: pathSchemas[name] ?? { type: 'string' },
      })),
      responses: responsesOf(spec),
    };
    if (spec.streamToken) {
      (operation.parameters as unknown[]).push({
        name: 'token',
        in: 'query',
        required: false,
        schema: { type: 'string' },
        description: 'bearer token, for EventSource clients',
      });
    }
    if (spec.mediaToken) {
      (operation.parameters as unknown[]).push({
        name: 'media_token',
        in: 'query',
        required: false,
        schema: { type: 'string' },
        description: 'a media token (POST /api/auth/media-token), for <img> and canvas loads',
      });
    }
    if (spec.body) {
      schemas[spec.body.name] = z.toJSONSchema(spec.body.schema, {
        io: 'input',
        unrepresentable: 'any',
      }) as JsonSchema;
      operation.requestBody = {
        // The router reads a missing body as `{}`; it is optional exactly where `{}` is valid.
        required: !spec.body.schema.safeParse({}).success,
        content: { 'application/json': { schema: { $ref: `#/components/schemas/${spec.body.name}` } } },
      };
    }
    if (spec.response)
      schemas[spec.response.name] = z.toJSONSchema(spec.response.schema, {
        io: 'output',
        unrepresentable: 'any',
      }) as JsonSchema;
    if (spec.query) {
      const q = z.toJSONSchema(spec.query, { io: 'input', unrepresentable: 'any' }) as {
        properties?: Record<string, unknown>;
        required?: string[];
      };
      for (const [name, schema] of Object.entries(q.properties ?? {})) {
        (operation.parameters as unknown[]).push({
          name,
          in: 'query',
          required: q.required?.includes(name) ?? false,
          schema,
        });
      }
    }
    (paths[route.path] ??= {})[route.method] = operation;
  }
  return {
    openapi: '3.1.0',
    info,
    paths,
    components: {
      schemas,
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } },
    },
  };
}
