import { Writable } from 'node:stream';
import pino, { type Logger } from 'pino';
import type { TestApi } from '../../testkit/api';

/**
 * What the identity suites share: an API logger whose every line is kept (to search it for secrets),
 * and a client that sends each request from a client address of its choosing (the API trusts
 * X-Forwarded-For from loopback, as behind its proxy) and keeps every response body it reads.
 */

export function capturedLogger(): { logger: Logger; text: () => string } {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(chunk.toString('utf8'));
      done();
    },
  });
  return { logger: pino({ level: 'trace' }, sink), text: () => lines.join('') };
}

let addressSeq = 0;
/** A client address nobody else in the run uses, so per-address budgets are a test's own. */
export const freshAddress = (): string => {
  addressSeq += 1;
  return `10.${(process.pid >> 8) & 255}.${(addressSeq >> 8) & 255}.${addressSeq & 255}`;
};

export interface Answer {
  status: number;
  body: any;
}

export interface IdentityClient {
  /** `api`: any API that answers on `url`, in this process or another. */
  call(
    api: Pick<TestApi, 'url'>,
    method: string,
    path: string,
    opts?: { token?: string; body?: unknown; from?: string },
  ): Promise<Answer>;
  /** Every response body read so far, as text. */
  responses: string[];
}

export function identityClient(): IdentityClient {
  const responses: string[] = [];
  return {
    responses,
    async call(api, method, path, opts = {}) {
      const headers: Record<string, string> = { 'x-forwarded-for': opts.from ?? freshAddress() };
      if (opts.token) headers.authorization = `Bearer ${opts.token}`;
      if (opts.body !== undefined) headers['content-type'] = 'application/json';
      const res = await fetch(`${api.url}${path}`, {
        method,
        headers,
        body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
      });
      const text = await res.text();
      responses.push(text);
      return { status: res.status, body: text ? JSON.parse(text) : undefined };
    },
  };
}

/**
 * No secret in the logs, and in responses only where it was made (`shownOnce`: a token at sign-in,
 * a TOTP secret at setup, recovery codes at confirmation) — never again after.
 */
export function expectSecretsKept(
  logs: string,
  responses: string[],
  secrets: { never: string[]; shownOnce: string[] },
): void {
  const all = [...secrets.never, ...secrets.shownOnce];
  expect(all.length).toBeGreaterThan(0);
  for (const secret of all)
    expect({ secret, inLogs: logs.includes(secret) }).toEqual({ secret, inLogs: false });
  for (const secret of secrets.never)
    expect({ secret, responses: responses.filter((r) => r.includes(secret)).length }).toEqual({
      secret,
      responses: 0,
    });
  for (const secret of secrets.shownOnce)
    expect({ secret, responses: responses.filter((r) => r.includes(secret)).length }).toEqual({
      secret,
      responses: 1,
    });
}
