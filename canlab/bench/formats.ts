/**
 * Parse benchmark: writes ~1 million generated frames per format into a temp directory (canlab's
 * writers where it has one, else the owner's line layout by hand), then times reading each back,
 * through `readCapture` (one frame per `for await` step) and through `readCaptureBatches`, beside
 * its target and the candump reader measured in the same run. Set CANLAB_BENCH_FRAMES to change
 * the count.
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

/** Hex helpers for the hand-written layouts below. */
const H2 = (b: number): string => b.toString(16).toUpperCase().padStart(2, '0');
const hexId = (f: CanFrame, width: number): string => f.id.toString(16).toUpperCase().padStart(width, '0');

/**
 * The formats canlab reads but does not write, each as its owner lays a line out (see the reader
 * modules and tools/formats_fixtures.py): a header and one line per frame. CAN FD frames are left
 * out of the layouts that cannot hold them.
 */
const TEXT_LAYOUTS: Record<
  string,
  { header: string; line: (f: CanFrame, n: number, t: number) => string | null }
> = {
  trc: {
    header: ';$FILEVERSION=2.1\n;$STARTTIME=45000.5\n;$COLUMNS=N,O,T,B,I,d,R,L,D\n',
    line: (f, n, t) =>
      `${String(n).padStart(7)} ${(t * 1000).toFixed(3).padStart(13)} ${f.fd ? 'FB' : 'DT'} ${f.channel} ${hexId(f, f.extended ? 8 : 4).padStart(8)} Rx -  ${String(f.dlc).padEnd(4)}${Array.from(f.data, (b) => ' ' + H2(b)).join('')}`,
  },
  microchip: {
    header:
      '//---------------------------------\nMicrochip Technology Inc.\nCAN BUS Analyzer\n//---------------------------------\n',
    line: (f, _n, t) =>
      f.fd
        ? null
        : `${Math.round(t * 1000)};RX;0x${hexId(f, 8)};${f.data.length};${Array.from(f.data, (b) => `0x${H2(b)};`).join('')}`,
  },
  kvaser: {
    header: 'Chn Identifier Flg   DLC  D0...1...2...3...4...5...6..D7       Time     Dir\n',
    line: (f, _n, t) =>
      f.fd
        ? null
        : `${String(f.channel).padStart(2)}  ${hexId(f, 8).padStart(10)}       ${String(f.dlc).padStart(3)} ${Array.from(
            f.data,
            (b) => ` ${H2(b)} `,
          )
            .join('')
            .padEnd(32)}${t.toFixed(6).padStart(14)} R`,
  },
  lawicel: {
    header: '',
    line: (f, _n, t) =>
      `${f.fd ? (f.extended ? 'B' : 'b') : f.extended ? 'T' : 't'}${hexId(f, f.extended ? 8 : 3)}${f.dlc.toString(16).toUpperCase()}${Array.from(f.data, H2).join('')}${(Math.round(t * 1000) % 60000).toString(16).toUpperCase().padStart(4, '0')}\r`,
  },
  canhacker: {
    header: 'Time   ID     DLC Data                    Comment\n',
    line: (f, _n, t) =>
      f.fd
        ? null
        : `${(t % 60).toFixed(3).padStart(6, '0')} ${hexId(f, f.extended ? 8 : 3)} ${f.dlc} ${Array.from(f.data, H2).join(' ')}`,
  },
  clx000: {
    header:
      '# Logger type: CL2000\n# Time: 20231114T220000\n# Value separator: ";"\n# Time format: 4\n# Time separator: ""\n# Time separator ms: ""\n# Date separator: ""\n# Time and date separator: "T"\nTimestamp;Type;ID;Data\n',
    line: (f, _n, t) => {
      if (f.fd) return null;
      const ms = Math.round(t * 1000);
      const clock = `${String(Math.floor(ms / 3600000) % 24).padStart(2, '0')}${String(Math.floor(ms / 60000) % 60).padStart(2, '0')}${String(Math.floor(ms / 1000) % 60).padStart(2, '0')}${String(ms % 1000).padStart(3, '0')}`;
      return `14T${clock};${f.extended ? 1 : 0};${hexId(f, f.extended ? 8 : 3)};${Array.from(f.data, H2).join('')}`;
    },
  },
  cabana: {
    header: 'time,addr,bus,data\n',
    line: (f, _n, t) =>
      `${t.toFixed(3)},0x${f.id.toString(16)},${f.channel},0x${Array.from(f.data, H2).join('')}`,
  },
  generic: {
    header: 'ID,Data Bytes\n',
    line: (f) => (f.fd ? null : `${hexId(f, 8)},${Array.from(f.data, (b) => H2(b) + ' ').join('')}`),
  },
};

