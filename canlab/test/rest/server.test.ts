import http from 'node:http';
import type { CanFrame } from '../../src/frame';
import {
  createRestServer,
  DEFAULT_FRAMES_N,
  inlineWindowAssets,
  isLoopbackHost,
  MAX_FRAMES_N,
  nonLoopbackWarning,
  type RestServer,
} from '../../src/rest/server';
import { Workspace } from '../../src/workspace/workspace';

const TOKEN = 'test-token-0123456789abcdef';

function frame(t: number, id: number, data: number[]): CanFrame {
  return {
    timestamp: t,
    id,
    extended: false,
    remote: false,
    error: false,
    fd: false,
    brs: false,
    esi: false,
    dlc: data.length,
    data: Uint8Array.from(data),
    channel: 0,
  };
}

function busFrames(count: number): CanFrame[] {
  return Array.from({ length: count }, (_, i) =>
    frame(i * 0.01, 0x100, [i & 0xff, 0xde, 0xad, (i * 7) & 0xff]),
  );
}

interface Answer {
  status: number;
  body: any;
  headers: Headers;
}

async function call(
  server: RestServer,
  method: string,
  path: string,
  opts: { token?: string | null; body?: unknown; raw?: string } = {},
): Promise<Answer> {
  const headers: Record<string, string> = {};
  const token = opts.token === undefined ? TOKEN : opts.token;
  if (token !== null) headers['X-API-Token'] = token;
  const body = opts.raw ?? (opts.body === undefined ? undefined : JSON.stringify(opts.body));
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const res = await fetch(server.url + path, { method, headers, body });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // HTML or an event stream: keep the text.
  }
  return { status: res.status, body: parsed, headers: res.headers };
}

/** A workspace with 300 frames of 0x100, a spy transmitter, and a window-mode server on a free loopback port. */
async function setup(allowInject = true): Promise<{ ws: Workspace; server: RestServer; sent: CanFrame[] }> {
  const ws = new Workspace();
  ws.appendFrames(busFrames(300));
  const sent: CanFrame[] = [];
  ws.attachTransmitter({ send: async (f) => void sent.push(f) });
  const server = await createRestServer({ workspace: ws, token: TOKEN, allowInject, port: 0 });
  return { ws, server, sent };
}

describe('inlineWindowAssets', () => {
  const css = 'b{color:red}';
  const js = "x.replace(/a/, '$&$1')";
  const inlined = `<head><style>${css}</style></head><body><script>${js}</script></body>`;

  it.each([
    ['as written by hand', '<link rel="stylesheet" href="style.css">', '<script src="app.js"></script>'],
    ['as Prettier writes it', '<link rel="stylesheet" href="style.css" />', '<script src="app.js"></script>'],
    [
      'reflowed, reordered and single-quoted',
      "<link\n  href='style.css'\n  rel='stylesheet'\n/>",
      "<script\n  src='app.js'\n>\n</script >",
    ],
  ])('inlines the stylesheet and script %s, taking `$` literally', (_, link, script) => {
    expect(inlineWindowAssets(`<head>${link}</head><body>${script}</body>`, css, js)).toBe(inlined);
  });

  it('is undefined when either tag is gone', () => {
    const script = '<script src="app.js"></script>';
    expect(inlineWindowAssets(`<head></head><body>${script}</body>`, css, js)).toBeUndefined();
    expect(inlineWindowAssets('<link rel="stylesheet" href="style.css" />', css, js)).toBeUndefined();
  });
});

