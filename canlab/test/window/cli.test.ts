/**
 * `canlab window` as a real process: prints the token and URLs, serves the REST API, the window
 * and the MCP endpoint, stops on SIGTERM; with a `virtual` adapter it records live frames and
 * injects only once ARM TX is on.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openReceiver } from '../../src/adapters/receive';
import { saveAdapter } from '../../src/adapters/store';
import { openTransmitter } from '../../src/adapters/transmit';
import type { AdapterConfig } from '../../src/adapters/types';
import { createCaptureWriter } from '../../src/formats';
import type { CanFrame } from '../../src/frame';

jest.setTimeout(60_000);

const BIN = path.resolve(__dirname, '../../bin/canlab.js');

interface Running {
  child: ChildProcessWithoutNullStreams;
  out: () => string;
  token: string;
  rest: string;
  mcp: string;
  exited: Promise<number | null>;
}

let dir: string;
let env: NodeJS.ProcessEnv;
beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'canlab-window-cli-'));
  env = {
    ...process.env,
    CANLAB_CONFIG_DIR: path.join(dir, 'config'),
    CANLAB_VIRTUAL_BUS_DIR: path.join(dir, 'buses'),
  };
  process.env['CANLAB_VIRTUAL_BUS_DIR'] = env['CANLAB_VIRTUAL_BUS_DIR'];
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

function start(args: string[]): Promise<Running> {
  const child = spawn(process.execPath, [BIN, 'window', ...args, '--port', '0', '--mcp-port', '0'], { env });
  let out = '';
  let err = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr.on('data', (c: Buffer) => (err += c.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    const timer = setInterval(() => {
      if (!out.includes('SIGTERM stops')) return;
      clearInterval(timer);
      const grab = (re: RegExp): string => re.exec(out)?.[1] ?? '';
      resolve({
        child,
        out: () => out,
        token: grab(/token: {2}(\S+)/),
        rest: grab(/REST: {3}(\S+)/),
        mcp: grab(/MCP: {4}(\S+)/),
        exited,
      });
    }, 50);
    void exited.then((code) => {
      clearInterval(timer);
      reject(new Error(`canlab window exited ${code}: ${out}${err}`));
    });
  });
}

it('runs approved plugins with the window app object and never runs unapproved ones', async () => {
  const plugins = path.join(dir, 'config', 'plugins');
  fs.mkdirSync(plugins, { recursive: true });
  const marker = (name: string): string => path.join(dir, `${name}.ran`);
  const plugin = (name: string): string =>
    [
      `exports.PLUGIN_NAME = '${name}';`,
      `exports.PLUGIN_VERSION = '1.0';`,
      `exports.register = (app) => {`,
      `  require('node:fs').writeFileSync(${JSON.stringify(marker(name))}, JSON.stringify({ frames: app.workspace.status().frameCount, rest: app.restUrl }));`,
      `  app.log('${name} ready');`,
      `};`,
    ].join('\n');
  fs.writeFileSync(path.join(plugins, 'trusted.js'), plugin('trusted'));
  fs.writeFileSync(path.join(plugins, 'stranger.js'), plugin('stranger'));
  const approve = spawn(process.execPath, [BIN, 'plugins', 'approve', path.join(plugins, 'trusted.js')], {
    env,
  });
  expect(await new Promise((r) => approve.on('exit', r))).toBe(0);

  const run = await start([]);
  try {
    expect(run.out()).toMatch(/plugins: trusted 1\.0; 1 awaiting approval/);
    expect(JSON.parse(fs.readFileSync(marker('trusted'), 'utf8'))).toEqual({ frames: 0, rest: run.rest });
    expect(fs.existsSync(marker('stranger'))).toBe(false);
    expect(run.out()).toMatch(/plugin: trusted ready/);
  } finally {
    await stop(run);
    fs.rmSync(plugins, { recursive: true, force: true });
  }
});

async function stop(run: Running): Promise<number | null> {
  run.child.kill('SIGTERM');
  return run.exited;
}

function json(
  url: string,
  token: string | undefined,
  body?: unknown,
): Promise<{ status: number; body: any }> {
  return fetch(url, {
    method: body === undefined ? 'GET' : 'POST',
    headers: {
      ...(token ? { 'X-API-Token': token } : {}),
      ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  }).then(async (r) => ({ status: r.status, body: await r.json().catch(() => null) }));
}

function runOnce(args: string[]): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, 'window', ...args], { env });
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    child.on('exit', (code) => resolve({ code, out, err }));
  });
}

it('prints the token and URLs, serves the window, REST and MCP, and stops on SIGTERM', async () => {
  const capture = path.join(dir, 'short.log');
  const writer = createCaptureWriter(capture);
  for (let i = 0; i < 20; i++)
    await writer.write({
      timestamp: i * 0.1,
      id: 0x321,
      extended: false,
      remote: false,
      error: false,
      fd: false,
      brs: false,
      esi: false,
      dlc: 2,
      data: Uint8Array.of(i, 7),
      channel: 0,
    });
  await writer.close();

  const run = await start([capture]);
  try {
    expect(run.token).toMatch(/^[A-Za-z0-9_-]{32}$/);
    expect(run.out()).toContain(`window: ${run.rest}/#token=${run.token}`);
    expect(run.out()).toContain('ARM TX: off (no transmitter attached: inject is refused)');
    expect(run.rest).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(run.mcp).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);

    const page = await fetch(`${run.rest}/`);
    expect(page.status).toBe(200);
    expect(await page.text()).not.toContain(run.token);
    expect((await json(`${run.rest}/status`, undefined)).status).toBe(401);
    expect((await json(`${run.rest}/status`, run.token)).body).toMatchObject({
      connection: 'loaded',
      source: capture,
      frameCount: 20,
      armTx: false,
      transmitter: false,
    });
    expect((await json(`${run.rest}/ui/arm-tx`, run.token, { on: true })).body).toEqual({ armTx: true });
    expect((await json(`${run.rest}/inject`, run.token, { id: '0x1', data: '00' })).body.error).toBe(
      'no_transmitter',
    );

    // The MCP endpoint answers an initialize over Streamable HTTP.
    const init = await fetch(run.mcp, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: {
          protocolVersion: '2025-03-26',
          capabilities: {},
          clientInfo: { name: 'test', version: '0' },
        },
      }),
    });
    expect(init.status).toBe(200);
  } finally {
    expect(await stop(run)).toBe(0);
  }
  expect(run.out()).toContain('stopped (SIGTERM)');
});

it('records a virtual bus live and injects onto it only with ARM TX on', async () => {
  const adapter: AdapterConfig = {
    name: 'vbus',
    backend: 'virtual',
    channel: 'windowbus',
    fd: false,
    extras: {},
  };
  await saveAdapter(adapter, env['CANLAB_CONFIG_DIR']);
  const listener = await openReceiver(adapter);
  const heard: CanFrame[] = [];
  listener.onFrame((f) => heard.push(f));
  const sender = await openTransmitter(adapter);
  const run = await start(['--adapter', 'vbus']);
  try {
    expect(run.out()).toContain('live: vbus (virtual windowbus)');
    expect(run.out()).toContain('this adapter can transmit once ARM TX is on');

    // Frames on the bus reach the window's workspace.
    await sender.send({
      timestamp: 0,
      id: 0x42,
      extended: false,
      remote: false,
      error: false,
      fd: false,
      brs: false,
      esi: false,
      dlc: 1,
      data: Uint8Array.of(9),
      channel: 0,
    });
    let frames: any[] = [];
    for (let i = 0; i < 40 && frames.length === 0; i++) {
      await new Promise((r) => setTimeout(r, 50));
      frames = (await json(`${run.rest}/frames`, run.token)).body.frames;
    }
    expect(frames).toEqual([expect.objectContaining({ id: '0x042', data: '09' })]);
    expect((await json(`${run.rest}/status`, run.token)).body).toMatchObject({
      connection: 'recording',
      transmitter: true,
      armTx: false,
    });

    const refused = await json(`${run.rest}/inject`, run.token, { id: '0x123', data: 'CA FE' });
    expect([refused.status, refused.body.error]).toEqual([409, 'arm_tx_off']);
    await new Promise((r) => setTimeout(r, 300));
    expect(heard.filter((f) => f.id === 0x123)).toEqual([]);

    await json(`${run.rest}/ui/arm-tx`, run.token, { on: true });
    expect((await json(`${run.rest}/inject`, run.token, { id: '0x123', data: 'CA FE' })).status).toBe(200);
    for (let i = 0; i < 40 && !heard.some((f) => f.id === 0x123); i++)
      await new Promise((r) => setTimeout(r, 50));
    expect(heard.filter((f) => f.id === 0x123).map((f) => [...f.data])).toEqual([[0xca, 0xfe]]);
  } finally {
    expect(await stop(run)).toBe(0);
    await listener.close();
    await sender.close();
  }
});

it('refuses bad arguments with one line', async () => {
  const both = await runOnce(['x.log', '--adapter', 'vbus']);
  expect([both.code, both.err]).toEqual([
    1,
    'canlab: window: open either a capture file or a live --adapter, not both\n',
  ]);
  const port = await runOnce(['--port', 'http']);
  expect([port.code, port.err]).toEqual([
    1,
    "canlab: window: --port must be a port number 0..65535 (0 picks a free one), not 'http'\n",
  ]);
  const missing = await runOnce([path.join(dir, 'none.log')]);
  expect(missing.code).toBe(1);
  expect(missing.err).toContain('no such file');
});
