import { rename, rm } from 'node:fs/promises';
import path from 'node:path';
import type { CliRun } from '../command';
import { CanlabInputError } from '../../errors';
import { createCaptureWriter, detectCaptureFormat, readCaptureBatches, writeFormat } from '../../formats';
import { ioError } from '../../formats/common';

/**
 * `canlab convert <in> <out>`: streams frames from one capture format to another, the input's read
 * by content (see formats/index.ts), the output's chosen by extension. The frames go to `<out>.partial-<pid>` in the same directory, which is renamed onto
 * `<out>` only once it is completely written and closed; on any failure (bad input midway, a frame
 * the output cannot hold, a disk error) it is removed, so `<out>` is either the whole conversion or
 * left as it was (absent, or its previous content).
 */
export const run: CliRun = async ({ positionals }, io) => {
  if (positionals.length !== 2)
    throw new CanlabInputError(
      'convert',
      `expects <in> <out>, got ${positionals.length} argument${positionals.length === 1 ? '' : 's'}`,
    );
  const [input, output] = positionals as [string, string];
  const outFormat = writeFormat(output).name;
  if (path.resolve(input) === path.resolve(output))
    throw new CanlabInputError(output, 'output is the input file; choose another path');
  const partial = path.join(path.dirname(output), `${path.basename(output)}.partial-${process.pid}`);
  const inFormat = (await detectCaptureFormat(input)).name;
  const batches = readCaptureBatches(input);
  const writer = createCaptureWriter(partial, { formatOf: output });
  let count = 0;
  let closing = false;
  try {
    for await (const batch of batches) {
      for (const frame of batch) {
        try {
          await writer.write(frame);
        } catch (err) {
          // a frame the output format cannot represent is a problem with this input, not a crash
          if (err instanceof RangeError)
            throw new CanlabInputError(output, `frame ${count + 1} of ${input}: ${err.message}`);
          throw err;
        }
        count++;
      }
    }
    closing = true;
    await writer.close();
    try {
      await rename(partial, output);
    } catch (err) {
      throw ioError(output, err);
    }
  } catch (err) {
    if (!closing) {
      try {
        await writer.close(); // releases the file handle; the content is discarded below
      } catch {
        // the original error is the one to report
      }
    }
    try {
      await rm(partial, { force: true });
    } catch {
      // nothing more to do: the original error is the one to report
    }
    // errors opening or writing the temporary file are about the output the user named
    throw err instanceof CanlabInputError && err.where === partial
      ? new CanlabInputError(output, err.message)
      : err;
  }
  io.stdout(
    `converted ${count} frame${count === 1 ? '' : 's'}: ${input} (${inFormat}) -> ${output} (${outFormat})\n`,
  );
  return 0;
};
