import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CanlabInputError } from '../../src/errors';
import { createCaptureWriter } from '../../src/formats';
import type { CanFrame } from '../../src/frame';
import type { SignalDefinition, WorkspaceEvent } from '../../src/workspace/types';
import {
  DEFAULT_FRAME_COUNT,
  MarkRefusedError,
  newSignal,
  TransmitRefusedError,
  Workspace,
} from '../../src/workspace/workspace';

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

/** 0x100 carries a 4-bit counter in byte 0 and a 16-bit little-endian value in bytes 2-3; 0x200 is constant. */
function busFrames(count: number): CanFrame[] {
  const out: CanFrame[] = [];
  for (let i = 0; i < count; i++) {
    const value = (i * 37) & 0xffff;
    out.push(frame(i * 0.01, 0x100, [i & 0x0f, 0, value & 0xff, value >> 8, 0, 0, 0, 0]));
    out.push(frame(i * 0.01 + 0.005, 0x200, [1, 2, 3, 4]));
  }
  return out;
}

let dir: string;
beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'canlab-ws-'));
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

async function writeCapture(name: string, frames: CanFrame[]): Promise<string> {
  const file = path.join(dir, name);
  const writer = createCaptureWriter(file);
  for (const f of frames) await writer.write(f);
  await writer.close();
  return file;
}

function def(
  name: string,
  startBit: number,
  length: number,
  extra: Partial<SignalDefinition['signal']> = {},
  messageId = 0x100,
): SignalDefinition {
  return { messageId, extended: false, signal: newSignal({ name, startBit, length, ...extra }) };
}

describe('Workspace frames', () => {
  it('loads a capture whole, answers the latest n (default 100) with id and time filters', async () => {
    const file = await writeCapture('bus.log', busFrames(300));
    const ws = new Workspace();
    const status = await ws.loadCapture(file);
    expect(status).toMatchObject({
      connection: 'loaded',
      source: file,
      frameCount: 600,
      idCount: 2,
      armTx: false,
    });
    expect(ws.frames()).toHaveLength(DEFAULT_FRAME_COUNT);
    expect(DEFAULT_FRAME_COUNT).toBe(100);
    const last = ws.frames({ n: 3 });
    expect(last.map((f) => f.id)).toEqual([0x200, 0x100, 0x200]);
    expect(last[2]!.timestamp).toBeCloseTo(2.995, 6);
    const only = ws.frames({ id: 0x100, n: 2 });
    expect(only.map((f) => f.data[0])).toEqual([298 & 15, 299 & 15]);
    expect(ws.frames({ from: 1, to: 1.02, n: 1000 }).map((f) => f.timestamp)).toEqual(
      [1, 1.005, 1.01, 1.015, 1.02].map((t) => expect.closeTo(t, 6)),
    );
    expect(() => ws.frames({ n: -1 })).toThrow(CanlabInputError);
  });

  it('refuses a capture over the frame cap by name and keeps what it held', async () => {
    const small = await writeCapture('small.log', busFrames(5));
    const big = await writeCapture('big.log', busFrames(50));
    const ws = new Workspace({ maxLoadedFrames: 60 });
    await ws.loadCapture(small);
    await expect(ws.loadCapture(big)).rejects.toThrow(/holds more than 60 frames/);
    expect(ws.status()).toMatchObject({ source: small, frameCount: 10 });
  });

  it('keeps only the newest live frames, in order, across many appends', () => {
    const ws = new Workspace({ liveWindowFrames: 10 });
    const all = busFrames(40);
    for (let i = 0; i < all.length; i += 3) ws.appendFrames(all.slice(i, i + 3));
    expect(ws.status()).toMatchObject({ connection: 'recording', frameCount: 10 });
    expect(ws.allFrames()).toEqual(all.slice(-10));
    expect(ws.frames({ n: 4 })).toEqual(all.slice(-4));
  });

  it('caches findings until the frames change', () => {
    const ws = new Workspace();
    ws.appendFrames(busFrames(200));
    const first = ws.findings();
    expect(ws.findings()).toBe(first);
    expect(first.ids.find((f) => f.id === 0x100)!.counters).toContainEqual(
      expect.objectContaining({ step: 1, modulus: 16 }),
    );
    ws.appendFrames(busFrames(1));
    expect(ws.findings()).not.toBe(first);
    expect(ws.draftDbc().messages.map((m) => m.id)).toContain(0x100);
  });
});

