/**
 * `canlab lint <dbc>`: every finding about a DBC file, one line each, `file:line: level: message
 * [code]`, then a summary line. Exit status: 0 when no finding is an error (warnings and notes are
 * printed all the same), 1 when one is or the file does not parse (then the usual one-line
 * `canlab: file:line: …`), 2 for a usage error. The checks are described in docs/dbc.md.
 */
import type { CliRun } from '../command';
import { CanlabInputError } from '../../errors';
import { lintDbc } from '../../dbc/lint';
import { loadDbcSource } from '../../dbc/parse';

export const run: CliRun = async ({ positionals }, io) => {
  if (positionals.length !== 1)
    throw new CanlabInputError('lint', `expects one <dbc>, got ${positionals.length} arguments`);
  const file = positionals[0]!;
  const parsed = await loadDbcSource(file);
  const findings = lintDbc(parsed);
  const count = { error: 0, warning: 0, note: 0 };
  for (const f of findings) {
    count[f.level]++;
    io.stdout(`${file}:${f.line}: ${f.level}: ${f.message} [${f.code}]\n`);
  }
  const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? '' : 's'}`;
  const signals = parsed.db.messages.reduce((n, m) => n + m.signals.length, 0);
  io.stdout(
    `${file}: ${plural(parsed.db.messages.length, 'message')}, ${plural(signals, 'signal')}; ` +
      `${plural(count.error, 'error')}, ${plural(count.warning, 'warning')}, ${plural(count.note, 'note')}\n`,
  );
  return count.error > 0 ? 1 : 0;
};
