import type { ErrorRequestHandler, Response } from 'express';
import type { Logger } from 'pino';
import {
  BadRequestError,
  ConflictError,
  DomainError,
  InputError,
  NotAllowedError,
  NotAuthenticatedError,
  NotFoundError,
  NotReadyError,
  RefusedError,
  TooManyRequestsError,
  UnavailableError,
} from '../../core/errors';

/** RFC 9457 problem details, as every error response of the API carries them. */
export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  instance?: string;
  request_id?: string;
  /** For validation failures: each offending field by its JSON path. */
  errors?: Array<{ field: string; message: string }>;
  [extension: string]: unknown;
}

/** First match wins: subclasses come before their parents. */
const STATUS_BY_ERROR: Array<[new (...args: never[]) => DomainError, number, string]> = [
  [BadRequestError, 400, 'bad-request'],
  [InputError, 422, 'invalid-request'],
  [NotAuthenticatedError, 401, 'not-authenticated'],
  [NotAllowedError, 403, 'forbidden'],
  [NotFoundError, 404, 'not-found'],
  [ConflictError, 409, 'conflict'],
  [RefusedError, 422, 'refused'],
  [TooManyRequestsError, 429, 'rate-limited'],
  [NotReadyError, 503, 'not-ready'],
  [UnavailableError, 503, 'unavailable'],
];

const TITLES: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  409: 'Conflict',
  413: 'Content Too Large',
  415: 'Unsupported Media Type',
  422: 'Unprocessable Content',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
};

export type ProblemInput = { status: number; detail: string; type?: string; title?: string } & Record<
  string,
  unknown
>;

export function sendProblem(res: Response, problem: ProblemInput): void {
  const body: Problem = {
    type: problem.type ?? 'about:blank',
    title: problem.title ?? TITLES[problem.status] ?? 'Error',
    ...problem,
    request_id: res.req.id as string | undefined,
    instance: res.req.originalUrl.split('?')[0],
  };
  res.status(problem.status).type('application/problem+json').json(body);
}

/** Express's own body-parser errors carry a status and a type. */
interface HttpLikeError {
  status?: number;
  statusCode?: number;
  type?: string;
  expose?: boolean;
  message: string;
}

/** The one place that turns errors into responses. Only 5xx are logged as errors. */
export function errorHandler(logger: Logger): ErrorRequestHandler {
  return (err: unknown, req, res, _next) => {
    if (res.headersSent) {
      req.socket.destroy();
      return;
    }
    if (err instanceof DomainError) {
      const [, status, slug] = STATUS_BY_ERROR.find(([cls]) => err instanceof cls) ?? [
        DomainError,
        500,
        'error',
      ];
      if (err instanceof TooManyRequestsError) res.setHeader('Retry-After', String(err.retryAfterSeconds));
      // RFC 6750 §3: a 401 names the scheme; a token that was sent but refused is `invalid_token`.
      if (err instanceof NotAuthenticatedError)
        res.setHeader(
          'WWW-Authenticate',
          req.headers.authorization
            ? 'Bearer realm="drivelab", error="invalid_token"'
            : 'Bearer realm="drivelab"',
        );
      if (status >= 500) logger.error({ err, req_id: req.id }, 'request failed');
      sendProblem(res, {
        status,
        type: `urn:drivelab:problem:${slug}`,
        detail: err.message,
        ...(err instanceof InputError && err.fieldErrors.length ? { errors: err.fieldErrors } : {}),
        ...err.details,
      });
      return;
    }
    const httpErr = err as HttpLikeError;
    const status = httpErr.status ?? httpErr.statusCode;
    if (status && status >= 400 && status < 500) {
      const detail =
        httpErr.type === 'entity.parse.failed'
          ? `request body is not valid JSON: ${httpErr.message}`
          : httpErr.message;
      sendProblem(res, { status, type: 'urn:drivelab:problem:bad-request', detail });
      return;
    }
    logger.error({ err, req_id: req.id }, 'request failed');
    sendProblem(res, { status: 500, detail: 'internal error; the request id locates it in the server log' });
  };
}