describe('Workspace signals', () => {
  it('defines, replaces, removes as undoable steps and decodes with them', () => {
    const ws = new Workspace();
    ws.appendFrames(busFrames(10));
    const events: WorkspaceEvent[] = [];
    ws.on((e) => events.push(e));

    ws.defineSignal(def('Counter', 0, 4), 'test');
    ws.defineSignal(def('Value', 16, 16, { factor: 0.5, unit: 'km/h' }), 'test');
    expect(ws.decode({ n: 1 })[0]).toMatchObject({
      id: 0x100,
      message: 'MSG_100',
      signals: [
        { name: 'Counter', raw: 9 },
        { name: 'Value', raw: 9 * 37, value: 9 * 37 * 0.5, unit: 'km/h' },
      ],
    });

    // Replacing a same-named signal is one step; undo restores the previous definition in place.
    ws.defineSignal(def('Counter', 0, 8), 'mcp');
    expect(ws.signals().map((d) => [d.signal.name, d.signal.length])).toEqual([
      ['Counter', 8],
      ['Value', 16],
    ]);
    expect(ws.undo()).toMatchObject({ kind: 'define', source: 'mcp' });
    expect(ws.signals().map((d) => [d.signal.name, d.signal.length])).toEqual([
      ['Counter', 4],
      ['Value', 16],
    ]);
    expect(ws.redo()?.definition.signal.length).toBe(8);
    expect(ws.signals()[0]!.signal.length).toBe(8);

    // Remove then undo puts it back where it was.
    ws.removeSignal(0x100, 'Counter', 'window');
    expect(ws.signals().map((d) => d.signal.name)).toEqual(['Value']);
    ws.undo();
    expect(ws.signals().map((d) => d.signal.name)).toEqual(['Counter', 'Value']);

    // Undo all the way back, then a new step clears the redo stack.
    ws.undo();
    ws.undo();
    ws.undo();
    expect(ws.signals()).toEqual([]);
    expect(ws.undo()).toBeUndefined();
    expect(ws.decode()).toEqual([]);
    ws.defineSignal(def('Other', 0, 1), 'test');
    expect(ws.redo()).toBeUndefined();
    expect(ws.history().undo.map((s) => s.definition.signal.name)).toEqual(['Other']);

    const signalEvents = events.filter((e) => e.type === 'signals');
    expect(signalEvents.map((e) => (e.type === 'signals' ? `${e.step.kind}:${e.undone}` : ''))).toEqual([
      'define:false',
      'define:false',
      'define:false',
      'define:true',
      'define:false',
      'remove:false',
      'remove:true',
      'define:true',
      'define:true',
      'define:true',
      'define:false',
    ]);
  });

  it('refuses invalid definitions and unknown removals, changing nothing', () => {
    const ws = new Workspace();
    expect(() => ws.defineSignal(def('1bad', 0, 4), 't')).toThrow(/DBC identifier/);
    expect(() => ws.defineSignal(def('Wide', 0, 65), 't')).toThrow(/outside 1\.\.64/);
    expect(() => ws.defineSignal(def('Late', 510, 8), 't')).toThrow(/past byte 64/);
    expect(() => ws.defineSignal(def('Zero', 0, 8, { factor: 0 }), 't')).toThrow(/factor/);
    expect(() => ws.defineSignal(def('F32', 0, 16, { valueType: 'float32' }), 't')).toThrow(/32 bits/);
    expect(() => ws.defineSignal(def('Id', 0, 8, {}, 0x800), 't')).toThrow(/outside 0\.\.0x7FF/);
    expect(() => ws.removeSignal(0x100, 'Nope', 't')).toThrow(/no signal Nope/);
    expect(ws.signals()).toEqual([]);
    expect(ws.undo()).toBeUndefined();
  });
});

