import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import {
  parquetPartInput,
  type Column,
  type ParquetPartInput,
  type TableColumns,
} from '../../core/export/parquet-tables';

/**
 * Parquet encoding on a thread of its own. Encoding a page (statistics, dictionaries, snappy) is
 * about as much work as reading and building it, and on the main thread it would stall the reads,
 * uploads and heartbeats meant to overlap it; its garbage would also sit in the main heap. Plain
 * JavaScript, so that it starts the same under node, tsx and jest. Pages are encoded one at a time
 * in the order they were asked for. Nothing is copied across: typed columns are moved to the
 * thread, string columns cross packed (`packStrings`), and the file is moved back.
 */
const ENCODER_THREAD = `
const { parentPort, workerData } = require('node:worker_threads');
const writer = import(workerData.writer);
// A file is written into a buffer a quarter larger than the last file of its table: grown from
// 1 KB by doubling, each would pass through a dozen buffers, which the allocator keeps resident.
const sizes = new Map();
const unpack = ({ utf8, ends, rows }) => {
  const distinct = new Array(ends.length);
  for (let k = 0, start = 0; k < ends.length; start = ends[k++]) distinct[k] = utf8.subarray(start, ends[k]);
  const values = new Array(rows.length);
  for (let i = 0; i < rows.length; i++) values[i] = rows[i] < 0 ? null : distinct[rows[i]];
  return values;
};
parentPort.on('message', async (m) => {
  try {
    const columnData = m.input.columnData.map(({ packed, ...c }) => (packed ? { ...c, data: unpack(packed) } : c));
    const { ByteWriter, parquetWrite } = await writer;
    const table = columnData.map((c) => c.name).join();
    const file = new ByteWriter(sizes.get(table) ?? 1024);
    parquetWrite({ ...m.input, columnData, writer: file });
    const bytes = file.getBuffer();
    sizes.set(table, Math.max(1024, Math.ceil(bytes.byteLength * 1.25)));
    parentPort.postMessage({ id: m.id, bytes }, [bytes]);
  } catch (err) {
    parentPort.postMessage({ id: m.id, error: String((err && err.stack) || err) });
  }
});`;

/**
 * A string column as it crosses to the thread: each distinct value once, as UTF-8 in one buffer
 * (`ends`: where each ends), and per row the index of its value (-1: null). Cloning tens of
 * thousands of strings would cost both threads more; and the writer, handed the same view for
 * every row of a value, encodes each value once (it would encode a string on every row it is in
 * when a column is not dictionary-encoded). The Parquet file is the same, byte for byte.
 */
interface PackedStrings {
  utf8: Uint8Array<ArrayBuffer>;
  ends: Int32Array<ArrayBuffer>;
  rows: Int32Array<ArrayBuffer>;
}

function packStrings(values: ArrayLike<string | null>): PackedStrings {
  const indexOf = new Map<string, number>();
  const distinct: string[] = [];
  const rows = new Int32Array(values.length);
  let size = 0;
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (v == null) {
      rows[i] = -1;
      continue;
    }
    let k = indexOf.get(v);
    if (k === undefined) {
      k = distinct.push(v) - 1;
      indexOf.set(v, k);
      size += Buffer.byteLength(v);
    }
    rows[i] = k;
  }
  // A buffer of its own (not the shared pool small buffers come from): it is moved to the thread.
  const utf8 = Buffer.from(new ArrayBuffer(size));
  const ends = new Int32Array(distinct.length);
  let at = 0;
  distinct.forEach((v, k) => (ends[k] = at += utf8.write(v, at)));
  return { utf8, ends, rows };
}

interface ThreadAnswer {
  id: number;
  bytes?: ArrayBuffer;
  error?: string;
}

export interface ParquetEncoder {
  /** One Parquet file of the table's `rows` rows; the table's typed columns are moved away. */
  encode<R>(columns: readonly Column<R>[], table: TableColumns<R>, rows: number): Promise<Buffer>;
}

/**
 * The thread starts with the first page and is restarted after a crash; it keeps the process
 * alive only while a file is awaited.
 */
export function createParquetEncoder(): ParquetEncoder {
  let thread: Worker | undefined;
  const waiting = new Map<number, { resolve: (b: Buffer) => void; reject: (e: Error) => void }>();
  let lastId = 0;

  const start = (): Worker => {
    const started = new Worker(ENCODER_THREAD, {
      eval: true,
      workerData: { writer: pathToFileURL(require.resolve('hyparquet-writer')).href },
      // Its garbage dies young (a page's columns and the writer's temporaries), so a small young
      // generation does; the default one would keep some 25 MB more resident for nothing.
      resourceLimits: { maxYoungGenerationSizeMb: 8 },
    });
    started.on('message', (a: ThreadAnswer) => {
      const w = waiting.get(a.id);
      if (!w) return;
      waiting.delete(a.id);
      if (waiting.size === 0) started.unref();
      if (a.bytes) w.resolve(Buffer.from(a.bytes));
      else w.reject(new Error(`Parquet encoding failed: ${a.error}`));
    });
    const fail = (err: Error) => {
      if (thread === started) thread = undefined;
      for (const w of waiting.values()) w.reject(err);
      waiting.clear();
    };
    started.on('error', fail);
    started.on('exit', (code) => fail(new Error(`the Parquet encoding thread exited (${code})`)));
    return started;
  };

  return {
    encode(columns, table, rows) {
      const moved: ArrayBuffer[] = [];
      const input: ParquetPartInput = parquetPartInput(columns, table, rows);
      const columnData = input.columnData.map((c) => {
        if (c.type !== 'STRING') {
          if (ArrayBuffer.isView(c.data)) moved.push(c.data.buffer as ArrayBuffer);
          return c;
        }
        const packed = packStrings(c.data as ArrayLike<string | null>);
        moved.push(packed.utf8.buffer, packed.ends.buffer, packed.rows.buffer);
        return { ...c, data: [], packed };
      });
      const id = ++lastId;
      const answer = new Promise<Buffer>((resolve, reject) => waiting.set(id, { resolve, reject }));
      thread ??= start();
      thread.ref();
      thread.postMessage({ id, input: { ...input, columnData } }, moved);
      return answer;
    },
  };
}
