import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { openReceiver } from '../../src/adapters/receive';
import type { CanFrame } from '../../src/frame';
import { readCapture } from '../../src/formats';
import { killLeftovers, sendFrames, sentFrame, startCanlab } from '../adapters/process';

jest.setTimeout(120000);

let tmp: string;
let env: NodeJS.ProcessEnv;
beforeAll(() => {
  tmp = mkdtempSync(path.join(os.tmpdir(), 'canlab-capture-'));
  env = { CANLAB_VIRTUAL_BUS_DIR: path.join(tmp, 'bus'), CANLAB_CONFIG_DIR: path.join(tmp, 'config') };
  Object.assign(process.env, env);
});
afterEach(killLeftovers);
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

async function readAll(file: string): Promise<CanFrame[]> {
  const out: CanFrame[] = [];
  for await (const f of readCapture(file)) out.push(f);
  return out;
}

async function json(file: string): Promise<any> {
  return JSON.parse(await readFile(file, 'utf8'));
}

it('records a virtual bus end to end: rotating segments, HTTP marks with the token, SIGTERM, project file', async () => {
  const out = path.join(tmp, 'run1');
  const tokenFile = path.join(tmp, 'token');
  const capture = startCanlab(
    [
      'capture',
      '--interface',
      'virtual',
      '--channel',
      'e2e',
      '--out',
      out,
      '--max-frames',
      '25',
      '--http',
      '0',
      '--token-file',
      tokenFile,
    ],
    env,
  );
  const url = (await capture.waitFor(/http: (http:\/\/127\.0\.0\.1:\d+)/))[1]!;
  await capture.waitFor(/q stops/);
  const token = (await readFile(tokenFile, 'utf8')).trim();
  expect(statSync(tokenFile).mode & 0o777).toBe(0o600);

  // a second listener on the bus: whatever it hears beyond the sender's frames came from the capture
  const monitor = await openReceiver({
    name: 'monitor',
    backend: 'virtual',
    channel: 'e2e',
    fd: false,
    extras: {},
  });
  const heard: CanFrame[] = [];
  monitor.onFrame((f) => heard.push(f));

  const post = (
    body: unknown,
    headers: Record<string, string> = { 'X-API-Token': token },
  ): Promise<Response> =>
    fetch(`${url}/mark`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });
  expect((await post({ label: 'brake', action: 'begin' })).status).toBe(200);
  await sendFrames('virtual', 'e2e', 60, env);
  const status = async (): Promise<any> =>
    (await fetch(`${url}/status`, { headers: { 'X-API-Token': token } })).json();
  for (let i = 0; (await status()).frameCount < 60; i++) {
    if (i > 200) throw new Error('capture did not receive the frames');
    await new Promise((r) => setTimeout(r, 50));
  }
  expect((await post({ label: 'brake', action: 'end' })).status).toBe(200);
  expect((await post({ label: 'horn', action: 'point' })).status).toBe(200);
  expect((await post({ label: 'wiper' })).status).toBe(200); // toggle: stays open until the stop
  expect((await post({ label: 'x', action: 'point' }, {})).status).toBe(401);
  const inject = await fetch(`${url}/inject`, {
    method: 'POST',
    headers: { 'X-API-Token': token, 'content-type': 'application/json' },
    body: JSON.stringify({ id: '0x123', data: '01 02' }),
  });
  expect(inject.status).toBe(404);
  // marks.json is rewritten on every mark
  expect((await json(path.join(out, 'marks.json'))).marks.map((m: any) => m.label)).toEqual([
    'brake',
    'horn',
    'wiper',
  ]);

  capture.proc.kill('SIGTERM');
  expect(await capture.exited).toBe(0);
  await monitor.close();
  const printed = capture.output();
  expect(printed).toMatch(/stopped \(SIGTERM\): 60 frames in 3 segments, 3 marks/);
  expect(printed).toContain(`project: ${path.join(out, 'capture.canlab.json')}`);

  expect((await readdir(out)).sort()).toEqual([
    'capture.canlab.json',
    'marks.json',
    'segment-0001.csv',
    'segment-0002.csv',
    'segment-0003.csv',
  ]);
  const frames = [
    ...(await readAll(path.join(out, 'segment-0001.csv'))),
    ...(await readAll(path.join(out, 'segment-0002.csv'))),
    ...(await readAll(path.join(out, 'segment-0003.csv'))),
  ];
  expect(frames.map((f) => ({ id: f.id, data: [...f.data] }))).toEqual(
    Array.from({ length: 60 }, (_, i) => sentFrame(i)),
  );
  expect((await readAll(path.join(out, 'segment-0003.csv'))).length).toBe(10);

  const marks = (await json(path.join(out, 'marks.json'))).marks;
  expect(marks.map((m: any) => [m.label, m.kind, m.source, m.end !== undefined])).toEqual([
    ['brake', 'interval', 'http', true],
    ['horn', 'point', 'http', true],
    ['wiper', 'interval', 'http', true],
  ]);
  expect(marks[0].end).toBeGreaterThanOrEqual(marks[0].start);
  // the brake interval spans the frames sent while it was open (segments keep 1 µs)
  expect(marks[0].start).toBeLessThanOrEqual(frames[0]!.timestamp + 1e-6);
  expect(marks[0].end).toBeGreaterThanOrEqual(frames[59]!.timestamp - 1e-6);

  const project = await json(path.join(out, 'capture.canlab.json'));
  expect(project).toMatchObject({
    format: 'canlab-capture',
    version: 1,
    frames: 60,
    marksFile: 'marks.json',
  });
  expect(project.stopped).toEqual(expect.any(String));
  expect(project.segments.map((s: any) => [s.file, s.frames])).toEqual([
    ['segment-0001.csv', 25],
    ['segment-0002.csv', 25],
    ['segment-0003.csv', 10],
  ]);
  expect(project.channels).toEqual([{ channel: 0, adapter: 'virtual:e2e', bus: 0 }]);
  expect(project.marks).toEqual(marks);

  // nothing was transmitted: the monitor heard exactly the sender's 60 frames
  expect(heard).toHaveLength(60);
});

