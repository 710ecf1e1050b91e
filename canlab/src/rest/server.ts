/**
 * The loopback REST API and the window (canlab/src/window) on one node:http server.
 *
 * Public contract (docs/window-and-rest.md): GET / (the window page, no token), GET /frames,
 * /signals, /status, /memory, POST /mark and, when `allowInject`, POST /inject. Every route but
 * GET / needs the per-session token in `X-API-Token`. Routes under /ui/ are the window's private
 * API (same token), not part of the public contract.
 *
 * Every refusal is JSON `{error: <code>, message: <text>, field?: <name>}` with a documented status.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { CanlabInputError } from '../errors';
import type { CanFrame } from '../frame';
import { MarkRefusedError, TransmitRefusedError } from '../workspace/errors';
import type {
  MarkAction,
  SignalDefinition,
  SignalStep,
  WorkspaceApi,
  WorkspaceEvent,
} from '../workspace/types';
import { DEFAULT_FRAME_COUNT, hexId } from '../workspace/workspace';
import {
  booleanField,
  canIdField,
  definitionFromBody,
  frameFromBody,
  hexBytes,
  HttpError,
  numberField,
  oneOf,
  parseJsonObject,
  stringField,
  type JsonObject,
} from './fields';
import type { Request, Route } from './route';
import { windowAnalysis, withClaimedBits } from './window-analysis';

export const DEFAULT_REST_HOST = '127.0.0.1';
export const DEFAULT_REST_PORT = 8765;
/** GET /frames without `n` answers the latest 100 frames; `n` may go up to 10,000. */
export const DEFAULT_FRAMES_N = DEFAULT_FRAME_COUNT;
export const MAX_FRAMES_N = 10_000;
/** Request bodies are small JSON objects; anything larger is refused with 413. */
export const MAX_BODY_BYTES = 64 * 1024;
/** Live frame notices to the window are coalesced to at most one per this many milliseconds. */
const FRAMES_EVENT_INTERVAL_MS = 250;
const SSE_KEEPALIVE_MS = 15_000;

export interface RestServerOptions {
  workspace: WorkspaceApi;
  /** The per-session token every route but GET / requires in X-API-Token. */
  token: string;
  /** Serve POST /inject (the window does; the capture kit does not). */
  allowInject: boolean;
  host?: string;
  /** 0 picks a free port (tests). */
  port?: number;
  /** Where the start-up warning for a non-loopback host goes; stderr by default. */
  warn?: (line: string) => void;
}

export interface RestServer {
  /** `http://127.0.0.1:8765` (no trailing slash). */
  url: string;
  close(): Promise<void>;
}

export function isLoopbackHost(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  return h === 'localhost' || h === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h);
}

/** The line printed at start when the API is bound beyond loopback, or undefined on loopback. */
export function nonLoopbackWarning(host: string): string | undefined {
  if (isLoopbackHost(host)) return undefined;
  return `canlab: warning: the REST API is bound to ${host}, not loopback: anyone who can reach this address and learns the token can read the capture, edit signals and (with ARM TX on) transmit; this is not intended use`;
}

/** Compares digests so neither the token's content nor its length leaks through timing. */
function tokenMatches(given: string | undefined, token: string): boolean {
  if (given === undefined) return false;
  const a = createHash('sha256').update(given).digest();
  const b = createHash('sha256').update(token).digest();
  return timingSafeEqual(a, b);
}

function frameJson(f: CanFrame): Record<string, unknown> {
  return {
    timestamp: f.timestamp,
    id: hexId(f.id, f.extended),
    extended: f.extended,
    channel: f.channel,
    dlc: f.dlc,
    data: hexBytes(f.data),
    fd: f.fd,
    remote: f.remote,
    error: f.error,
    ...(f.direction ? { direction: f.direction } : {}),
  };
}

