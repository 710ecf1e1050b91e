import type { CanFrame } from '../../src/frame';
import { reassembleIsoTp } from '../../src/mcp/isotp';
import { prng } from '../../src/eval/generate';

function fr(timestamp: number, id: number, bytes: number[], channel = 0): CanFrame {
  const data = Uint8Array.from(bytes);
  return {
    timestamp,
    id,
    extended: false,
    remote: false,
    error: false,
    fd: data.length > 8,
    brs: false,
    esi: false,
    dlc: data.length <= 8 ? data.length : 15,
    data,
    channel,
  };
}

const pad = (bytes: number[]): number[] => [
  ...bytes,
  ...Array<number>(Math.max(0, 8 - bytes.length)).fill(0xcc),
];
const payload = Array.from({ length: 20 }, (_, i) => i + 1);

/** A 20-byte answer on 0x7E8 to a request on 0x7E0, with flow control, starting at t. */
function exchange(t: number, channel = 0): CanFrame[] {
  return [
    fr(t, 0x7e0, pad([0x02, 0x09, 0x02]), channel),
    fr(t + 0.01, 0x7e8, [0x10, 20, ...payload.slice(0, 6)], channel),
    fr(t + 0.02, 0x7e0, pad([0x30, 0x00, 0x05]), channel),
    fr(t + 0.03, 0x7e8, [0x21, ...payload.slice(6, 13)], channel),
    fr(t + 0.04, 0x7e8, [0x22, ...payload.slice(13, 20)], channel),
  ];
}

describe('ISO-TP reassembly (ISO 15765-2)', () => {
  it('reassembles single, first and consecutive frames and attaches flow control', () => {
    const streams = reassembleIsoTp([...exchange(1), ...exchange(2)]);
    expect(streams.map((s) => s.id)).toEqual(['0x7E0', '0x7E8']);
    const answers = streams[1]!.messages;
    expect(answers).toHaveLength(2);
    expect(answers[0]).toMatchObject({
      kind: 'multi',
      length: 20,
      complete: true,
      frames: 3,
      start: 1.01,
      end: 1.04,
    });
    expect(answers[0]!.data).toBe(
      payload.map((b) => b.toString(16).toUpperCase().padStart(2, '0')).join(' '),
    );
    expect(answers[0]!.flowControl).toEqual([
      { timestamp: 1.02, id: '0x7E0', status: 'continue', blockSize: 0, stMin: 5 },
    ]);
    expect(streams[0]!.messages[0]).toMatchObject({
      kind: 'single',
      length: 2,
      data: '09 02',
      complete: true,
    });
    expect(streams[0]!.flowControls).toBe(2);
  });

  it('reports a sequence gap as an incomplete transfer and keeps channels apart', () => {
    const frames = exchange(1);
    frames.splice(3, 1); // drop CF 1: CF 2 arrives where 1 was expected
    const streams = reassembleIsoTp([...frames, ...exchange(5, 1)], { keepAll: true });
    const ch0 = streams.find((s) => s.channel === 0 && s.id === '0x7E8')!;
    expect(ch0.messages[0]).toMatchObject({
      complete: false,
      error: 'consecutive frame 2 where 1 was expected',
      data: '01 02 03 04 05 06',
    });
    const ch1 = streams.find((s) => s.channel === 1 && s.id === '0x7E8')!;
    expect(ch1.messages[0]).toMatchObject({ complete: true, length: 20 });
  });

  it('wraps the sequence number after 15 and reads CAN FD escape lengths', () => {
    const long = Array.from({ length: 6 + 7 * 17 }, (_, i) => i & 0xff);
    const frames = [fr(0, 0x18, [0x10, long.length, ...long.slice(0, 6)])];
    for (let k = 0; k < 17; k++)
      frames.push(fr(0.001 * (k + 1), 0x18, [0x20 | ((k + 1) & 0x0f), ...long.slice(6 + 7 * k, 13 + 7 * k)]));
    const fdSingle = fr(1, 0x19, [
      0x00,
      12,
      ...Array.from({ length: 12 }, (_, i) => i),
      ...Array<number>(2).fill(0),
    ]);
    const streams = reassembleIsoTp([...frames, fdSingle], { keepAll: true });
    expect(streams.find((s) => s.id === '0x018')!.messages[0]).toMatchObject({
      complete: true,
      length: long.length,
      frames: 18,
    });
    expect(streams.find((s) => s.id === '0x019')!.messages[0]).toMatchObject({ kind: 'single', length: 12 });
  });

  it('does not call ordinary signal traffic ISO-TP', () => {
    const rand = prng(3);
    const noise = Array.from({ length: 500 }, (_, t) =>
      fr(
        t * 0.01,
        0x120,
        Array.from({ length: 8 }, () => Math.floor(rand() * 256)),
      ),
    );
    // A message whose first byte is constant 0x03 reads as valid single frames, but no segmented traffic backs it.
    const constant = Array.from({ length: 200 }, (_, t) =>
      fr(t * 0.01, 0x130, [0x03, t & 0xff, 0, 0, 0, 0, 0, 0]),
    );
    expect(reassembleIsoTp([...noise, ...constant])).toEqual([]);
    expect(reassembleIsoTp([...noise, ...exchange(1)]).map((s) => s.id)).toEqual(['0x7E0', '0x7E8']);
  });
});
