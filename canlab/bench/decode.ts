/**
 * Decode benchmark: compileDecoder over synthetic frames of the largest opendbc fixture
 * (tesla_can.dbc). Frames cycle through every message with pseudo-random payloads, plus a share of
 * ids the database does not define. Prints frames/s and decoded signals/s.
 */
import path from 'node:path';
import { compileDecoder } from '../src/dbc/codec';
import { loadDbc } from '../src/dbc/parse';

const DBC = path.resolve(__dirname, '../../../shared/fixtures/can/dbc-opendbc/tesla_can.dbc');

interface SyntheticFrame {
  id: number;
  extended: boolean;
  data: Uint8Array;
}

export async function benchDecode(frameCount = 2_000_000): Promise<void> {
  const db = await loadDbc(DBC);
  const decode = compileDecoder(db);
  let seed = 0x12345678;
  const random = (): number => {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    return seed >>> 24;
  };
  // A pool of distinct frames (one message in ten frames is an unknown id), reused cyclically.
  const pool: SyntheticFrame[] = [];
  for (let round = 0; round < 50; round++) {
    for (const m of db.messages) {
      const data = new Uint8Array(m.length);
      for (let i = 0; i < data.length; i++) data[i] = random();
      pool.push({ id: m.id, extended: m.extended, data });
    }
    for (let k = 0; k < db.messages.length / 10; k++)
      pool.push({ id: 0x7ff - k, extended: false, data: new Uint8Array(8) });
  }

  // Warm up the JIT, then time.
  let signals = 0;
  for (let i = 0; i < 200_000; i++) {
    const f = pool[i % pool.length]!;
    signals += decode(f.id, f.extended, f.data)?.signals.length ?? 0;
  }
  signals = 0;
  let unknown = 0;
  const start = process.hrtime.bigint();
  for (let i = 0; i < frameCount; i++) {
    const f = pool[i % pool.length]!;
    const decoded = decode(f.id, f.extended, f.data);
    if (decoded === undefined) unknown++;
    else signals += decoded.signals.length;
  }
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  const fps = frameCount / seconds;
  console.log(
    `decode: ${frameCount.toLocaleString('en-US')} frames of tesla_can.dbc (${db.messages.length} messages) in ` +
      `${seconds.toFixed(3)} s: ${Math.round(fps).toLocaleString('en-US')} frames/s, ` +
      `${Math.round(signals / seconds).toLocaleString('en-US')} signals/s (${unknown.toLocaleString('en-US')} unknown ids)`,
  );
}

if (require.main === module) {
  benchDecode().catch((e: unknown) => {
    console.error(e);
    process.exitCode = 1;
  });
}
