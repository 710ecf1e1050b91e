/**
 * Parse benchmark: writes ~1 million generated frames per format into a temp directory, then
 * times reading each back, through `readCapture` (one frame per `for await` step) and through
 * `readCaptureBatches`. Set CANLAB_BENCH_FRAMES to change the count.
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { open } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createCaptureWriter, readCapture, readCaptureBatches } from '../src/formats';
import { dlcToLength, type CanFrame } from '../src/frame';

/** Deterministic traffic: mostly classic 11-bit frames, some 29-bit ids, some CAN FD. */
function* traffic(count: number): Generator<CanFrame> {
  let seed = 42;
  const rnd = (): number => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed;
  };
  let t = 1700000000;
  for (let i = 0; i < count; i++) {
    t += 0.0001 + (rnd() % 100) / 1e6;
    const k = rnd() % 20;
    const fd = k === 0;
    const extended = k < 3;
    const dlc = fd ? 8 + (rnd() % 8) : rnd() % 9 === 0 ? rnd() % 8 : 8;
    const data = new Uint8Array(dlcToLength(dlc, fd));
    for (let b = 0; b < data.length; b++) data[b] = rnd() & 0xff;
    yield {
      timestamp: t,
      id: extended ? rnd() & 0x1fffffff : 0x100 + (rnd() % 64),
      extended,
      remote: false,
      error: false,
      fd,
      brs: fd,
      esi: false,
      dlc,
      data,
      channel: 1 + (rnd() % 2),
      direction: 'rx',
    };
  }
}

/** TRC has no writer in canlab: write a V2.1 file by hand for the benchmark. */
async function writeTrc(file: string, count: number): Promise<void> {
  const fh = await open(file, 'w');
  try {
    let text = ';$FILEVERSION=2.1\n;$STARTTIME=45000.5\n;$COLUMNS=N,O,T,B,I,d,R,L,D\n';
    let n = 0;
    let t0: number | undefined;
    for (const f of traffic(count)) {
      t0 ??= f.timestamp;
      const id = f.extended
        ? f.id.toString(16).toUpperCase().padStart(8, '0')
        : f.id.toString(16).toUpperCase().padStart(4, '0');
      let data = '';
      for (const b of f.data) data += ' ' + b.toString(16).toUpperCase().padStart(2, '0');
      text += `${String(++n).padStart(7)} ${((f.timestamp - t0) * 1000).toFixed(3).padStart(13)} ${f.fd ? 'FB' : 'DT'} ${f.channel} ${id.padStart(8)} Rx -  ${String(f.dlc).padEnd(4)}${data}\n`;
      if (text.length > 1 << 20) {
        await fh.write(text);
        text = '';
      }
    }
    await fh.write(text);
  } finally {
    await fh.close();
  }
}

async function writeFormat(file: string, count: number): Promise<void> {
  if (file.endsWith('.trc')) return writeTrc(file, count);
  const w = createCaptureWriter(file);
  for (const f of traffic(count)) await w.write(f);
  await w.close();
}

async function timeIt(fn: () => Promise<number>): Promise<{ frames: number; seconds: number }> {
  const start = process.hrtime.bigint();
  const frames = await fn();
  return { frames, seconds: Number(process.hrtime.bigint() - start) / 1e9 };
}

export async function benchFormats(): Promise<void> {
  const count = Number(process.env.CANLAB_BENCH_FRAMES ?? 1_000_000);
  const dir = mkdtempSync(path.join(os.tmpdir(), 'canlab-bench-'));
  const rows: string[][] = [
    ['format', 'frames', 'MiB', 'write s', 'readCapture frames/s', 'MiB/s', 'batches frames/s'],
  ];
  try {
    for (const ext of ['log', 'asc', 'blf', 'trc', 'csv']) {
      const file = path.join(dir, `bench.${ext}`);
      const written = await timeIt(async () => {
        await writeFormat(file, count);
        return count;
      });
      const mib = statSync(file).size / 2 ** 20;
      // one warm-up pass of each reader, then the timed passes
      const perFrame = async (): Promise<number> => {
        let n = 0;
        for await (const f of readCapture(file)) if (f.dlc >= 0) n++;
        return n;
      };
      const batched = async (): Promise<number> => {
        let n = 0;
        for await (const b of readCaptureBatches(file)) n += b.length;
        return n;
      };
      await batched();
      const single = await timeIt(perFrame);
      const batch = await timeIt(batched);
      if (single.frames !== count || batch.frames !== count)
        throw new Error(`${ext}: read ${single.frames}/${batch.frames} frames, wrote ${count}`);
      rows.push([
        ext,
        String(count),
        mib.toFixed(1),
        written.seconds.toFixed(2),
        Math.round(single.frames / single.seconds).toLocaleString('en-US'),
        (mib / single.seconds).toFixed(1),
        Math.round(batch.frames / batch.seconds).toLocaleString('en-US'),
      ]);
      rmSync(file, { force: true });
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
  console.log(`capture parsing (node ${process.version}, ${os.cpus().length} cpus)`);
  for (const [i, r] of rows.entries()) {
    console.log(
      r.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!))).join('  '),
    );
    if (i === 0) console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  }
}
