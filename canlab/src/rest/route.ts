/** The shape of a route of the REST server, shared by server.ts and the window's analysis routes. */
import type http from 'node:http';
import type { JsonObject } from './fields';

export type Auth = 'public' | 'token' | 'token-or-query';

export interface Request {
  url: URL;
  /** The body as a JSON object (at most MAX_BODY_BYTES). */
  body(): Promise<JsonObject>;
  /** The body as bytes, refused with 413 past `limit` bytes. */
  raw(limit: number): Promise<Buffer>;
  req: http.IncomingMessage;
  res: http.ServerResponse;
}

export interface Route {
  method: 'GET' | 'POST';
  path: string;
  auth: Auth;
  /** Returns the JSON body of a 200 answer, or undefined when it answered itself. */
  handle(r: Request): Promise<unknown>;
}
