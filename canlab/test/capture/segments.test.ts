import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SegmentWriter } from '../../src/capture/segments';
import { readCapture } from '../../src/formats';
import type { CanFrame } from '../../src/frame';

const frame = (timestamp: number): CanFrame => ({
  timestamp,
  id: 0x10,
  extended: false,
  remote: false,
  error: false,
  fd: false,
  brs: false,
  esi: false,
  dlc: 1,
  data: Uint8Array.of(1),
  channel: 0,
});

it('rotates by frame time at --max-seconds and by count at --max-frames, without empty segments', async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'canlab-seg-'));
  try {
    let rotations = 0;
    const w = new SegmentWriter(dir, 3, 2, () => rotations++);
    for (const t of [100, 101, 101.9, 102.5, 102.6, 102.7, 102.8]) await w.write(frame(t));
    await w.close();
    expect(w.segments().map((s) => [s.file, s.frames, s.start, s.end])).toEqual([
      ['segment-0001.csv', 3, 100, 101.9],
      ['segment-0002.csv', 3, 102.5, 102.7],
      ['segment-0003.csv', 1, 102.8, 102.8],
    ]);
    expect(rotations).toBe(2);
    const times: number[] = [];
    for await (const f of readCapture(path.join(dir, 'segment-0002.csv'))) times.push(f.timestamp);
    expect(times).toEqual([102.5, 102.6, 102.7]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
