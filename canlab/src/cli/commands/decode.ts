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
 * one summary line goes to stdout.
 */
import { open } from 'node:fs/promises';
import path from 'node:path';
import type { CliRun } from '../command';
import { CanlabInputError } from '../../errors';
import { readCaptureBatches } from '../../formats';
import { compileDecoder, type DecodedSignal } from '../../dbc/codec';
import type { DbcMessage, DbcSignal } from '../../dbc/model';
import { loadDbc } from '../../dbc/parse';

/** Decimal places needed to show multiples of `x` exactly (0.25 → 2, 1E-5 → 5, 10 → 0). */
function decimalsOf(x: number): number {
  if (!Number.isFinite(x) || x === 0 || Number.isInteger(x)) return 0;
  const [mantissa = '', exponent = '0'] = x.toExponential().split('e');
  const fraction = mantissa.split('.')[1]?.length ?? 0;
  return Math.min(15, Math.max(0, fraction - Number(exponent)));
}

function signalDecimals(signal: DbcSignal): number {
  if (signal.valueType !== 'integer') return -1;
  return Math.max(decimalsOf(signal.factor), decimalsOf(signal.offset));
}

/** Physical value text: rounded to `decimals` (-1: shortest round-trip form, for floats). */
export function formatPhysical(value: number, decimals: number): string {
  if (decimals <= 0 || !Number.isFinite(value) || Math.abs(value) >= 1e21) return String(value);
  return String(Number(value.toFixed(decimals)));
}

function csvCell(text: string): string {
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

function idText(id: number, extended: boolean): string {
  return (
    '0x' +
    id
      .toString(16)
      .toUpperCase()
      .padStart(extended ? 8 : 3, '0')
  );
}

interface MessageFormat {
  /** Row head without the timestamp: `,0x1F0,ExampleMessage`. */
  head: string;
  decimals: Map<string, number>;
}

function messageFormat(message: DbcMessage): MessageFormat {
  const decimals = new Map<string, number>();
  for (const s of message.signals) {
    if (!decimals.has(s.name)) decimals.set(s.name, signalDecimals(s));
  }
  return { head: `,${idText(message.id, message.extended)},${csvCell(message.name)}`, decimals };
}

function signalCell(format: MessageFormat, s: DecodedSignal): string {
  const value = formatPhysical(s.value, format.decimals.get(s.name) ?? -1);
  const text = s.label === undefined ? `${s.name}=${value}` : `${s.name}=${value} (${s.label})`;
  return csvCell(text);
}

const FLUSH_AT = 1 << 18;

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

  const db = await loadDbc(dbcPath);
  const decoder = compileDecoder(db);
  const batches = readCaptureBatches(input);
  const formats = new Map<DbcMessage, MessageFormat>();
  const unknownIds = new Set<number>();
  let frames = 0;
  let decoded = 0;
  let unknown = 0;
  let remoteOrError = 0;

  const file = await open(outPath, 'w');
  try {
    let chunk = 'timestamp,id,message,signals\n';
    for await (const batch of batches) {
      for (const frame of batch) {
        frames++;
        if (frame.remote || frame.error) {
          remoteOrError++;
          continue;
        }
        const result = decoder(frame.id, frame.extended, frame.data);
        if (result === undefined) {
          unknown++;
          unknownIds.add(frame.extended ? frame.id + 0x100000000 : frame.id);
          continue;
        }
        decoded++;
        let format = formats.get(result.message);
        if (format === undefined) {
          format = messageFormat(result.message);
          formats.set(result.message, format);
        }
        let row = frame.timestamp.toFixed(6) + format.head;
        for (const s of result.signals) row += ',' + signalCell(format, s);
        chunk += row + '\n';
        if (chunk.length >= FLUSH_AT) {
          await file.write(chunk, null, 'utf8');
          chunk = '';
        }
      }
    }
    if (chunk !== '') await file.write(chunk, null, 'utf8');
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