describe('REST API', () => {
  let ctx: Awaited<ReturnType<typeof setup>>;
  beforeEach(async () => {
    ctx = await setup();
  });
  afterEach(() => ctx.server.close());

  it('serves the window at GET / without a token and without the token in the page', async () => {
    expect(ctx.server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const page = await call(ctx.server, 'GET', '/', { token: null });
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toContain('text/html');
    expect(page.body).toContain('ARM TX');
    expect(page.body).not.toContain(TOKEN);
    expect(page.headers.get('content-security-policy')).toContain("script-src 'sha256-");
    expect(page.body).toContain('<style>');
    expect(page.body).not.toMatch(/<link[^>]*stylesheet|<script[^>]*\ssrc=/);
  });

  it('needs the X-API-Token on every other route: 401 when missing or wrong', async () => {
    const routes: Array<[string, string]> = [
      ['GET', '/frames'],
      ['GET', '/signals'],
      ['GET', '/status'],
      ['GET', '/memory'],
      ['POST', '/mark'],
      ['POST', '/inject'],
      ['GET', '/ui/state'],
      ['POST', '/ui/undo'],
      ['GET', '/ui/events'],
    ];
    for (const [method, path] of routes) {
      const body = method === 'POST' ? { label: 'x' } : undefined;
      const missing = await call(ctx.server, method, path, { token: null, body });
      expect([path, missing.status, missing.body]).toEqual([
        path,
        401,
        { error: 'unauthorized', message: 'the X-API-Token header is missing' },
      ]);
      const wrong = await call(ctx.server, method, path, { token: 'nope', body });
      expect([path, wrong.status, wrong.body.error]).toEqual([path, 401, 'unauthorized']);
    }
    // A query token is accepted only by the event stream (EventSource cannot send headers).
    expect((await call(ctx.server, 'GET', `/status?token=${TOKEN}`, { token: null })).status).toBe(401);
    expect(ctx.ws.marks()).toEqual([]);
  });

  it(`GET /frames answers the latest ${DEFAULT_FRAMES_N} by default, up to ${MAX_FRAMES_N}, in the spec's shape`, async () => {
    const all = await call(ctx.server, 'GET', '/frames');
    expect(all.status).toBe(200);
    expect(all.body.count).toBe(100);
    expect(all.body.total).toBe(300);
    expect(all.body.frames[99]).toEqual({
      timestamp: 2.99,
      id: '0x100',
      extended: false,
      channel: 0,
      dlc: 4,
      data: '2B DE AD 2D',
      fd: false,
      remote: false,
      error: false,
    });
    expect(all.body.frames[0].timestamp).toBeCloseTo(2.0, 6);
    const five = await call(ctx.server, 'GET', '/frames?n=5');
    expect(five.body.frames.map((f: any) => f.timestamp)).toEqual(
      [2.95, 2.96, 2.97, 2.98, 2.99].map((t) => expect.closeTo(t, 6)),
    );
    expect((await call(ctx.server, 'GET', `/frames?n=${MAX_FRAMES_N}`)).body.count).toBe(300);
    for (const n of ['0', String(MAX_FRAMES_N + 1), 'abc', '1.5', '-3']) {
      const bad = await call(ctx.server, 'GET', `/frames?n=${n}`);
      expect([n, bad.status, bad.body.error, bad.body.field]).toEqual([n, 400, 'bad_request', 'n']);
    }
    expect((await call(ctx.server, 'GET', '/frames?id=0x200')).body.count).toBe(0);
    expect((await call(ctx.server, 'GET', '/frames?id=zz')).body.field).toBe('id');
  });

  it('GET /status, /memory and /signals answer the workspace', async () => {
    const status = await call(ctx.server, 'GET', '/status');
    expect(status.body).toMatchObject({
      connection: 'recording',
      frameCount: 300,
      idCount: 1,
      armTx: false,
      transmitter: true,
      injectRoute: true,
      openMarks: [],
    });
    ctx.ws.remember('speed', '0x100 byte 3');
    expect((await call(ctx.server, 'GET', '/memory')).body.entries).toEqual([
      { key: 'speed', value: '0x100 byte 3', at: expect.any(String) },
    ]);
    const defined = await call(ctx.server, 'POST', '/ui/signals', {
      body: { messageId: '0x100', name: 'Seq', startBit: 0, length: 8, factor: 2, unit: 'n' },
    });
    expect(defined.status).toBe(200);
    expect(defined.body.step).toMatchObject({
      kind: 'define',
      source: 'window',
      signal: { messageId: '0x100', name: 'Seq' },
    });
    expect((await call(ctx.server, 'GET', '/signals')).body.signals).toEqual([
      {
        messageId: '0x100',
        message: 'MSG_100',
        name: 'Seq',
        value: (299 % 256) * 2,
        raw: 299 % 256,
        unit: 'n',
        timestamp: 2.99,
      },
    ]);
    const bad = await call(ctx.server, 'POST', '/ui/signals', {
      body: { messageId: '0x100', name: 'Seq', startBit: 0, length: 99 },
    });
    expect([bad.status, bad.body.field]).toEqual([400, 'length']);
    const badName = await call(ctx.server, 'POST', '/ui/signals', {
      body: { messageId: '0x100', name: '9x', startBit: 0, length: 8 },
    });
    expect([badName.status, badName.body.message]).toEqual([400, expect.stringContaining('DBC identifier')]);
  });

  it('POST /mark follows the interval state machine, refusing with 409', async () => {
    const opened = await call(ctx.server, 'POST', '/mark', { body: { label: 'brake' } });
    expect(opened.status).toBe(200);
    expect(opened.body.mark).toMatchObject({ label: 'brake', kind: 'interval', start: 2.99, source: 'http' });
    expect(opened.body.mark.end).toBeUndefined();
    const again = await call(ctx.server, 'POST', '/mark', { body: { label: 'brake', action: 'begin' } });
    expect([again.status, again.body.error, again.body.field]).toEqual([409, 'already_open', 'action']);
    const closed = await call(ctx.server, 'POST', '/mark', {
      body: { label: 'brake', action: 'toggle', at: 3.5 },
    });
    expect(closed.body.mark).toMatchObject({ id: opened.body.mark.id, start: 2.99, end: 3.5 });
    const none = await call(ctx.server, 'POST', '/mark', { body: { label: 'brake', action: 'end' } });
    expect([none.status, none.body.error]).toEqual([409, 'none_open']);
    expect(
      (await call(ctx.server, 'POST', '/mark', { body: { label: 'horn', action: 'point', at: 1 } })).body
        .mark,
    ).toMatchObject({ kind: 'point', start: 1, end: 1 });
    await call(ctx.server, 'POST', '/mark', { body: { label: 'door', action: 'begin', at: 2 } });
    expect((await call(ctx.server, 'GET', '/status')).body.openMarks).toEqual(['door']);

    for (const [raw, field] of [
      ['{"label":', 'body'],
      ['[1]', 'body'],
      ['{}', 'label'],
      ['{"label":"x","action":"sideways"}', 'action'],
      ['{"label":"x","at":"soon"}', 'at'],
    ] as const) {
      const bad = await call(ctx.server, 'POST', '/mark', { raw });
      expect([raw, bad.status, bad.body.field]).toEqual([raw, 400, field]);
      expect(bad.body.message).toEqual(expect.any(String));
    }

    const timeline = await call(ctx.server, 'GET', '/ui/timeline');
    expect(timeline.body.marks.map((m: any) => [m.label, m.start, m.end])).toEqual([
      ['brake', 2.99, 3.5],
      ['horn', 1, 1],
      ['door', 2, undefined],
    ]);
    const intel = await call(ctx.server, 'GET', '/ui/intelligence');
    expect(intel.body.items[0]).toMatchObject({ kind: 'mark', title: expect.stringContaining('door') });
    expect(intel.body.items.filter((i: any) => i.kind === 'mark')).toHaveLength(3);
  });

  it('POST /inject needs the token, then ARM TX, then a valid frame and a transmitter; refusals send nothing', async () => {
    const body = { id: '0x123', data: 'DE AD BE EF' };
    expect((await call(ctx.server, 'POST', '/inject', { token: null, body })).status).toBe(401);
    const unarmed = await call(ctx.server, 'POST', '/inject', { body });
    expect([unarmed.status, unarmed.body.error]).toEqual([409, 'arm_tx_off']);
    expect(ctx.sent).toEqual([]);

    expect((await call(ctx.server, 'POST', '/ui/arm-tx', { body: { on: true } })).body).toEqual({
      armTx: true,
    });
    expect((await call(ctx.server, 'POST', '/inject', { token: 'wrong', body })).status).toBe(401);
    for (const [bad, field] of [
      [{ data: 'DE' }, 'id'],
      [{ id: '0x800', extended: false, data: '' }, 'id'],
      [{ id: '0x123', data: 'XYZ' }, 'data'],
      [{ id: '0x123', data: '01 02 03 04 05 06 07 08 09' }, 'data'],
      [{ id: 'hello', data: '' }, 'id'],
    ] as const) {
      const answer = await call(ctx.server, 'POST', '/inject', { body: bad });
      expect([answer.status, answer.body.field]).toEqual([400, field]);
    }
    expect(ctx.sent).toEqual([]);

    const ok = await call(ctx.server, 'POST', '/inject', { body });
    expect(ok.status).toBe(200);
    expect(ok.body.sent).toMatchObject({ id: '0x123', data: 'DE AD BE EF', dlc: 4, direction: 'tx' });
    expect(ctx.sent).toHaveLength(1);
    expect([...ctx.sent[0]!.data]).toEqual([0xde, 0xad, 0xbe, 0xef]);
    expect(ctx.sent[0]).toMatchObject({ id: 0x123, extended: false, channel: 0 });

    ctx.ws.attachTransmitter(undefined);
    const noTx = await call(ctx.server, 'POST', '/inject', { body });
    expect([noTx.status, noTx.body.error]).toEqual([503, 'no_transmitter']);

    ctx.ws.attachTransmitter({ send: () => Promise.reject(new Error('bus off')) });
    const failed = await call(ctx.server, 'POST', '/inject', { body });
    expect([failed.status, failed.body.error, failed.body.message]).toEqual([
      502,
      'send_failed',
      expect.stringContaining('bus off'),
    ]);
  });

  it('answers 404 for unknown routes, 405 for a wrong method, 413 for a huge body, 409 for nothing to undo', async () => {
    expect(await call(ctx.server, 'GET', '/nope')).toMatchObject({
      status: 404,
      body: { error: 'not_found' },
    });
    const wrong = await call(ctx.server, 'DELETE', '/frames');
    expect(wrong.status).toBe(405);
    expect(wrong.headers.get('allow')).toBe('GET');
    const huge = await call(ctx.server, 'POST', '/mark', {
      raw: JSON.stringify({ label: 'x'.repeat(70_000) }),
    });
    expect(huge.status).toBe(413);
    expect((await call(ctx.server, 'POST', '/ui/undo')).body.error).toBe('nothing_to_undo');
    expect((await call(ctx.server, 'POST', '/ui/redo')).body.error).toBe('nothing_to_redo');
    expect((await call(ctx.server, 'POST', '/ui/arm-tx', { body: {} })).body.field).toBe('on');
    const load = await call(ctx.server, 'POST', '/ui/load', { body: { path: '/no/such/capture.log' } });
    expect([load.status, load.body.message]).toEqual([400, expect.stringContaining('no such file')]);
  });

  it('undoes and redoes signal steps through the window API', async () => {
    await call(ctx.server, 'POST', '/ui/signals', {
      body: { messageId: '0x100', name: 'A', startBit: 0, length: 8 },
    });
    await call(ctx.server, 'POST', '/ui/signals/remove', { body: { messageId: '0x100', name: 'A' } });
    let state = (await call(ctx.server, 'GET', '/ui/state')).body;
    expect(state.signals).toEqual([]);
    expect(state.history).toMatchObject({ undo: 2, redo: 0, lastUndo: { kind: 'remove' } });
    expect((await call(ctx.server, 'POST', '/ui/undo')).body.step.kind).toBe('remove');
    state = (await call(ctx.server, 'GET', '/ui/state')).body;
    expect(state.signals.map((s: any) => s.name)).toEqual(['A']);
    expect(state.history).toMatchObject({ undo: 1, redo: 1, nextRedo: { kind: 'remove' } });
    const missing = await call(ctx.server, 'POST', '/ui/signals/remove', {
      body: { messageId: '0x100', name: 'B' },
    });
    expect([missing.status, missing.body.message]).toEqual([400, expect.stringContaining('no signal B')]);
  });

  it('streams workspace events to the window, token by query parameter', async () => {
    const received = await new Promise<string>((resolve, reject) => {
      const req = http.get(`${ctx.server.url}/ui/events?token=${TOKEN}`, (res) => {
        expect(res.headers['content-type']).toContain('text/event-stream');
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          text += chunk;
          if (text.includes('event: mark')) {
            req.destroy();
            resolve(text);
          }
        });
        void call(ctx.server, 'POST', '/mark', { body: { label: 'sse', action: 'point' } });
      });
      req.on('error', reject);
    });
    expect(received).toMatch(/event: mark\ndata: \{"type":"mark","mark":\{"id":1,"label":"sse"/);
  });
});

describe('REST API in capture mode (allowInject false)', () => {
  it('does not serve /inject at all, whatever the token, ARM TX and transmitter say', async () => {
    const { ws, server, sent } = await setup(false);
    try {
      ws.setArmTx(true);
      const answer = await call(server, 'POST', '/inject', { body: { id: '0x123', data: '01' } });
      expect(answer.status).toBe(404);
      expect(answer.body).toEqual({
        error: 'not_found',
        message: 'no route /inject (this server does not transmit)',
      });
      expect((await call(server, 'GET', '/status')).body.injectRoute).toBe(false);
      expect(sent).toEqual([]);
    } finally {
      await server.close();
    }
  });
});

describe('bind address', () => {
  it('warns for any host beyond loopback', () => {
    for (const host of ['127.0.0.1', '127.1.2.3', 'localhost', '::1', '[::1]']) {
      expect([host, isLoopbackHost(host), nonLoopbackWarning(host)]).toEqual([host, true, undefined]);
    }
    for (const host of ['0.0.0.0', '192.168.1.20', '::', 'example.com']) {
      expect(nonLoopbackWarning(host)).toBe(
        `canlab: warning: the REST API is bound to ${host}, not loopback: anyone who can reach this address and learns the token can read the capture, edit signals and (with ARM TX on) transmit; this is not intended use`,
      );
    }
  });
});
