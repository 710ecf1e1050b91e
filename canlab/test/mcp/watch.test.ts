import type { CanFrame } from '../../src/frame';
import { watchEvents, type DecodedRow } from '../../src/mcp/watch';

function fr(timestamp: number, id: number, bytes: number[]): CanFrame {
  const data = Uint8Array.from(bytes);
  return {
    timestamp,
    id,
    extended: false,
    remote: false,
    error: false,
    fd: false,
    brs: false,
    esi: false,
    dlc: data.length,
    data,
    channel: 0,
  };
}

describe('live-watch events', () => {
  const frames = [
    fr(1, 0x10, [1, 2]),
    fr(2, 0x10, [1, 2]),
    fr(3, 0x10, [1, 3]),
    fr(3, 0x20, [9]),
    fr(4, 0x10, [5, 3]),
  ];
  const rows: DecodedRow[] = [1, 2, 3, 4].map((t) => ({
    timestamp: t,
    id: '0x010',
    signals: [{ name: 'Speed', raw: t < 3 ? 10 : 20, value: t < 3 ? 1 : 2, unit: 'km/h' }],
  }));

  it('reports payload and value changes after the cursor, with the previous state from before it', () => {
    const r = watchEvents(
      frames,
      rows,
      { ids: new Set(['0x010']), signals: ['0x010:speed'], cursor: 2, limit: 10 },
      4,
    );
    expect(r.events).toEqual([
      { kind: 'frame', timestamp: 3, id: '0x010', data: '01 03', previous: '01 02', changedBytes: [1] },
      { kind: 'signal', timestamp: 3, id: '0x010', signal: 'Speed', value: 2, previous: 1, unit: 'km/h' },
      { kind: 'frame', timestamp: 4, id: '0x010', data: '05 03', previous: '01 03', changedBytes: [0] },
    ]);
    expect(r).toMatchObject({ cursor: 4, more: false });
    expect(
      watchEvents(frames, rows, { ids: new Set(['0x010']), signals: [], cursor: 4, limit: 10 }, 4),
    ).toEqual({ events: [], cursor: 4, more: false });
  });

  it('cuts at a timestamp boundary so the next cursor loses nothing', () => {
    const first = watchEvents(
      frames,
      rows,
      { ids: new Set(['0x010', '0x020']), signals: ['Speed'], limit: 3 },
      4,
    );
    // Events at t=1 (frame, signal), t=3 (frame 0x10, frame 0x20, signal), t=4: a limit of 3 stops after t=1.
    expect(first.events.map((e) => e.timestamp)).toEqual([1, 1]);
    expect(first).toMatchObject({ cursor: 1, more: true });
    const next = watchEvents(
      frames,
      rows,
      { ids: new Set(['0x010', '0x020']), signals: ['Speed'], cursor: first.cursor!, limit: 3 },
      4,
    );
    expect(next.events.map((e) => `${e.timestamp}/${e.kind}/${e.id}`)).toEqual([
      '3/frame/0x010',
      '3/frame/0x020',
      '3/signal/0x010',
    ]);
  });
});
