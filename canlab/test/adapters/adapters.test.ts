import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { runCli } from '../../src/cli/main';
import { GVRET_OPEN_SEQUENCE } from '../../src/adapters/backends/gvret';
import { packageInstalled } from '../../src/adapters/backends/fixes';
import { parseSlcanLine } from '../../src/adapters/backends/slcan';
import { kernelCanSupport, kernelShortfall, socketcanLinkState } from '../../src/adapters/backends/socketcan';
import { openReceiver, testAdapter } from '../../src/adapters/receive';
import { loadAdapters } from '../../src/adapters/store';
import type { AdapterConfig, BackendId, Receiver } from '../../src/adapters/types';
import { AdapterUnavailableError } from '../../src/adapters/types';
import { encodeFrameDatagram } from '../../src/adapters/transmit';
import { decodeFrameDatagram } from '../../src/adapters/wire';
import type { CanFrame } from '../../src/frame';
import { sendFrames, sentFrame } from './process';

jest.setTimeout(60000);

let tmp: string;
const env: NodeJS.ProcessEnv = {};
beforeAll(() => {
  tmp = mkdtempSync(path.join(os.tmpdir(), 'canlab-adapters-'));
  env['CANLAB_VIRTUAL_BUS_DIR'] = path.join(tmp, 'bus');
  env['CANLAB_CONFIG_DIR'] = path.join(tmp, 'config');
  Object.assign(process.env, env);
});
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

function adapter(backend: BackendId, channel: string, more: Partial<AdapterConfig> = {}): AdapterConfig {
  return { name: `t-${backend}`, backend, channel, fd: false, extras: {}, ...more };
}

function collect(receiver: Receiver): CanFrame[] {
  const frames: CanFrame[] = [];
  receiver.onFrame((f) => frames.push(f));
  return frames;
}

