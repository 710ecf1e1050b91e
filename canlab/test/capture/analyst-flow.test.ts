/**
 * Issue 7's analyst story as one run: record on the virtual bus with HTTP marks, open the
 * recording (segments + marks) in a workspace, ask an MCP client to rank bytes against the marks
 * and define the found signal, see it in the signal list the window shows, undo it from the
 * window's side, and find inject refused until ARM TX is on.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { openTransmitter, type AdapterTransmitter } from '../../src/adapters/transmit';
import { PROJECT_FILE } from '../../src/capture/project';
import type { CanFrame } from '../../src/frame';
import { startWindowMcpServer } from '../../src/mcp/http';
import { TransmitRefusedError } from '../../src/workspace/errors';
import { Workspace } from '../../src/workspace/workspace';
import { killLeftovers, startCanlab } from '../adapters/process';

jest.setTimeout(120_000);

let tmp: string;
let env: NodeJS.ProcessEnv;
beforeAll(() => {
  tmp = mkdtempSync(path.join(os.tmpdir(), 'canlab-analyst-'));
  env = { CANLAB_VIRTUAL_BUS_DIR: path.join(tmp, 'bus'), CANLAB_CONFIG_DIR: path.join(tmp, 'config') };
  Object.assign(process.env, env);
});
afterEach(killLeftovers);
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const frame = (id: number, data: number[]): CanFrame => ({
  timestamp: 0,
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
});

it('records, opens, ranks with MCP, defines the signal, undoes it, and injects only when armed', async () => {
  const out = path.join(tmp, 'drive');
  const tokenFile = path.join(tmp, 'token');
  const capture = startCanlab(
    [
      'capture',
      '--interface',
      'virtual',
      '--channel',
      'car',
      '--out',
      out,
      '--http',
      '0',
      '--token-file',
      tokenFile,
    ],
    env,
  );
  const url = (await capture.waitFor(/http: (http:\/\/127\.0\.0\.1:\d+)/))[1]!;
  await capture.waitFor(/q stops/);
  const headers = {
    'X-API-Token': (await readFile(tokenFile, 'utf8')).trim(),
    'content-type': 'application/json',
  };
  const mark = async (action: string) =>
    expect(
      (
        await fetch(`${url}/mark`, {
          method: 'POST',
          headers,
          body: JSON.stringify({ label: 'brake', action }),
        })
      ).status,
    ).toBe(200);

  // The car: 0x200 byte 1 carries brake pressure only while the pedal is down; byte 0 is a counter.
  const car: AdapterTransmitter = await openTransmitter({
    name: 'car',
    backend: 'virtual',
    channel: 'car',
    fd: false,
    extras: {},
  });
  let sent = 0;
  const drive = async (frames: number, braking: boolean) => {
    for (let i = 0; i < frames; i++, sent++) {
      await car.send(frame(0x200, [sent & 0xff, braking ? 0x20 + ((sent * 7) % 90) : 0, 0x11, 0x22]));
      await new Promise((r) => setTimeout(r, 2));
    }
    for (let i = 0; ; i++) {
      const status = (await (await fetch(`${url}/status`, { headers })).json()) as { frameCount: number };
      if (status.frameCount >= sent) break;
      if (i > 200) throw new Error(`capture holds ${status.frameCount} of ${sent} frames`);
      await new Promise((r) => setTimeout(r, 25));
    }
  };
  await drive(60, false);
  await mark('begin');
  await drive(60, true);
  await mark('end');
  await drive(60, false);
  await car.close();
  capture.proc.kill('SIGTERM');
  expect(await capture.exited).toBe(0);

  // Open the recording where the analyst works: frames of every segment, and the marks.
  const workspace = new Workspace();
  const status = await workspace.loadCapture(path.join(out, PROJECT_FILE));
  expect(status.frameCount).toBe(180);
  expect(workspace.marks()).toEqual([
    expect.objectContaining({ label: 'brake', kind: 'interval', source: 'http', end: expect.any(Number) }),
  ]);

  const mcp = await startWindowMcpServer(workspace, { port: 0 });
  const client = new Client({ name: 'analyst', version: '1' });
  await client.connect(new StreamableHTTPClientTransport(new URL(mcp.url)));
  try {
    const ranked = (await client.callTool({ name: 'rank_bytes', arguments: { label: 'brake' } }))
      .structuredContent as {
      bytes: Array<{ id: string; byte: number; changeRateInside: number; changeRateOutside: number }>;
    };
    expect(ranked.bytes[0]).toMatchObject({ id: '0x200', byte: 1 });
    expect(ranked.bytes[0]!.changeRateOutside).toBeLessThan(0.05);

    const defined = await client.callTool({
      name: 'define_signal',
      arguments: { id: '0x200', name: 'BrakePressure', startBit: 8, length: 8, unit: 'bar' },
    });
    expect(defined.isError).toBeFalsy();
    // What the window's signal builder lists, and as one step made by the tool.
    expect(workspace.signals().map((s) => s.signal.name)).toEqual(['BrakePressure']);
    expect(workspace.history().undo.at(-1)).toMatchObject({ kind: 'define', source: 'mcp' });
    expect(workspace.undo()?.definition.signal.name).toBe('BrakePressure');
    expect(workspace.signals()).toEqual([]);
  } finally {
    await client.close();
    await mcp.close();
  }

  // Inject: refused until ARM TX is on, then it reaches the bus.
  const bus: AdapterTransmitter = await openTransmitter({
    name: 'tx',
    backend: 'virtual',
    channel: 'car',
    fd: false,
    extras: {},
  });
  workspace.attachTransmitter(bus);
  await expect(workspace.inject(frame(0x7df, [0x02, 0x01, 0x00]))).rejects.toBeInstanceOf(
    TransmitRefusedError,
  );
  workspace.setArmTx(true);
  await expect(workspace.inject(frame(0x7df, [0x02, 0x01, 0x00]))).resolves.toBeUndefined();
  await bus.close();
});
