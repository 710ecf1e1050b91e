import dns from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { addressLiteral, refusedAddress } from '../../core/webhooks/targets';

/** A receiver the target rules refuse (core/webhooks/targets.ts). */
export class TargetRefusedError extends Error {
  override name = 'TargetRefusedError';
}

/** Longest part of a receiver's answer kept in the delivery log. */
const EXCERPT = 300;

const lookupAll = (hostname: string) =>
  new Promise<dns.LookupAddress[]>((resolve, reject) =>
    dns.lookup(hostname, { all: true, verbatim: true }, (err, addresses) =>
      err ? reject(err) : resolve(addresses),
    ),
  );

const firstRefusal = (addresses: readonly string[], allowPrivate: boolean): string | null =>
  addresses.map((a) => refusedAddress(a, allowPrivate)).find((r) => r !== null) ?? null;

/**
 * Checks a receiver's address now (at registration): its IP literal, or every address its name
 * resolves to. A name that does not resolve is refused too: it could not be delivered to.
 */
export async function checkTarget(url: URL, allowPrivate: boolean): Promise<void> {
  const literal = addressLiteral(url.hostname);
  const addresses = literal
    ? [literal]
    : await lookupAll(url.hostname).then(
        (found) => found.map((a) => a.address),
        (err: NodeJS.ErrnoException) => {
          throw new TargetRefusedError(`${url.hostname} does not resolve (${err.code ?? err.message})`);
        },
      );
  const refused = firstRefusal(addresses, allowPrivate);
  if (refused) throw new TargetRefusedError(refused);
}

/**
 * The connection's own lookup, checked: the addresses the socket connects to are the ones judged,
 * so a name that resolved to a public address at registration cannot be re-pointed at an internal
 * one later (DNS rebinding).
 */
const checkedLookup =
  (allowPrivate: boolean): LookupFunction =>
  (hostname, options, callback) => {
    lookupAll(hostname).then(
      (addresses) => {
        const refused = firstRefusal(
          addresses.map((a) => a.address),
          allowPrivate,
        );
        if (refused) return callback(new TargetRefusedError(refused), '', 0);
        if (options.all) return callback(null, addresses);
        const [first] = addresses;
        return callback(null, first!.address, first!.family);
      },
      (err: NodeJS.ErrnoException) => callback(err, '', 0),
    );
  };

export interface SignedDelivery {
  url: string;
  /** The delivery id: the same `webhook-id` on every attempt, so receivers can drop a repeat. */
  messageId: string;
  body: string;
  secret: string;
  timeoutMs: number;
  allowPrivate: boolean;
}

/** What the receiver answered, or why nothing was answered. */
export type SendResult = { status: number; excerpt: string } | { status: null; error: string };

/**
 * Signs the body with the Standard Webhooks scheme (HMAC-SHA256 over `id.timestamp.body`, by the
 * `standardwebhooks` library) at the time of sending, and POSTs it. Redirects are not followed.
 */
export async function sendSigned(d: SignedDelivery): Promise<SendResult> {
  const url = new URL(d.url);
  const literal = addressLiteral(url.hostname);
  // A literal host never reaches the lookup: it is judged here.
  const refused = literal ? refusedAddress(literal, d.allowPrivate) : null;
  if (refused) return { status: null, error: `target refused: ${refused}` };
  const sentAt = new Date();
  const headers = {
    'content-type': 'application/json',
    'user-agent': 'drivelab-webhooks/1',
    'webhook-id': d.messageId,
    'webhook-timestamp': String(Math.floor(sentAt.getTime() / 1000)),
    'webhook-signature': new Webhook(d.secret).sign(d.messageId, sentAt, d.body),
  };
  try {
    return await post(url, d.body, headers, d.timeoutMs, checkedLookup(d.allowPrivate));
  } catch (err) {
    if (err instanceof TargetRefusedError) return { status: null, error: `target refused: ${err.message}` };
    const e = err as NodeJS.ErrnoException;
    if (e.name === 'TimeoutError' || e.name === 'AbortError')
      return { status: null, error: `no answer within ${d.timeoutMs / 1000} s` };
    return { status: null, error: e.message || String(err) };
  }
}

function post(
  url: URL,
  body: string,
  headers: Record<string, string>,
  timeoutMs: number,
  lookup: LookupFunction,
): Promise<{ status: number; excerpt: string }> {
  return new Promise((resolve, reject) => {
    const request = (url.protocol === 'https:' ? https : http).request(
      url,
      { method: 'POST', headers, lookup, signal: AbortSignal.timeout(timeoutMs) },
      (res) => {
        let excerpt = '';
        res.setEncoding('utf8');
        // Only the start of the answer is kept; a receiver that streams on is cut off there.
        const done = () => {
          res.destroy();
          resolve({ status: res.statusCode ?? 0, excerpt: excerpt.slice(0, EXCERPT) });
        };
        res.on('data', (chunk: string) => {
          excerpt += chunk;
          if (excerpt.length >= EXCERPT) done();
        });
        res.on('end', done);
        res.on('error', reject);
      },
    );
    request.on('error', reject);
    request.end(body);
  });
}
