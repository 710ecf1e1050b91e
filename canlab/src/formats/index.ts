/**
 * Reading any capture format canlab knows (the list is `CAPTURE_FORMATS` in registry.ts), chosen by
 * content, and writing the formats canlab writes, chosen by extension. Readers yield frames as an
 * AsyncIterable (streaming, never the whole file in memory); writers take frames one at a time.
 *
 * How a reader is chosen (docs/formats.md has the per-format content tests):
 * 1. the file's first SNIFF_BYTES bytes go to every format's `sniff`;
 * 2. of the formats that claim it, the first whose extensions include the file's wins, else the
 *    first in list order;
 * 3. when none claims it, the format whose extensions include the file's reads it anyway, so its
 *    parse error names the line that is wrong;
 * 4. otherwise the file is refused, naming the formats and extensions canlab knows.
 * Every error a reader raises is prefixed with its format's name: `file:LINE: <format>: <what>`.
 */
import { CanlabInputError } from '../errors';
import type { CanFrame } from '../frame';
import { extensionOf, flatten, readHead, type CaptureWriter } from './common';
import { CAPTURE_FORMATS, type CaptureFormat } from './registry';

export type { CaptureWriter } from './common';
export type { CaptureFormat } from './registry';
export { CAPTURE_FORMATS } from './registry';

/** Extensions `createCaptureWriter` accepts. */
export const WRITE_EXTENSIONS = CAPTURE_FORMATS.filter((f) => f.open !== undefined).flatMap(
  (f) => f.extensions,
);

function claims(format: CaptureFormat, head: Buffer): boolean {
  try {
    return format.sniff(head);
  } catch {
    return false; // a content test that chokes on odd bytes simply does not claim the file
  }
}

/** The format whose reader `readCapture` uses for `head`, the start of a file named `file` (see the module comment). */
export function chooseFormat(file: string, head: Buffer): CaptureFormat {
  const ext = extensionOf(file);
  const claimed = CAPTURE_FORMATS.filter((f) => claims(f, head));
  const chosen =
    claimed.find((f) => f.extensions.includes(ext)) ??
    claimed[0] ??
    CAPTURE_FORMATS.find((f) => f.extensions.includes(ext));
  if (chosen !== undefined) return chosen;
  const extensions = [...new Set(CAPTURE_FORMATS.flatMap((f) => f.extensions))].join(', ');
  throw new CanlabInputError(
    file,
    `${head.length === 0 ? 'empty file' : 'content is not a capture format canlab reads'}, and ${
      ext === '' ? 'the file has no extension' : `extension ${ext} names none`
    }; formats: ${CAPTURE_FORMATS.map((f) => f.name).join(', ')}; extensions: ${extensions}`,
  );
}

/** The format `readCapture` would read `file` with (reads its first bytes). */
export async function detectCaptureFormat(file: string): Promise<CaptureFormat> {
  return chooseFormat(file, await readHead(file));
}

/** Names the format in a reader's input error, once: `file:LINE: <format>: <what>`. */
function naming(format: CaptureFormat, err: unknown): unknown {
  if (!(err instanceof CanlabInputError) || err.message.startsWith(`${format.name}: `)) return err;
  return new CanlabInputError(err.where, `${format.name}: ${err.message}`);
}

/** The batches of `file`, the format detected when iteration starts, its errors named. */
async function* detectedBatches(file: string): AsyncGenerator<CanFrame[]> {
  const format = await detectCaptureFormat(file);
  try {
    yield* format.readBatches(file);
  } catch (err) {
    throw naming(format, err);
  }
}

/**
 * Streams the frames of a capture, the reader chosen by content (see the module comment). Errors
 * arrive while iterating: unreadable or unrecognised files, and malformed content located as
 * `file:line` or `file@offset` with the format named.
 */
export function readCapture(path: string): AsyncIterableIterator<CanFrame> {
  // flattened batches: the error naming then costs once per batch, not once per frame
  return flatten(detectedBatches(path));
}

/** Like `readCapture` but yields the frames in arrays (one per read chunk or container): less per-frame overhead for hot loops. */
export function readCaptureBatches(path: string): AsyncIterableIterator<CanFrame[]> {
  return detectedBatches(path);
}

/** The format that writes files with `file`'s extension (throws CanlabInputError when none does). */
export function writeFormat(file: string): CaptureFormat & Required<Pick<CaptureFormat, 'open'>> {
  const ext = extensionOf(file);
  const entry = CAPTURE_FORMATS.find((f) => f.open !== undefined && f.extensions.includes(ext));
  if (entry?.open !== undefined) return { ...entry, open: entry.open };
  const reader = CAPTURE_FORMATS.find((f) => f.extensions.includes(ext));
  const what =
    ext === ''
      ? 'has no extension'
      : reader === undefined
        ? `has unknown extension ${ext}`
        : `is ${reader.name}, which canlab reads but cannot write`;
  throw new CanlabInputError(
    file,
    `capture file ${what}; writable extensions: ${WRITE_EXTENSIONS.join(', ')}`,
  );
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
 * Opens a writer chosen by extension (WRITE_EXTENSIONS). The file is created (truncated) on the
 * first `write` or `close`; `write` resolves once the frame is buffered, waiting for the disk when
 * the buffer is full; `close` flushes and must be awaited.
 */
export function createCaptureWriter(path: string, options: CaptureWriterOptions = {}): CaptureWriter {
  const { open } = writeFormat(options.formatOf ?? path);
  let writer: CaptureWriter | undefined;
  let opening: Promise<CaptureWriter> | undefined;
  const get = async (): Promise<CaptureWriter> => (writer ??= await (opening ??= open(path)));
  return {
    write(frame: CanFrame): Promise<void> {
      return writer !== undefined ? writer.write(frame) : get().then((w) => w.write(frame));
    },
    async close(): Promise<void> {
      await (await get()).close();
    },
  };
}