async function until(check: () => boolean, timeoutMs = 15000): Promise<void> {
  const start = Date.now();
  while (!check()) {
    if (Date.now() - start > timeoutMs) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** The socketcan package as canlab loads it: by a variable specifier, since it ships no types. */
async function socketcanPackage<T>(): Promise<T> {
  const name = 'socketcan';
  return (await import(name)) as T;
}

async function refusal(config: AdapterConfig): Promise<AdapterUnavailableError> {
  const err: unknown = await openReceiver(config).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(AdapterUnavailableError);
  return err as AdapterUnavailableError;
}

describe('frame datagrams', () => {
  it('round-trip every flag, extended ids and FD lengths, and reject malformed datagrams', () => {
    const fd: CanFrame = {
      timestamp: 0,
      id: 0x18daf110,
      extended: true,
      remote: false,
      error: false,
      fd: true,
      brs: true,
      esi: false,
      dlc: 13,
      data: new Uint8Array(32).fill(7),
      channel: 0,
    };
    const back = decodeFrameDatagram(encodeFrameDatagram(fd), 5, 2)!;
    expect(back).toEqual({ ...fd, timestamp: 5, channel: 2 });
    const buf = encodeFrameDatagram(fd);
    expect(decodeFrameDatagram(buf.subarray(0, buf.length - 1), 0, 0)).toBeUndefined();
    expect(decodeFrameDatagram(Buffer.from('hello world'), 0, 0)).toBeUndefined();
  });
});

describe('virtual bus', () => {
  it('carries frames from a sender process to every listener, and drops a dead member', async () => {
    const a = await openReceiver(adapter('virtual', 'vb1'));
    const b = await openReceiver(adapter('virtual', 'vb1'));
    const other = await openReceiver(adapter('virtual', 'vb2'));
    const [fa, fb, fo] = [collect(a), collect(b), collect(other)];
    expect('send' in a).toBe(false);
    await sendFrames('virtual', 'vb1', 20, env);
    await until(() => fa.length === 20 && fb.length === 20);
    expect(fa.map((f) => ({ id: f.id, data: [...f.data] }))).toEqual(
      Array.from({ length: 20 }, (_, i) => sentFrame(i)),
    );
    expect(fo).toHaveLength(0);
    // a closed listener leaves the bus: the next frames reach only the other one
    await a.close();
    await sendFrames('virtual', 'vb1', 3, env);
    await until(() => fb.length === 23);
    expect(fa).toHaveLength(20);
    await Promise.all([b.close(), other.close()]);
  });
});

describe('udp_multicast', () => {
  it('receives frames a second process sends to a loopback multicast group', async () => {
    const channel = '239.255.67.76:' + String(40000 + (process.pid % 20000));
    const r = await openReceiver(adapter('udp_multicast', channel));
    const frames = collect(r);
    await sendFrames('udp_multicast', channel, 10, env);
    await until(() => frames.length === 10);
    expect(frames.map((f) => ({ id: f.id, data: [...f.data] }))).toEqual(
      Array.from({ length: 10 }, (_, i) => sentFrame(i)),
    );
    await r.close();
  });

  it('refuses a group that is not multicast', async () => {
    const err = await refusal(adapter('udp_multicast', '127.0.0.1:4000'));
    expect(err.fix).toContain('239.255.67.76:42424');
  });
});

describe('refusals by name', () => {
  it('socketcan on a missing interface prints the link command and exits 2', async () => {
    expect(await socketcanLinkState('canlabnone0')).toBe('missing');
    const err = await refusal(adapter('socketcan', 'canlabnone0', { bitrate: 250000 }));
    // and, on a kernel without CAN sockets (this one), says the command alone will not do
    expect(err.fix).toBe(
      `bring it up (as root): ip link set canlabnone0 up type can bitrate 250000. ${kernelShortfall('canlabnone0')}`.trim(),
    );
    const out: string[] = [];
    const code = await runCli(
      ['capture', '--interface', 'socketcan', '--channel', 'canlabnone0', '--out', path.join(tmp, 'never')],
      { stdout: (t) => out.push(t), stderr: (t) => out.push(t) },
    );
    expect(code).toBe(2);
    expect(out.join('')).toContain('ip link set canlabnone0 up type can bitrate 500000');
    // a refused adapter leaves no capture folder behind
    await expect(import('node:fs/promises').then((fs) => fs.stat(path.join(tmp, 'never')))).rejects.toThrow();
  });

  it('the socketcan package is built: its native binding loads and reaches the kernel', async () => {
    expect(packageInstalled('socketcan')).toBe(true);
    const binding = path.join(
      path.dirname(require.resolve('socketcan/package.json')),
      'build/Release/can.node',
    );
    expect(existsSync(binding)).toBe(true);
    const socketcan = await socketcanPackage<{ createRawChannel: (iface: string) => unknown }>();
    if (!kernelCanSupport().sockets) {
      // socket(PF_CAN) fails in the addon itself on a kernel without CAN
      expect(() => socketcan.createRawChannel('lo')).toThrow('Error while creating channel');
    }
  });

  it('socketcan on an interface that is up but not CAN is refused by name', async () => {
    const err = await refusal(adapter('socketcan', 'lo'));
    expect(err.reason).toBe('interface lo is not a CAN interface (link type 772, CAN is 280)');
    expect(err.fix).toContain('socketcandHost');
  });

  it.each([
    ['gvret', '/dev/ttyACM0', 'npm install serialport'],
    ['slcan', '/dev/ttyUSB0', 'npm install serialport'],
    ['gs_usb', '0', 'modprobe gs_usb'],
    ['pcan', 'usb1', 'modprobe peak_usb'],
    ['kvaser', '0', 'modprobe kvaser_usb'],
    ['vector', '0', 'XL Driver Library'],
    ['ixxat', '0', 'ixx_usb'],
  ] as const)('%s (%s) refuses with a fix naming %s', async (backend, channel, fix) => {
    const err = await refusal(adapter(backend, channel));
    expect(err.message).toContain(`(${backend})`);
    expect(`${err.reason} ${err.fix}`).toContain(fix);
  });

  it('the Test action names the fix for a refused adapter', async () => {
    const result = await testAdapter(adapter('pcan', 'usb1'), 50);
    expect(result).toMatchObject({ ok: false, frames: 0 });
    expect(result.fix).toContain('peak_usb');
  });
});

/** Why the vcan test cannot run here, or undefined when it can: it needs the package, a kernel with vcan, and vcan0 up. */
function vcanSkipReason(): string | undefined {
  if (!packageInstalled('socketcan'))
    return "the 'socketcan' npm package is not installed (npm install -w canlab)";
  const kernel = kernelCanSupport();
  if (!kernel.sockets) return `this kernel (${os.release()}) has no CAN sockets (no can module)`;
  if (!kernel.vcan) return `this kernel (${os.release()}) has no vcan module`;
  const flags = '/sys/class/net/vcan0/flags';
  if (!existsSync(flags) || (parseInt(readFileSync(flags, 'utf8'), 16) & 1) === 0)
    return 'vcan0 is not up (as root: ip link add dev vcan0 type vcan; ip link set vcan0 up)';
  return undefined;
}

const vcanReason = vcanSkipReason();
if (vcanReason !== undefined) process.stdout.write(`skipping the vcan test: ${vcanReason}\n`);
(vcanReason === undefined ? it : it.skip)(
  'socketcan records from a vcan link through the native package (needs a kernel with the vcan module)',
  async () => {
    const r = await openReceiver(adapter('socketcan', 'vcan0'));
    const frames = collect(r);
    // a second raw socket on the link plays the bus: vcan echoes its frames to every other socket
    const socketcan = await socketcanPackage<{
      createRawChannel: (iface: string) => {
        start(): void;
        stop(): void;
        send(m: { id: number; ext: boolean; rtr: boolean; data: Buffer }): void;
      };
    }>();
    const bus = socketcan.createRawChannel('vcan0');
    bus.start();
    bus.send({ id: 0x123, ext: false, rtr: false, data: Buffer.from([0xde, 0xad]) });
    bus.send({ id: 0x18daf110, ext: true, rtr: false, data: Buffer.from([1, 2, 3, 4, 5, 6, 7, 8]) });
    await until(() => frames.length === 2);
    bus.stop();
    await r.close();
    expect(frames.map((f) => [f.id, f.extended, Array.from(f.data)])).toEqual([
      [0x123, false, [0xde, 0xad]],
      [0x18daf110, true, [1, 2, 3, 4, 5, 6, 7, 8]],
    ]);
    expect((await testAdapter(adapter('socketcan', 'vcan0'), 200)).ok).toBe(true);
  },
);

/** A fake board on 127.0.0.1: records every byte the adapter sends and plays `script` to it. */
const openBoards = new Set<() => Promise<void>>();
afterEach(async () => {
  for (const close of openBoards) await close();
  openBoards.clear();
});

async function fakeBoard(
  onConnect: (socket: net.Socket) => void,
): Promise<{ port: number; received: () => Buffer; close: () => Promise<void> }> {
  const chunks: Buffer[] = [];
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('data', (c) => chunks.push(c));
    onConnect(socket);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const close = (): Promise<void> =>
    new Promise<void>((resolve) => {
      openBoards.delete(close);
      for (const s of sockets) s.destroy();
      if (!server.listening) resolve();
      else server.close(() => resolve());
    });
  openBoards.add(close);
  return { port: (server.address() as net.AddressInfo).port, received: () => Buffer.concat(chunks), close };
}

describe('gvret over TCP', () => {
  it('switches to binary mode, parses frames from both buses across chunk boundaries, and never sends a frame', async () => {
    const frame = (bus: number, id: number, data: number[]): Buffer =>
      Buffer.from([
        0xf1,
        0x00,
        1,
        2,
        3,
        4,
        ...Buffer.from(Uint32Array.of(id >>> 0).buffer),
        (bus << 4) | data.length,
        ...data,
        0,
      ]);
    const stream = Buffer.concat([
      Buffer.from('GVRET ready\r\n'),
      frame(0, 0x123, [1, 2, 3]),
      Buffer.from([0xf1, 0x09, 0xde, 0xad]),
      Buffer.from([0xf1, 0x0c, 0x02]),
      frame(1, 0x80000000 | 0x18daf110, [9, 8, 7, 6, 5, 4, 3, 2]),
    ]);
    const board = await fakeBoard((socket) => {
      socket.once('data', () => {
        // deliver in 3-byte pieces to exercise the parser's reassembly
        for (let i = 0; i < stream.length; i += 3) socket.write(stream.subarray(i, i + 3));
      });
    });
    const r = await openReceiver(adapter('gvret', `127.0.0.1:${board.port}`));
    const frames = collect(r);
    await until(() => frames.length === 2);
    expect(frames.map((f) => [f.id, f.extended, f.channel, [...f.data]])).toEqual([
      [0x123, false, 0, [1, 2, 3]],
      [0x18daf110, true, 1, [9, 8, 7, 6, 5, 4, 3, 2]],
    ]);
    await r.close();
    expect(board.received()).toEqual(GVRET_OPEN_SEQUENCE);
    expect(board.received().includes(Buffer.from([0xf1, 0x00]))).toBe(false);
    await board.close();
  });

  it('names the fix when nothing listens at the address', async () => {
    const board = await fakeBoard(() => {});
    const port = board.port;
    await board.close();
    const err = await refusal(adapter('gvret', `127.0.0.1:${port}`));
    expect(err.fix).toContain('check the address and port');
  });
});

describe('slcan over TCP', () => {
  it('opens listen-only at the configured bit rate, parses classic, extended, remote and FD lines, closes with C', async () => {
    const board = await fakeBoard((socket) => {
      socket.once('data', () =>
        socket.write(
          '\rt1232AABB\rT18DAF1108' +
            '0102030405060708' +
            '\rr7FF4\rxyz\rb1239' +
            '00'.repeat(12) +
            '\rt00011234AB\r',
        ),
      );
    });
    const r = await openReceiver(adapter('slcan', `127.0.0.1:${board.port}`, { bitrate: 250000 }));
    const frames = collect(r);
    await until(() => frames.length === 5);
    expect(frames.map((f) => [f.id, f.extended, f.remote, f.fd, f.brs, f.dlc, f.data.length])).toEqual([
      [0x123, false, false, false, false, 2, 2],
      [0x18daf110, true, false, false, false, 8, 8],
      [0x7ff, false, true, false, false, 4, 0],
      [0x123, false, false, true, true, 9, 12],
      [0x000, false, false, false, false, 1, 1],
    ]);
    expect(r.malformed).toBe(0);
    await r.close();
    expect(board.received().toString('latin1')).toBe('C\rS5\rL\rC\r');
    await board.close();
  });

  it('rejects malformed frame lines and ignores replies', () => {
    expect(parseSlcanLine('z')).toBeUndefined();
    expect(() => parseSlcanLine('t1233AABB')).toThrow(RangeError);
    expect(() => parseSlcanLine('t8001AA')).toThrow(RangeError);
  });

  it('refuses a bit rate SLCAN has no code for', async () => {
    const err = await refusal(adapter('slcan', '127.0.0.1:1', { bitrate: 333333 }));
    expect(err.fix).toContain('500000');
  });
});

describe('socketcan through socketcand', () => {
  it('opens the interface in raw mode and parses frames', async () => {
    const board = await fakeBoard((socket) => {
      socket.write('< hi >');
      socket.on('data', (d) => {
        const text = d.toString();
        if (text.includes('< open vcan3 >')) socket.write('< ok >');
        if (text.includes('< rawmode >'))
          socket.write(
            '< ok >< frame 123 1700000000.250000 DEADBEEF >< frame 18DAF110 1700000000.500000 ABC >',
          );
      });
    });
    const r = await openReceiver(
      adapter('socketcan', 'vcan3', { extras: { socketcandHost: `127.0.0.1:${board.port}` } }),
    );
    const frames = collect(r);
    await until(() => frames.length === 1 && r.malformed === 1);
    await r.close();
    expect(board.received().toString()).toBe('< open vcan3 >< rawmode >');
    expect(frames[0]).toMatchObject({ id: 0x123, extended: false, timestamp: 1700000000.25, dlc: 4 });
    expect(r.malformed).toBe(1);
    await board.close();
  });
});

describe('canlab adapters', () => {
  const run = async (...argv: string[]): Promise<{ code: number; out: string }> => {
    let out = '';
    const code = await runCli(['adapters', ...argv], {
      stdout: (t) => (out += t),
      stderr: (t) => (out += t),
    });
    return { code, out };
  };

  it('adds, lists, tests (listening 1 s, sending nothing) and removes saved adapters', async () => {
    expect((await run('add', 'bench', '--backend', 'virtual', '--channel', 'vb-cli')).code).toBe(0);
    expect(
      (
        await run(
          'add',
          'car',
          '--backend',
          'gvret',
          '--channel',
          '192.168.4.1:23',
          '--bitrate',
          '500000',
          '--serial-baud',
          '115200',
        )
      ).code,
    ).toBe(0);
    expect(await loadAdapters()).toEqual([
      { name: 'bench', backend: 'virtual', channel: 'vb-cli', fd: false, extras: {} },
      {
        name: 'car',
        backend: 'gvret',
        channel: '192.168.4.1:23',
        bitrate: 500000,
        fd: false,
        extras: { serialBaud: 115200 },
      },
    ]);
    expect((await run('list')).out).toMatch(/car\tgvret\t192\.168\.4\.1:23\t500000 bit\/s/);
    // a second listener on the bus hears nothing from the Test action
    const monitor = await openReceiver(adapter('virtual', 'vb-cli'));
    const heard = collect(monitor);
    const started = Date.now();
    const tested = await run('test', 'bench');
    expect(Date.now() - started).toBeGreaterThanOrEqual(1000);
    expect(tested).toEqual({ code: 0, out: expect.stringContaining('nothing was sent') as string });
    expect(heard).toHaveLength(0);
    await monitor.close();
    expect((await run('remove', 'car')).code).toBe(0);
    expect((await loadAdapters()).map((a) => a.name)).toEqual(['bench']);
    expect((await run('add', 'x', '--backend', 'nope')).code).toBe(1);
  });

  it('test names the fix and exits 2 when the adapter cannot be opened', async () => {
    await run('add', 'down', '--backend', 'socketcan', '--channel', 'canlabnone1', '--bitrate', '125000');
    const r = await run('test', 'down');
    expect(r.code).toBe(2);
    expect(r.out).toContain('ip link set canlabnone1 up type can bitrate 125000');
  });
});