function definitionJson(d: SignalDefinition): Record<string, unknown> {
  const s = d.signal;
  return {
    messageId: hexId(d.messageId, d.extended),
    extended: d.extended,
    name: s.name,
    startBit: s.startBit,
    length: s.length,
    byteOrder: s.byteOrder,
    signed: s.signed,
    valueType: s.valueType,
    factor: s.factor,
    offset: s.offset,
    minimum: s.minimum,
    maximum: s.maximum,
    unit: s.unit,
  };
}

function stepJson(step: SignalStep | undefined): Record<string, unknown> | null {
  return step
    ? { kind: step.kind, at: step.at, source: step.source, signal: definitionJson(step.definition) }
    : null;
}

// Matched by attribute rather than as exact text: a formatter may make the link self-closing, reflow
// the attributes or change their quotes, and the page must still inline its assets.
const STYLESHEET_TAG = /<link\b[^>]*\shref\s*=\s*["']?style\.css["']?[^>]*>/i;
const SCRIPT_TAG = /<script\b[^>]*\ssrc\s*=\s*["']?app\.js["']?[^>]*>\s*<\/script\s*>/i;

/**
 * `template` with its `style.css` link and `app.js` script tags replaced by the inline `css` and `js`,
 * or undefined when it lacks either tag.
 */
export function inlineWindowAssets(template: string, css: string, js: string): string | undefined {
  if (!STYLESHEET_TAG.test(template) || !SCRIPT_TAG.test(template)) return undefined;
  // Functions as replacements: `$` sequences in the code must not be read as patterns.
  return template
    .replace(STYLESHEET_TAG, () => `<style>${css}</style>`)
    .replace(SCRIPT_TAG, () => `<script>${js}</script>`);
}

/** The window page with its stylesheet and script inlined, so GET / is the only route without a token. */
function buildWindowPage(): { html: string; csp: string } {
  // Through the package root rather than `../window`: the built server runs from dist/rest/, and the
  // page's files stay in src/window/ (they have no build step).
  const dir = path.join(__dirname, '..', '..', 'src', 'window');
  const read = (name: string): string => fs.readFileSync(path.join(dir, name), 'utf8');
  const css = read('style.css');
  const js = read('app.js');
  const html = inlineWindowAssets(read('index.html'), css, js);
  if (html === undefined) throw new Error(`${dir}/index.html lost its stylesheet or script tag`);
  const hash = (text: string): string => `'sha256-${createHash('sha256').update(text).digest('base64')}'`;
  const csp = `default-src 'none'; script-src ${hash(js)}; style-src ${hash(css)}; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`;
  return { html, csp };
}

function sendJson(
  res: http.ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(text),
    'Cache-Control': 'no-store',
    'X-Content-Type-Options': 'nosniff',
    ...headers,
  });
  res.end(text);
}