describe('Workspace marks', () => {
  it('follows the interval state machine and refuses begin-while-open and end-while-none', () => {
    const ws = new Workspace();
    ws.appendFrames([frame(5, 1, [0])]);
    const opened = ws.mark('brake', 'toggle', 'test');
    expect(opened).toMatchObject({ label: 'brake', kind: 'interval', start: 5, source: 'test' });
    expect(opened.end).toBeUndefined();
    expect(ws.status().openMarks).toEqual(['brake']);

    expect(() => ws.mark('brake', 'begin', 'test')).toThrow(MarkRefusedError);
    try {
      ws.mark('brake', 'begin', 'test');
    } catch (err) {
      expect(err).toMatchObject({ reason: 'already_open', label: 'brake' });
    }
    const closed = ws.mark('brake', 'toggle', 'test', 7.5);
    expect(closed).toMatchObject({ id: opened.id, start: 5, end: 7.5 });
    expect(() => ws.mark('brake', 'end', 'test')).toThrow(/no interval is open for 'brake'/);

    ws.mark('door', 'begin', 'http', 6);
    ws.mark('door', 'end', 'http', 8);
    const point = ws.mark('horn', 'point', 'gpio', 9);
    expect(point).toMatchObject({ kind: 'point', start: 9, end: 9 });
    // An end given before the start is clamped to the start.
    ws.mark('late', 'begin', 'test', 10);
    expect(ws.mark('late', 'end', 'test', 3)).toMatchObject({ start: 10, end: 10 });

    expect(ws.marks().map((m) => [m.label, m.start, m.end])).toEqual([
      ['brake', 5, 7.5],
      ['door', 6, 8],
      ['horn', 9, 9],
      ['late', 10, 10],
    ]);
    expect(ws.status()).toMatchObject({ markCount: 4, openMarks: [] });
    expect(() => ws.mark('', 'point', 'test')).toThrow(/label/);
    expect(() => ws.mark('x', 'sideways' as never, 'test')).toThrow(/toggle, begin, end or point/);
  });

  it('lists findings and marks on the intelligence list, most recent first', () => {
    const ws = new Workspace();
    ws.mark('first', 'point', 'test');
    ws.appendFrames(busFrames(200));
    ws.mark('second', 'toggle', 'test');
    const items = ws.intelligence();
    expect(items[0]).toMatchObject({ kind: 'mark', title: expect.stringContaining('second: interval open') });
    const firstFinding = items.findIndex((i) => i.kind === 'finding');
    expect(firstFinding).toBe(1);
    expect(items.some((i) => i.kind === 'finding' && i.title.startsWith('0x100 counter'))).toBe(true);
    expect(items[items.length - 1]).toMatchObject({
      kind: 'mark',
      title: expect.stringContaining('first: point'),
    });
    // Closing a mark moves it to the top again.
    ws.mark('first', 'point', 'test');
    expect(ws.intelligence()[0]!.title).toContain('first: point');
  });
});

describe('Workspace memory, ARM TX and inject', () => {
  it('remembers entries by key', () => {
    const ws = new Workspace();
    ws.remember('speed', '0x100 bytes 2-3');
    ws.remember('gear', '0x200 byte 0');
    ws.remember('speed', '0x100 bytes 2-3, 0.5 km/h per bit');
    expect(ws.memory().map((m) => [m.key, m.value])).toEqual([
      ['gear', '0x200 byte 0'],
      ['speed', '0x100 bytes 2-3, 0.5 km/h per bit'],
    ]);
    expect(() => ws.remember(' ', 'x')).toThrow(/key/);
  });

  it('starts with ARM TX off and refuses inject unless armed with a transmitter attached', async () => {
    const sent: CanFrame[] = [];
    const ws = new Workspace();
    const events: WorkspaceEvent[] = [];
    ws.on((e) => events.push(e));
    expect(ws.armTx()).toBe(false);
    ws.attachTransmitter({ send: async (f) => void sent.push(f) });
    const f = frame(0, 0x123, [1, 2]);

    await expect(ws.inject(f)).rejects.toMatchObject({ name: 'TransmitRefusedError', reason: 'arm_tx_off' });
    ws.setArmTx(true);
    ws.attachTransmitter(undefined);
    await expect(ws.inject(f)).rejects.toBeInstanceOf(TransmitRefusedError);
    await expect(ws.inject(f)).rejects.toMatchObject({ reason: 'no_transmitter' });
    expect(sent).toEqual([]);

    ws.attachTransmitter({ send: async (x) => void sent.push(x) });
    await ws.inject(f);
    expect(sent).toEqual([f]);
    expect(events).toContainEqual({ type: 'armTx', on: true });
    expect(new Workspace().armTx()).toBe(false);
  });

  it('stops telling a listener once it unsubscribes', () => {
    const ws = new Workspace();
    const seen: string[] = [];
    const off = ws.on((e) => seen.push(e.type));
    ws.mark('a', 'point', 't');
    off();
    ws.mark('b', 'point', 't');
    expect(seen).toEqual(['mark']);
  });
});
