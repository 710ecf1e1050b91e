import { rmSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startWindowMcpServer, type McpHttpServer } from '../../src/mcp/http';
import { TOOL_NAMES } from '../../src/mcp/tools';
import { Workspace } from '../../src/workspace/workspace';
import { LAUNCHER, launchStdio, runLauncher, type LaunchedClient } from './launcher';
import { call, callError, exerciseEveryTool, exerciseInvalidArguments, expectAllTools } from './scenario';
import { writeScene, type SceneFiles } from './scene';

jest.setTimeout(90_000);

const TOKEN = 'window-token-123';

describe('canlab-mcp --attach: stdio bridged to a running window', () => {
  let scene: SceneFiles;
  let workspace: Workspace;
  let server: McpHttpServer;
  let bridge: LaunchedClient;

  beforeAll(async () => {
    scene = await writeScene();
    workspace = new Workspace();
    server = await startWindowMcpServer(workspace, { port: 0, bearerToken: TOKEN });
    bridge = await launchStdio(['--attach', server.url, '--token', TOKEN]);
  });
  afterAll(async () => {
    await bridge.close();
    await server.close();
    rmSync(scene.dir, { recursive: true, force: true });
  });

  it("relays every tool to the window's workspace, errors included", async () => {
    await expectAllTools(bridge.client);
    const called = await exerciseEveryTool(bridge.client, scene);
    expect(called.size).toBe(TOOL_NAMES.length);
    const refused = await exerciseInvalidArguments(bridge.client, scene);
    expect(refused.size).toBe(TOOL_NAMES.length);
    // The window's own workspace holds what the stdio client did, as steps made by a tool.
    expect(workspace.status()).toMatchObject({ connection: 'loaded', source: scene.capture, signalCount: 1 });
    expect(workspace.history().undo.map((s) => [s.kind, s.definition.signal.name, s.source])).toEqual([
      ['define', 'Steer', 'mcp'],
    ]);
    expect(bridge.errors).toEqual([]);
    expect(bridge.stderr()).toContain(`attached to ${server.url}`);
  });

  it('refuses to start with a wrong token, saying why, with nothing on stdout', async () => {
    const wrong = await runLauncher(['--attach', server.url, '--token', 'nope']);
    expect(wrong).toMatchObject({ code: 1, stdout: '' });
    expect(wrong.stderr).toMatch(/^canlab-mcp: cannot attach to http:\/\/127\.0\.0\.1:\d+\/mcp: /);
    const none = await runLauncher(['--attach', server.url]);
    expect(none.code).toBe(1);
    expect(none.stderr).toMatch(/pass --token/);
  });
});

describe('the bridge when the window goes away', () => {
  it('answers tool calls with a tool error instead of dying', async () => {
    const workspace = new Workspace();
    const server = await startWindowMcpServer(workspace, { port: 0 });
    const bridge = await launchStdio(['--attach', server.url]);
    expect((await call(bridge.client, 'status')).status.connection).toBe('empty');
    await server.close();
    expect(await callError(bridge.client, 'status', {})).toMatch(/the window's tool server did not answer/);
    await bridge.close();
  });
});

describe('canlab-mcp --http', () => {
  it('serves the tools over Streamable HTTP on its own workspace until SIGTERM', async () => {
    const scene = await writeScene();
    const child = spawn(process.execPath, [LAUNCHER, '--http', '--port', '0'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
    const url = await new Promise<string>((resolve, reject) => {
      let stderr = '';
      child.stderr.on('data', (c: Buffer) => {
        stderr += c.toString('utf8');
        const m = /tools at (http:\/\/\S+\/mcp)/.exec(stderr);
        if (m) resolve(m[1]!);
      });
      child.on('exit', (code) => reject(new Error(`exited ${code}: ${stderr}`)));
    });
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
    const client = new Client({ name: 'canlab-test', version: '1' });
    await client.connect(new StreamableHTTPClientTransport(new URL(url)));
    await expectAllTools(client);
    expect((await call(client, 'load_capture', { path: scene.capture })).status.frameCount).toBe(3525);
    expect((await call(client, 'detect_counters', { id: '0x500' })).ids[0].candidates[0].field).toEqual({
      startBit: 0,
      length: 8,
      byteOrder: 'little_endian',
    });
    await client.close();
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(stdout).toBe('');
    rmSync(scene.dir, { recursive: true, force: true });
  });
});
