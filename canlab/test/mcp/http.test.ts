import { readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CanFrame } from '../../src/frame';
import { startWindowMcpServer, type McpHttpServer } from '../../src/mcp/http';
import { TOOL_NAMES } from '../../src/mcp/tools';
import type { WorkspaceEvent } from '../../src/workspace/types';
import { newSignal, Workspace } from '../../src/workspace/workspace';
import { call, callError, exerciseEveryTool, exerciseInvalidArguments, expectAllTools } from './scenario';
import { writeScene, type SceneFiles } from './scene';

jest.setTimeout(60_000);

async function connect(url: string, token?: string): Promise<Client> {
  const client = new Client({ name: 'canlab-test', version: '1' });
  await client.connect(
    new StreamableHTTPClientTransport(
      new URL(url),
      token === undefined ? {} : { requestInit: { headers: { authorization: `Bearer ${token}` } } },
    ),
  );
  return client;
}

const initialize = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
});
const mcpHeaders = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

let scene: SceneFiles;
beforeAll(async () => {
  scene = await writeScene();
});
afterAll(() => rmSync(scene.dir, { recursive: true, force: true }));

describe('the in-window tool server over Streamable HTTP', () => {
  let workspace: Workspace;
  let server: McpHttpServer;
  let client: Client;
  const sent: CanFrame[] = [];

  beforeAll(async () => {
    workspace = new Workspace();
    // Armed, with a transmitter attached: if any tool reached inject, a frame would go out.
    workspace.setArmTx(true);
    workspace.attachTransmitter({ send: async (frame) => void sent.push(frame) });
    server = await startWindowMcpServer(workspace, { port: 0 });
    client = await connect(server.url);
  });
  afterAll(async () => {
    await client.close();
    await server.close();
  });

  it('serves at 127.0.0.1/mcp and lists exactly the 29 documented tools', async () => {
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
    await expectAllTools(client);
    const doc = readFileSync(join(__dirname, '../../docs/mcp.md'), 'utf8');
    for (const name of TOOL_NAMES) expect(doc).toContain(`### \`${name}\``);
  });

  it("answers every tool with valid arguments on the window's workspace, and refuses invalid ones", async () => {
    const inject = jest.spyOn(workspace, 'inject');
    const called = await exerciseEveryTool(client, scene);
    expect([...called].sort()).toEqual([...TOOL_NAMES].sort());
    // The tools acted on this very workspace.
    expect(workspace.signals().map((d) => d.signal.name)).toEqual(['Steer']);
    expect(workspace.marks().map((m) => [m.label, m.source])).toEqual([
      ['button', 'mcp'],
      ['note', 'mcp'],
    ]);
    const refused = await exerciseInvalidArguments(client, scene);
    expect([...refused].sort()).toEqual([...TOOL_NAMES].sort());
    expect(inject).not.toHaveBeenCalled();
    expect(sent).toEqual([]);
  });

  it("defines a signal as one undoable step the window sees, and never undoes the analyst's step", async () => {
    const events: WorkspaceEvent[] = [];
    const off = workspace.on((e) => events.push(e));
    await call(client, 'define_signal', {
      id: '0x500',
      name: 'Coolant',
      startBit: 8,
      length: 16,
      factor: 0.05,
      offset: -10,
      unit: 'C',
    });
    expect(events.filter((e) => e.type === 'signals')).toEqual([
      expect.objectContaining({
        undone: false,
        step: expect.objectContaining({ kind: 'define', source: 'mcp' }),
      }),
    ]);
    expect(workspace.history().undo.at(-1)).toMatchObject({
      kind: 'define',
      source: 'mcp',
      definition: { messageId: 0x500 },
    });

    workspace.defineSignal(
      { messageId: 0x300, extended: false, signal: newSignal({ name: 'Button', startBit: 24, length: 8 }) },
      'window',
    );
    expect(await callError(client, 'undo', {})).toMatch(
      /newest step \(define Button\) was made by window, not by a tool/,
    );
    expect(workspace.signals().map((d) => d.signal.name)).toContain('Button');

    workspace.undo(); // the analyst takes back their own step; the assistant's is newest again
    const undone = await call(client, 'undo');
    expect(undone.undone).toMatchObject({ kind: 'define', signal: { name: 'Coolant' } });
    expect(workspace.signals().map((d) => d.signal.name)).not.toContain('Coolant');
    off();
  });

  it('has no tool that transmits: no name, no handler path reaches inject', () => {
    expect(TOOL_NAMES.filter((n) => /inject|transmit|send|tx|arm/i.test(n))).toEqual([]);
    const sources: string[] = [];
    const walk = (dir: string): void => {
      for (const entry of readdirSync(dir)) {
        const path = join(dir, entry);
        if (statSync(path).isDirectory()) walk(path);
        else sources.push(readFileSync(path, 'utf8'));
      }
    };
    walk(join(__dirname, '../../src/mcp'));
    for (const text of sources) expect(text).not.toMatch(/\.inject\(|setArmTx|attachTransmitter|Transmitter/);
  });

  it('answers protocol misuse with documented statuses', async () => {
    const base = server.url.replace(/\/mcp$/, '');
    expect(
      (await fetch(`${base}/other`, { method: 'POST', headers: mcpHeaders, body: initialize })).status,
    ).toBe(404);
    const noSession = await fetch(server.url, {
      method: 'POST',
      headers: mcpHeaders,
      body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }),
    });
    expect(noSession.status).toBe(400);
    expect(((await noSession.json()) as any).error.message).toMatch(/no mcp-session-id/);
    const unknown = await fetch(server.url, {
      method: 'POST',
      headers: { ...mcpHeaders, 'mcp-session-id': 'nope' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'tools/list' }),
    });
    expect(unknown.status).toBe(404);
    const notJson = await fetch(server.url, { method: 'POST', headers: mcpHeaders, body: '{' });
    expect(notJson.status).toBe(400);
    const browser = await fetch(server.url, {
      method: 'POST',
      headers: { ...mcpHeaders, origin: 'http://evil.example' },
      body: initialize,
    });
    expect(browser.status).toBe(403);
    expect(await browser.json()).toMatchObject({ error: 'forbidden_origin' });
  });
});

describe('the bearer token', () => {
  let server: McpHttpServer;
  const workspace = new Workspace();

  beforeAll(async () => {
    server = await startWindowMcpServer(workspace, { port: 0, bearerToken: 'sekret-token' });
  });
  afterAll(() => server.close());

  it('refuses a request without it or with a wrong one with 401, and serves with it', async () => {
    const none = await fetch(server.url, { method: 'POST', headers: mcpHeaders, body: initialize });
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toBe('Bearer');
    expect(await none.json()).toEqual({
      error: 'unauthorized',
      message: 'this tool server needs Authorization: Bearer <token>',
    });
    const wrong = await fetch(server.url, {
      method: 'POST',
      headers: { ...mcpHeaders, authorization: 'Bearer sekret-tokem' },
      body: initialize,
    });
    expect(wrong.status).toBe(401);
    await expect(connect(server.url, 'wrong')).rejects.toThrow();
    await expect(connect(server.url)).rejects.toThrow();

    const client = await connect(server.url, 'sekret-token');
    expect((await client.listTools()).tools).toHaveLength(29);
    await call(client, 'write_memory', { key: 'k', value: 'v' });
    expect(workspace.memory()).toEqual([expect.objectContaining({ key: 'k', value: 'v' })]);
    await client.close();
  });
});
