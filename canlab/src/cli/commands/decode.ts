/**
 * `canlab decode <capture> --dbc <file> --out <file>`: decodes every frame whose id the DBC defines
 * and writes CSV.
 *
 * CSV layout: one row per decoded frame, with a fixed head and then one cell per signal present in
 * that frame (rows are ragged because messages differ, and multiplexed messages differ frame to
 * frame):
 *
 *     timestamp,id,message,signals
 *     1436509052.249713,0x1F0,ExampleMessage,Temperature=250.55,AverageRadius=3.2,Enable=1 (Enabled)
 *
 * - `timestamp`: seconds as the capture gives them, 6 decimals.
 * - `id`: `0x` + upper-case hex; extended (29-bit) ids are written with 8 digits, standard ones
 *   with 3, so `0x00000123` (extended) and `0x123` (standard) stay distinguishable.
 * - `message`: the DBC message name.
 * - each signal cell is `name=value`: the physical value (raw × factor + offset), rounded to the
 *   decimals of the factor and offset so 0.1 steps print as `0.3`, not `0.30000000000000004`;
 *   when the signal's value table has a label for the raw value it follows in parentheses:
 *   `Gear=4 (DI_GEAR_D)`. Only signals the frame's multiplexer values select are written (simple
 *   and extended multiplexing), in DBC order; signals lying past the end of a short payload are
 *   left out. Cells holding `,`, `"` or a line break are quoted per RFC 4180.
 *
 * Frames whose id the DBC does not define, remote frames and error frames are skipped and counted;
 * one summary line goes to stdout. The DBC's findings that change what gets decoded (an id read as
 * a 29-bit one for lack of the extended flag, a signal that never decodes… see `canlab lint`) go to
 * stderr first, one line each, `canlab: <dbc>:<line>: warning: …`; decoding goes on.
 *
 * The rows are formatted by DecodedCsvWriter (src/dbc/decoded-csv.ts).
 */
import { open } from 'node:fs/promises';
import path from 'node:path';
import type { CliRun } from '../command';
import { CanlabInputError } from '../../errors';
import { readCaptureBatches } from '../../formats';
import { DecodedCsvWriter } from '../../dbc/decoded-csv';
import { lintDbc } from '../../dbc/lint';
import { loadDbcSource } from '../../dbc/parse';

export const run: CliRun = async ({ positionals, values }, io) => {
  if (positionals.length !== 1) {
    throw new CanlabInputError('decode', `expects one <capture>, got ${positionals.length} arguments`);
  }
  const input = positionals[0]!;
  const dbcPath = values.dbc;
  const outPath = values.out;
  if (typeof dbcPath !== 'string' || dbcPath === '')
    throw new CanlabInputError('decode', 'needs --dbc <file>');
  if (typeof outPath !== 'string' || outPath === '')
    throw new CanlabInputError('decode', 'needs --out <file>');
  if (path.resolve(outPath) === path.resolve(input) || path.resolve(outPath) === path.resolve(dbcPath)) {
    throw new CanlabInputError(outPath, 'output would overwrite an input file; choose another path');
  }

  const parsed = await loadDbcSource(dbcPath);
  for (const f of lintDbc(parsed)) {
    // decoding goes on whatever the finding, so each is a warning here
    if (f.decoding) io.stderr(`canlab: ${dbcPath}:${f.line}: warning: ${f.message}\n`);
  }
  const writer = new DecodedCsvWriter(parsed.db);
  const batches = readCaptureBatches(input);
  const unknownIds = new Set<number>();
  let frames = 0;
  let decoded = 0;
  let unknown = 0;
  let remoteOrError = 0;

  const file = await open(outPath, 'w');
  try {
    for await (const batch of batches) {
      for (const frame of batch) {
        frames++;
        if (frame.remote || frame.error) {
          remoteOrError++;
          continue;
        }
        if (!writer.add(frame.timestamp, frame.id, frame.extended, frame.data)) {
          unknown++;
          unknownIds.add(frame.extended ? frame.id + 0x100000000 : frame.id);
          continue;
        }
        decoded++;
        if (writer.full) await file.write(writer.take());
      }
    }
    await file.write(writer.take());
  } finally {
    await file.close();
  }

  const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? '' : 's'}`;
  let summary = `decoded ${decoded} of ${plural(frames, 'frame')} from ${input} with ${path.basename(dbcPath)} into ${outPath}`;
  summary += `; skipped ${plural(unknown, 'frame')} with ${plural(unknownIds.size, 'id')} not in the DBC`;
  if (remoteOrError > 0) summary += ` and ${plural(remoteOrError, 'remote/error frame')}`;
  io.stdout(summary + '\n');
  return 0;
};
