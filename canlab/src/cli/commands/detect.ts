import { writeFile } from 'node:fs/promises';
import type { CliRun } from '../command';
import { CanlabInputError } from '../../errors';
import type { CanFrame } from '../../frame';
import { readCapture } from '../../formats';
import { formatId } from '../../analysis/bits';
import { buildDraftDbc, detectAll } from '../../detect';
import { formatFindings } from '../../detect/report';
import { writeDbc } from '../../dbc/write';

const DEFAULT_MAX_PER_ID = 20000;

/** `canlab detect <capture> [--json <file>] [--dbc <file>]`: runs every detector, prints findings per id. */
export const run: CliRun = async ({ positionals, values }, io) => {
  if (positionals.length !== 1)
    throw new CanlabInputError('detect', `expects <capture>, got ${positionals.length} arguments`);
  const maxText = values['max-frames-per-id'];
  const maxPerId = typeof maxText === 'string' ? Number(maxText) : DEFAULT_MAX_PER_ID;
  if (!Number.isInteger(maxPerId) || maxPerId < 2)
    throw new CanlabInputError(
      '--max-frames-per-id',
      `expects an integer of at least 2, got ${String(maxText)}`,
    );
  // Keep at most maxPerId frames of each id (the first ones, consecutive) so memory stays bounded.
  const kept: CanFrame[] = [];
  const perId = new Map<string, number>();
  let total = 0;
  for await (const frame of readCapture(positionals[0]!)) {
    total++;
    const key = formatId(frame.id, frame.extended);
    const n = perId.get(key) ?? 0;
    if (n >= maxPerId) continue;
    perId.set(key, n + 1);
    kept.push(frame);
  }
  const findings = detectAll(kept);
  io.stdout(
    `${total} frames, ${findings.ids.length} ids${kept.length < total ? ` (analysed the first ${maxPerId} frames of each id)` : ''}\n\n`,
  );
  io.stdout(formatFindings(findings));
  const json = values.json;
  if (typeof json === 'string') {
    await writeFile(json, JSON.stringify(findings, null, 2) + '\n');
    io.stdout(`findings written to ${json}\n`);
  }
  const dbc = values.dbc;
  if (typeof dbc === 'string') {
    const draft = buildDraftDbc(findings);
    await writeFile(dbc, writeDbc(draft));
    io.stdout(
      `draft DBC with ${draft.messages.length} messages and ${draft.messages.reduce((a, m) => a + m.signals.length, 0)} signals written to ${dbc}\n`,
    );
  }
  return 0;
};