/** Writes a read-only layout by hand; returns how many frames it holds (FD frames some cannot). */
async function writeText(file: string, layout: string, count: number): Promise<number> {
  const { header, line } = TEXT_LAYOUTS[layout]!;
  const fh = await open(file, 'w');
  let n = 0;
  try {
    let text = header;
    let t0: number | undefined;
    for (const f of traffic(count)) {
      t0 ??= f.timestamp;
      const l = line(f, n + 1, f.timestamp - t0);
      if (l === null) continue;
      n++;
      text += l.endsWith('\r') ? l : l + '\n';
      if (text.length > 1 << 20) {
        await fh.write(text);
        text = '';
      }
    }
    await fh.write(text);
  } finally {
    await fh.close();
  }
  return n;
}

async function writeFormat(file: string, layout: string, count: number): Promise<number> {
  if (layout in TEXT_LAYOUTS) return writeText(file, layout, count);
  const w = createCaptureWriter(file);
  for (const f of traffic(count)) await w.write(f);
  await w.close();
  return count;
}

/**
 * Every format, its file name, and its target for `readCaptureBatches` in frames/s on this 2-core
 * machine: the binary BLF and the byte-level candump parser at 2 M/s; the per-line text parsers at
 * 200 k/s, so that an hour of a 2,000 frames/s bus (7.2 M frames) opens in under 40 s.
 */
const BENCH_FORMATS: { name: string; file: string; layout: string; target: number }[] = [
  { name: 'candump', file: 'bench.log', layout: 'candump', target: 2e6 },
  { name: 'BLF', file: 'bench.blf', layout: 'blf', target: 2e6 },
  { name: 'ASC', file: 'bench.asc', layout: 'asc', target: 2e5 },
  { name: 'GVRET CSV', file: 'bench.csv', layout: 'gvret', target: 2e5 },
  { name: 'PCAN TRC 2.1', file: 'bench.trc', layout: 'trc', target: 2e5 },
  { name: 'Microchip', file: 'microchip.log', layout: 'microchip', target: 2e5 },
  { name: 'Kvaser hex', file: 'kvaser.txt', layout: 'kvaser', target: 2e5 },
  { name: 'Lawicel', file: 'lawicel.log', layout: 'lawicel', target: 2e5 },
  { name: 'CANHacker', file: 'canhacker.trc', layout: 'canhacker', target: 2e5 },
  { name: 'CLX000', file: 'clx000.txt', layout: 'clx000', target: 2e5 },
  { name: 'cabana CSV', file: 'cabana.csv', layout: 'cabana', target: 2e5 },
  { name: 'generic CSV', file: 'generic.csv', layout: 'generic', target: 2e5 },
];

async function timeIt(fn: () => Promise<number>): Promise<{ frames: number; seconds: number }> {
  const start = process.hrtime.bigint();
  const frames = await fn();
  return { frames, seconds: Number(process.hrtime.bigint() - start) / 1e9 };
}

export async function benchFormats(): Promise<void> {
  const count = Number(process.env.CANLAB_BENCH_FRAMES ?? 1_000_000);
  const dir = mkdtempSync(path.join(os.tmpdir(), 'canlab-bench-'));
  const rows: string[][] = [
    [
      'format',
      'frames',
      'MiB',
      'write s',
      'readCapture frames/s',
      'MiB/s',
      'batches frames/s',
      'target',
      'vs candump',
    ],
  ];
  let baseline: number | undefined;
  try {
    for (const fmt of BENCH_FORMATS) {
      const file = path.join(dir, fmt.file);
      let frames = 0;
      const written = await timeIt(async () => (frames = await writeFormat(file, fmt.layout, count)));
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
      if (single.frames !== frames || batch.frames !== frames)
        throw new Error(`${fmt.name}: read ${single.frames}/${batch.frames} frames, wrote ${frames}`);
      const rate = batch.frames / batch.seconds;
      baseline ??= rate; // candump comes first
      rows.push([
        fmt.name,
        String(frames),
        mib.toFixed(1),
        written.seconds.toFixed(2),
        Math.round(single.frames / single.seconds).toLocaleString('en-US'),
        (mib / single.seconds).toFixed(1),
        Math.round(rate).toLocaleString('en-US'),
        `${rate >= fmt.target ? '>=' : '< '} ${(fmt.target / 1e6).toFixed(1)} M`,
        `${(rate / baseline).toFixed(2)}x`,
      ]);
      rmSync(file, { force: true });
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
  console.log(`capture parsing (node ${process.version}, ${os.cpus().length} cpus; target is for batches)`);
  for (const [i, r] of rows.entries()) {
    console.log(
      r.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!))).join('  '),
    );
    if (i === 0) console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  }
}
