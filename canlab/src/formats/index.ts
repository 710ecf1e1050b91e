/**
 * Capture formats by file extension: readers yield frames as an AsyncIterable (streaming, never
 * the whole file in memory), writers take frames one at a time.
 *
 * | extension | format | read | write |
 * | --- | --- | --- | --- |
 * | .log | can-utils candump log | yes | yes |
 * | .asc | Vector ASC | yes | yes |
 * | .blf | Vector BLF | yes | yes |
 * | .trc | PEAK PCAN-View TRC 1.0–2.1 | yes | no |
 * | .csv | SavvyCAN GVRET CSV | yes | yes |
 */
import { CanlabInputError } from '../errors';
import type { CanFrame } from '../frame';
import { AscWriter, readAsc, readAscBatches } from './asc';
import { BlfWriter, readBlf, readBlfBatches } from './blf';
import { CandumpWriter, readCandump, readCandumpBatches } from './candump';
import { extensionOf, type CaptureWriter } from './common';
import { CsvWriter, readCsv, readCsvBatches } from './csv';
import { readTrc, readTrcBatches } from './trc';

export type { CaptureWriter } from './common';

interface FormatEntry {
  name: string;
  read: (file: string) => AsyncIterable<CanFrame>;
  readBatches: (file: string) => AsyncIterable<CanFrame[]>;
  open?: (file: string) => Promise<CaptureWriter>;
}

const FORMATS: Record<string, FormatEntry> = {
  '.log': {
    name: 'candump log',
    read: readCandump,
    readBatches: readCandumpBatches,
    open: (f) => CandumpWriter.open(f),
  },
  '.asc': { name: 'Vector ASC', read: readAsc, readBatches: readAscBatches, open: (f) => AscWriter.open(f) },
  '.blf': { name: 'Vector BLF', read: readBlf, readBatches: readBlfBatches, open: (f) => BlfWriter.open(f) },
  '.trc': { name: 'PEAK TRC', read: readTrc, readBatches: readTrcBatches },
  '.csv': { name: 'GVRET CSV', read: readCsv, readBatches: readCsvBatches, open: (f) => CsvWriter.open(f) },
};

/** Extensions `readCapture` accepts. */
export const READ_EXTENSIONS = Object.keys(FORMATS);
/** Extensions `createCaptureWriter` accepts. */
export const WRITE_EXTENSIONS = Object.keys(FORMATS).filter((e) => FORMATS[e]!.open !== undefined);

function entryFor(file: string, writing: boolean): FormatEntry {
  const ext = extensionOf(file);
  const entry = FORMATS[ext];
  const supported = writing ? WRITE_EXTENSIONS : READ_EXTENSIONS;
  if (entry === undefined || (writing && entry.open === undefined)) {
    const what =
      ext === ''
        ? 'has no extension'
        : entry === undefined
          ? `has unknown extension ${ext}`
          : `is ${entry.name}, which canlab reads but cannot write`;
    throw new CanlabInputError(
      file,
      `capture file ${what}; ${writing ? 'writable' : 'supported'} extensions: ${supported.join(', ')}`,
    );
  }
  return entry;
}

/** The format name for a capture path (throws CanlabInputError for an unknown extension). */
export function captureFormat(file: string): string {
  return entryFor(file, false).name;
}

/**
 * Streams the frames of a capture, choosing the reader by extension (.log, .asc, .blf, .trc,
 * .csv; case-insensitive). Throws CanlabInputError at once for an unknown extension, and while
 * iterating for unreadable files and malformed content (`file:line` or `file@offset`).
 */
export function readCapture(path: string): AsyncIterable<CanFrame> {
  return entryFor(path, false).read(path);
}

/** Like `readCapture` but yields the frames in arrays (one per read chunk or container): less per-frame overhead for hot loops. */
export function readCaptureBatches(path: string): AsyncIterable<CanFrame[]> {
  return entryFor(path, false).readBatches(path);
}

/** Options for `createCaptureWriter`. */
export interface CaptureWriterOptions {
  /**
   * Choose the format by this path's extension instead of `path`'s (and name it in the error for
   * an unwritable extension): for writing to a temporary file such as `out.blf.partial-123`.
   */
  formatOf?: string;
}

/**
 * Opens a writer chosen by extension (.log, .asc, .blf, .csv). The file is created (truncated)
 * on the first `write` or `close`; `write` resolves once the frame is buffered, waiting for the
 * disk when the buffer is full; `close` flushes and must be awaited.
 */
export function createCaptureWriter(path: string, options: CaptureWriterOptions = {}): CaptureWriter {
  const entry = entryFor(options.formatOf ?? path, true);
  let writer: CaptureWriter | undefined;
  let opening: Promise<CaptureWriter> | undefined;
  const get = async (): Promise<CaptureWriter> => (writer ??= await (opening ??= entry.open!(path)));
  return {
    write(frame: CanFrame): Promise<void> {
      return writer !== undefined ? writer.write(frame) : get().then((w) => w.write(frame));
    },
    async close(): Promise<void> {
      await (await get()).close();
    },
  };
}