function readRaw(req: http.IncomingMessage, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      // Past the limit the rest is drained unread, so the 413 answer still reaches the client.
      if (size > limit)
        reject(
          new HttpError(413, 'body_too_large', `request bodies are at most ${limit} bytes`, 'body', {
            Connection: 'close',
          }),
        );
      else chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

async function readBody(req: http.IncomingMessage): Promise<JsonObject> {
  return parseJsonObject((await readRaw(req, MAX_BODY_BYTES)).toString('utf8'));
}

/** `n` of GET /frames: absent → DEFAULT_FRAMES_N; else a whole number in 1..MAX_FRAMES_N. */
export function framesCount(value: string | null): number {
  if (value === null) return DEFAULT_FRAMES_N;
  if (!/^\d+$/.test(value) || Number(value) < 1 || Number(value) > MAX_FRAMES_N)
    throw new HttpError(
      400,
      'bad_request',
      `n: must be a whole number in 1..${MAX_FRAMES_N} (default ${DEFAULT_FRAMES_N})`,
      'n',
    );
  return Number(value);
}

function queryId(url: URL): number | undefined {
  const id = url.searchParams.get('id');
  return id === null ? undefined : canIdField({ id }, 'id');
}

/** The latest decoded value of every defined signal (null fields when no frame of its id is held). */
function decodedSignals(ws: WorkspaceApi): Array<Record<string, unknown>> {
  const latest = new Map<string, ReturnType<WorkspaceApi['decode']>[number]>();
  const out: Array<Record<string, unknown>> = [];
  for (const d of ws.signals()) {
    const key = hexId(d.messageId, d.extended);
    if (!latest.has(key)) {
      const [frame] = ws.decode({ id: d.messageId, n: 1 });
      if (frame) latest.set(key, frame);
    }
    const frame = latest.get(key);
    const signal = frame?.signals.find((s) => s.name === d.signal.name);
    out.push({
      messageId: key,
      message: frame?.message ?? null,
      name: d.signal.name,
      value: signal?.value ?? null,
      raw: signal?.raw ?? null,
      unit: d.signal.unit,
      ...(signal?.label === undefined ? {} : { label: signal.label }),
      timestamp: signal ? frame!.timestamp : null,
    });
  }
  return out;
}

function markBody(body: JsonObject): { label: string; action: MarkAction; at?: number } {
  const label = stringField(body, 'label');
  const action = oneOf(body, 'action', ['toggle', 'begin', 'end', 'point'] as const, 'toggle');
  return body.at === undefined ? { label, action } : { label, action, at: numberField(body, 'at') };
}

export async function createRestServer(options: RestServerOptions): Promise<RestServer> {
  const { workspace: ws, token, allowInject } = options;
  const host = options.host ?? DEFAULT_REST_HOST;
  const page = buildWindowPage();
  const streams = new Set<http.ServerResponse>();
  const analysis = windowAnalysis(ws);

  const state = (): Record<string, unknown> => {
    const history = ws.history();
    return {
      status: ws.status(),
      transmitter: ws.hasTransmitter(),
      injectRoute: allowInject,
      signals: ws.signals().map(definitionJson),
      dbc: analysis.dbc(),
      history: {
        undo: history.undo.length,
        redo: history.redo.length,
        lastUndo: stepJson(history.undo.at(-1)),
        nextRedo: stepJson(history.redo[0]),
      },
    };
  };
  const mark = async (r: Request, source: string): Promise<unknown> => {
    const { label, action, at } = markBody(await r.body());
    return { mark: ws.mark(label, action, source, at) };
  };

  const routes: Route[] = [
    {
      method: 'GET',
      path: '/',
      auth: 'public',
      handle: async ({ res }) => {
        res.writeHead(200, {
          'Content-Type': 'text/html; charset=utf-8',
          'Content-Security-Policy': page.csp,
          'Cache-Control': 'no-store',
          'X-Content-Type-Options': 'nosniff',
          'Referrer-Policy': 'no-referrer',
        });
        res.end(page.html);
        return undefined;
      },
    },
    {
      method: 'GET',
      path: '/frames',
      auth: 'token',
      handle: async ({ url }) => {
        const frames = ws.frames({ n: framesCount(url.searchParams.get('n')), id: queryId(url) });
        return { count: frames.length, total: ws.status().frameCount, frames: frames.map(frameJson) };
      },
    },
    { method: 'GET', path: '/signals', auth: 'token', handle: async () => ({ signals: decodedSignals(ws) }) },
    {
      method: 'GET',
      path: '/status',
      auth: 'token',
      handle: async () => ({ ...ws.status(), transmitter: ws.hasTransmitter(), injectRoute: allowInject }),
    },
    { method: 'GET', path: '/memory', auth: 'token', handle: async () => ({ entries: ws.memory() }) },
    { method: 'POST', path: '/mark', auth: 'token', handle: (r) => mark(r, 'http') },
    ...(allowInject
      ? [
          {
            method: 'POST',
            path: '/inject',
            auth: 'token',
            handle: async (r) => {
              // The gate comes before the content: an unarmed window answers 409 whatever the body.
              if (!ws.armTx())
                throw new TransmitRefusedError(
                  'arm_tx_off',
                  'ARM TX is off; arm it in the window to transmit',
                );
              const frame = frameFromBody(await r.body());
              try {
                await ws.inject(frame);
              } catch (err) {
                if (err instanceof TransmitRefusedError || err instanceof CanlabInputError) throw err;
                throw new HttpError(
                  502,
                  'send_failed',
                  `the adapter did not send the frame: ${err instanceof Error ? err.message : String(err)}`,
                );
              }
              return { sent: frameJson(frame) };
            },
          } satisfies Route,
        ]
      : []),

    // The window's private API.
    { method: 'GET', path: '/ui/state', auth: 'token', handle: async () => state() },
    {
      method: 'GET',
      path: '/ui/ids',
      auth: 'token',
      handle: async () => ({
        ids: ws.idStats().map((s) => ({
          id: hexId(s.id, s.extended),
          count: s.count,
          rateHz: s.meanRateHz,
          jitterMs: s.jitterMs,
          dlcs: s.dlcs,
          movingBytes: s.movingBytes,
          byteDistinct: s.byteDistinct,
        })),
      }),
    },
    {
      method: 'GET',
      path: '/ui/intelligence',
      auth: 'token',
      handle: async () => ({ items: ws.intelligence().map(withClaimedBits) }),
    },
    {
      method: 'GET',
      path: '/ui/timeline',
      auth: 'token',
      handle: async () => {
        const frames = ws.allFrames();
        return {
          start: frames[0]?.timestamp ?? null,
          end: frames.at(-1)?.timestamp ?? null,
          marks: ws.marks(),
        };
      },
    },
    {
      method: 'POST',
      path: '/ui/load',
      auth: 'token',
      handle: async (r) => ({ status: await ws.loadCapture(stringField(await r.body(), 'path')) }),
    },
    {
      method: 'POST',
      path: '/ui/signals',
      auth: 'token',
      handle: async (r) => ({
        step: stepJson(ws.defineSignal(definitionFromBody(await r.body()), 'window')),
      }),
    },
    {
      method: 'POST',
      path: '/ui/signals/remove',
      auth: 'token',
      handle: async (r) => {
        const body = await r.body();
        return {
          step: stepJson(ws.removeSignal(canIdField(body, 'messageId'), stringField(body, 'name'), 'window')),
        };
      },
    },
    {
      method: 'POST',
      path: '/ui/undo',
      auth: 'token',
      handle: async () => {
        const step = ws.undo();
        if (!step) throw new HttpError(409, 'nothing_to_undo', 'there is no signal step to undo');
        return { step: stepJson(step) };
      },
    },
    {
      method: 'POST',
      path: '/ui/redo',
      auth: 'token',
      handle: async () => {
        const step = ws.redo();
        if (!step) throw new HttpError(409, 'nothing_to_redo', 'there is no undone signal step to redo');
        return { step: stepJson(step) };
      },
    },
    {
      method: 'POST',
      path: '/ui/arm-tx',
      auth: 'token',
      handle: async (r) => {
        const body = await r.body();
        if (body.on === undefined) throw new HttpError(400, 'bad_request', 'on: is required', 'on');
        ws.setArmTx(booleanField(body, 'on', false));
        return { armTx: ws.armTx() };
      },
    },
    { method: 'POST', path: '/ui/mark', auth: 'token', handle: (r) => mark(r, 'window') },
    ...analysis.routes,
    {
      method: 'GET',
      path: '/ui/events',
      // EventSource cannot send headers, so this one route also takes ?token=.
      auth: 'token-or-query',
      handle: async ({ req, res }) => {
        res.writeHead(200, {
          'Content-Type': 'text/event-stream; charset=utf-8',
          'Cache-Control': 'no-store',
          Connection: 'keep-alive',
          'X-Content-Type-Options': 'nosniff',
        });
        res.write(': canlab window events\n\n');
        streams.add(res);
        let framesTimer: NodeJS.Timeout | undefined;
        const send = (event: WorkspaceEvent['type'], data: unknown): void => {
          res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
        };
        const off = ws.on((event) => {
          if (event.type !== 'frames')
            return send(
              event.type,
              event.type === 'signals'
                ? { kind: event.step.kind, undone: event.undone, source: event.step.source }
                : event,
            );
          framesTimer ??= setTimeout(() => {
            framesTimer = undefined;
            send('frames', { frameCount: ws.status().frameCount });
          }, FRAMES_EVENT_INTERVAL_MS);
        });
        const keepalive = setInterval(() => res.write(': keepalive\n\n'), SSE_KEEPALIVE_MS);
        req.on('close', () => {
          off();
          clearInterval(keepalive);
          if (framesTimer) clearTimeout(framesTimer);
          streams.delete(res);
        });
        return undefined;
      },
    },
  ];

  const byPath = new Map<string, Route[]>();
  for (const route of routes) byPath.set(route.path, [...(byPath.get(route.path) ?? []), route]);

  const handle = async (req: http.IncomingMessage, res: http.ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? '/', 'http://canlab.invalid');
    const candidates = byPath.get(url.pathname);
    if (!candidates)
      throw new HttpError(
        404,
        'not_found',
        `no route ${url.pathname}${url.pathname === '/inject' ? ' (this server does not transmit)' : ''}`,
      );
    const route = candidates.find((r) => r.method === req.method);
    if (!route)
      throw new HttpError(
        405,
        'method_not_allowed',
        `${url.pathname} answers ${candidates.map((r) => r.method).join(', ')}`,
        undefined,
        { Allow: candidates.map((r) => r.method).join(', ') },
      );
    if (route.auth !== 'public') {
      const header = req.headers['x-api-token'];
      const given =
        typeof header === 'string'
          ? header
          : route.auth === 'token-or-query'
            ? (url.searchParams.get('token') ?? undefined)
            : undefined;
      if (given === undefined) throw new HttpError(401, 'unauthorized', 'the X-API-Token header is missing');
      if (!tokenMatches(given, token))
        throw new HttpError(401, 'unauthorized', 'the X-API-Token does not match this session’s token');
    }
    const body = await route.handle({
      url,
      req,
      res,
      body: () => readBody(req),
      raw: (limit) => readRaw(req, limit),
    });
    if (body !== undefined) sendJson(res, 200, body);
  };

  const server = http.createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (res.headersSent) {
        res.destroy();
        return;
      }
      const { status, body, headers } = errorAnswer(err);
      sendJson(res, status, body, headers);
    });
  });

  const warning = nonLoopbackWarning(host);
  if (warning) (options.warn ?? ((line: string) => process.stderr.write(`${line}\n`)))(warning);

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? DEFAULT_REST_PORT, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const shownHost = host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;

  return {
    url: `http://${shownHost}:${port}`,
    close: () =>
      new Promise<void>((resolve, reject) => {
        for (const res of streams) res.end();
        analysis.close();
        server.close((err) => (err ? reject(err) : resolve()));
        server.closeAllConnections();
      }),
  };
}

/** Maps what a handler threw to the documented status and body. */
function errorAnswer(err: unknown): {
  status: number;
  body: Record<string, unknown>;
  headers?: Record<string, string>;
} {
  if (err instanceof HttpError)
    return {
      status: err.status,
      body: { error: err.code, message: err.message, ...(err.field ? { field: err.field } : {}) },
      headers: err.headers,
    };
  if (err instanceof MarkRefusedError)
    return { status: 409, body: { error: err.reason, message: err.message, field: 'action' } };
  if (err instanceof TransmitRefusedError)
    return {
      status: err.reason === 'arm_tx_off' ? 409 : 503,
      body: { error: err.reason, message: err.message },
    };
  if (err instanceof CanlabInputError)
    return { status: 400, body: { error: 'bad_request', message: `${err.where}: ${err.message}` } };
  return {
    status: 500,
    body: { error: 'internal', message: err instanceof Error ? err.message : String(err) },
  };
}