it('takes typed-line marks on a non-terminal stdin, reuses the token, reports the missing GPIO library, honours --no-project', async () => {
  const out = path.join(tmp, 'run2');
  const tokenFile = path.join(tmp, 'token');
  const before = (await readFile(tokenFile, 'utf8')).trim();
  const capture = startCanlab(
    [
      'capture',
      '--interface',
      'virtual',
      '--channel',
      'busA',
      '--out',
      out,
      '--no-project',
      '--http',
      '0',
      '--token-file',
      tokenFile,
      '--gpio',
      '17=horn',
    ],
    env,
  );
  await capture.waitFor(/q stops/);
  expect(capture.output()).toContain('gpio: no GPIO library is installed');
  expect(capture.output()).toContain('17=horn ignored');
  expect(capture.output()).not.toContain('new token');
  expect((await readFile(tokenFile, 'utf8')).trim()).toBe(before);
  capture.proc.stdin.write('brake\n');
  await capture.waitFor(/mark: brake begins \[keyboard\]/);
  capture.proc.stdin.write('horn point\n');
  capture.proc.stdin.write('light on\n');
  capture.proc.stdin.write('ghost off\n');
  await capture.waitFor(/mark refused: no interval is open for 'ghost'/);
  capture.proc.stdin.write('brake\n');
  capture.proc.stdin.write('light off\n');
  await capture.waitFor(/mark: light ends/);
  capture.proc.stdin.write('q\n');
  expect(await capture.exited).toBe(0);
  expect(capture.output()).toMatch(/stopped \(q\): 0 frames in 0 segments, 3 marks/);
  expect(capture.output()).toContain('no project file: --no-project');
  expect((await readdir(out)).sort()).toEqual(['marks.json']);
  const marks = (await json(path.join(out, 'marks.json'))).marks;
  expect(marks.map((m: any) => [m.label, m.kind, m.source])).toEqual([
    ['brake', 'interval', 'keyboard'],
    ['horn', 'point', 'keyboard'],
    ['light', 'interval', 'keyboard'],
  ]);
  expect(marks.every((m: any) => m.end >= m.start)).toBe(true);
});

it('records several adapters into one capture, keeping each bus on its own channel, and stops at --duration closing open marks', async () => {
  const out = path.join(tmp, 'run3');
  let saved = '';
  const { runCli } = await import('../../src/cli/main');
  await runCli(['adapters', 'add', 'left', '--backend', 'virtual', '--channel', 'left'], {
    stdout: (t) => (saved += t),
    stderr: (t) => (saved += t),
  });
  await runCli(['adapters', 'add', 'right', '--backend', 'virtual', '--channel', 'right'], {
    stdout: (t) => (saved += t),
    stderr: (t) => (saved += t),
  });
  // The two senders are processes of their own; on a loaded machine starting them takes seconds,
  // so the duration leaves room for both before the capture stops.
  const capture = startCanlab(
    ['capture', '--adapter', 'left', '--adapter', 'right', '--out', out, '--duration', '12'],
    env,
  );
  await capture.waitFor(/q stops/);
  capture.proc.stdin.write('door on\n');
  await capture.waitFor(/mark: door begins/);
  await sendFrames('virtual', 'left', 5, env);
  await sendFrames('virtual', 'right', 7, env);
  expect(await capture.exited).toBe(0);
  expect(capture.output()).toMatch(/stopped \(--duration 12 s\): 12 frames in 1 segment, 1 mark/);
  expect(capture.output()).toContain('closed at stop: door');
  const frames = await readAll(path.join(out, 'segment-0001.csv'));
  expect(frames.filter((f) => f.channel === 0)).toHaveLength(5);
  expect(frames.filter((f) => f.channel === 1)).toHaveLength(7);
  const project = await json(path.join(out, 'capture.canlab.json'));
  expect(project.channels).toEqual([
    { channel: 0, adapter: 'left', bus: 0 },
    { channel: 1, adapter: 'right', bus: 0 },
  ]);
  expect(project.marks[0]).toMatchObject({ label: 'door', kind: 'interval', end: expect.any(Number) });
});
