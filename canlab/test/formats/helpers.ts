import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { dlcToLength, lengthToDlc, type CanFrame } from '../../src/frame';

export async function collect(it: AsyncIterable<CanFrame>): Promise<CanFrame[]> {
  const out: CanFrame[] = [];
  for await (const f of it) out.push(f);
  return out;
}

/** A fresh temp directory per test file; call the returned cleanup in afterAll. */
export function tempDir(): { dir: string; file: (name: string) => string; cleanup: () => void } {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'canlab-formats-'));
  return {
    dir,
    file: (name) => path.join(dir, name),
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}

export function frame(p: Partial<CanFrame> & { id: number; timestamp: number }): CanFrame {
  const fd = p.fd ?? false;
  const dlc = p.dlc ?? (p.data ? lengthToDlc(p.data.length, fd) : 0);
  const f: CanFrame = {
    extended: false,
    remote: false,
    error: false,
    fd,
    brs: false,
    esi: false,
    dlc,
    data: p.remote ? new Uint8Array(0) : new Uint8Array(dlcToLength(dlc, fd)),
    channel: 0,
    ...p,
  };
  return f;
}

const seq = (n: number, start = 0): Uint8Array =>
  Uint8Array.from({ length: n }, (_, i) => (start + i) & 0xff);

/** Hand-picked frames covering every kind the readers and writers deal with. */
export function sampleFrames(base = 1700000000.123456): CanFrame[] {
  let t = base;
  const next = (): number => (t += 0.001237);
  return [
    frame({ timestamp: next(), id: 0x123, dlc: 8, data: seq(8, 0xf0), channel: 0, direction: 'rx' }),
    frame({
      timestamp: next(),
      id: 0x1abcdef0,
      extended: true,
      dlc: 4,
      data: Uint8Array.of(0xde, 0xad, 0xbe, 0xef),
      channel: 1,
      direction: 'tx',
    }),
    frame({ timestamp: next(), id: 0x7ff, dlc: 0, data: new Uint8Array(0), channel: 0, direction: 'rx' }),
    frame({ timestamp: next(), id: 0x000, dlc: 3, data: Uint8Array.of(1, 2, 3), channel: 2 }),
    frame({ timestamp: next(), id: 0x321, dlc: 12, data: seq(8, 0x40), channel: 0, direction: 'rx' }), // classic DLC > 8
    frame({ timestamp: next(), id: 0x456, remote: true, dlc: 4, channel: 0, direction: 'tx' }),
    frame({
      timestamp: next(),
      id: 0x18ff00aa,
      extended: true,
      remote: true,
      dlc: 0,
      channel: 1,
      direction: 'rx',
    }),
    frame({
      timestamp: next(),
      id: 0x1c4d80a7,
      extended: true,
      fd: true,
      brs: true,
      esi: true,
      dlc: 15,
      data: seq(64),
      channel: 0,
      direction: 'tx',
    }),
    frame({
      timestamp: next(),
      id: 0x300,
      fd: true,
      brs: true,
      dlc: 9,
      data: seq(12, 0x80),
      channel: 1,
      direction: 'rx',
    }),
    frame({
      timestamp: next(),
      id: 0x301,
      fd: true,
      dlc: 5,
      data: seq(5, 0x10),
      channel: 0,
      direction: 'rx',
    }),
    frame({
      timestamp: next(),
      id: 0x302,
      fd: true,
      esi: true,
      dlc: 13,
      data: seq(32, 0x20),
      channel: 3,
      direction: 'tx',
    }),
    frame({
      timestamp: next(),
      id: 0x00000004,
      error: true,
      dlc: 8,
      data: Uint8Array.of(0, 0, 0x08, 0, 0, 0, 0, 0),
      channel: 0,
    }),
  ];
}

/** Many pseudo-random frames (deterministic), enough to span several BLF containers. */
export function manyFrames(n: number, base = 1700000100): CanFrame[] {
  let seed = 12345;
  const rnd = (): number => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed;
  };
  const out: CanFrame[] = [];
  let t = base;
  for (let i = 0; i < n; i++) {
    t += (rnd() % 1000) / 1e6;
    const kind = rnd() % 10;
    const extended = rnd() % 3 === 0;
    const id = extended ? rnd() & 0x1fffffff : rnd() & 0x7ff;
    const channel = rnd() % 3;
    const direction = rnd() % 2 === 0 ? 'rx' : 'tx';
    if (kind < 6) {
      const dlc = rnd() % 9;
      out.push(
        frame({
          timestamp: t,
          id,
          extended,
          dlc,
          data: Uint8Array.from({ length: dlc }, () => rnd() & 0xff),
          channel,
          direction,
        }),
      );
    } else if (kind < 9) {
      const dlc = rnd() % 16;
      out.push(
        frame({
          timestamp: t,
          id,
          extended,
          fd: true,
          brs: rnd() % 2 === 0,
          esi: rnd() % 5 === 0,
          dlc,
          data: Uint8Array.from({ length: dlcToLength(dlc, true) }, () => rnd() & 0xff),
          channel,
          direction,
        }),
      );
    } else {
      out.push(frame({ timestamp: t, id, extended, remote: true, dlc: rnd() % 9, channel, direction }));
    }
  }
  return out;
}

/** Compares frames field by field (timestamps within `tolerance` seconds), with a readable diff on failure. */
export function expectSameFrames(actual: CanFrame[], expected: CanFrame[], tolerance: number): void {
  expect(actual.length).toBe(expected.length);
  const plain = (f: CanFrame): Record<string, unknown> => ({
    ...f,
    data: Buffer.from(f.data).toString('hex'),
    timestamp: undefined,
  });
  for (let i = 0; i < expected.length; i++) {
    const a = actual[i]!;
    const e = expected[i]!;
    if (Math.abs(a.timestamp - e.timestamp) > tolerance) {
      throw new Error(
        `frame ${i}: timestamp ${a.timestamp} differs from ${e.timestamp} by more than ${tolerance}`,
      );
    }
    expect({ i, ...plain(a) }).toEqual({ i, ...plain(e) });
  }
}
