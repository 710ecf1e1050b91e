/**
 * `canlab adapters list|add|remove|test`: the saved adapters in <config_dir>/adapters.json, and
 * the Test action (open, listen 1 s, close; never transmits).
 */
import type { AdapterConfig } from '../../adapters/types';
import { ADAPTER_UNAVAILABLE_EXIT, BACKENDS } from '../../adapters/types';
import {
  adaptersFile,
  findAdapter,
  loadAdapters,
  removeAdapter,
  saveAdapter,
  validateAdapter,
} from '../../adapters/store';
import { ADAPTER_TEST_LISTEN_MS, testAdapter } from '../../adapters/receive';
import { CanlabInputError } from '../../errors';
import type { CliRun } from '../command';

const ACTIONS = ['list', 'add', 'remove', 'test'];

function describe(a: AdapterConfig): string {
  const extras = Object.entries(a.extras).map(([k, v]) => `${k}=${String(v)}`);
  return [
    a.name,
    a.backend,
    a.channel || '-',
    a.bitrate !== undefined ? `${a.bitrate} bit/s` : '-',
    a.fd ? 'fd' : 'classic',
    extras.join(' ') || '-',
  ].join('\t');
}

function integerOption(
  values: Record<string, string | boolean | undefined>,
  name: string,
): number | undefined {
  const raw = values[name];
  if (raw === undefined) return undefined;
  const n = Number(raw);
  if (!Number.isInteger(n) || n <= 0)
    throw new CanlabInputError('adapters', `--${name} must be a positive integer, not '${String(raw)}'`);
  return n;
}

export const run: CliRun = async ({ positionals, values }, io) => {
  const [action, name, ...extra] = positionals;
  if (action === undefined || !ACTIONS.includes(action))
    throw new CanlabInputError(
      'adapters',
      `expects one of ${ACTIONS.join(', ')}${action ? `, not '${action}'` : ''}`,
    );
  if (extra.length > 0) throw new CanlabInputError('adapters', `unexpected argument '${extra[0]}'`);
  if (action === 'list') {
    const list = await loadAdapters();
    io.stdout(`${adaptersFile()}: ${list.length} saved adapter${list.length === 1 ? '' : 's'}\n`);
    if (list.length > 0)
      io.stdout(['name\tbackend\tchannel\tbitrate\tmode\textras', ...list.map(describe)].join('\n') + '\n');
    io.stdout(`backends: ${BACKENDS.join(', ')}\n`);
    return 0;
  }
  if (name === undefined) throw new CanlabInputError('adapters', `${action} needs an adapter name`);
  if (action === 'add') {
    const extras: Record<string, unknown> = {};
    const serialBaud = integerOption(values, 'serial-baud');
    if (serialBaud !== undefined) extras['serialBaud'] = serialBaud;
    if (values['socketcand-host'] !== undefined) extras['socketcandHost'] = values['socketcand-host'];
    const adapter = validateAdapter(
      {
        name,
        backend: values['backend'],
        channel: values['channel'] ?? '',
        bitrate: integerOption(values, 'bitrate'),
        fd: values['fd'] === true,
        extras,
      },
      'adapters add',
    );
    await saveAdapter(adapter);
    io.stdout(`saved ${describe(adapter).replace(/\t/g, ' ')} to ${adaptersFile()}\n`);
    return 0;
  }
  if (action === 'remove') {
    if (!(await removeAdapter(name)))
      throw new CanlabInputError(adaptersFile(), `no saved adapter named '${name}'`);
    io.stdout(`removed ${name} from ${adaptersFile()}\n`);
    return 0;
  }
  const adapter = await findAdapter(name);
  const result = await testAdapter(adapter, ADAPTER_TEST_LISTEN_MS);
  if (!result.ok) {
    io.stderr(
      `canlab: adapter '${adapter.name}' (${adapter.backend}): ${result.reason}; fix: ${result.fix}\n`,
    );
    return ADAPTER_UNAVAILABLE_EXIT;
  }
  io.stdout(
    `${adapter.name}: opened, listened ${(result.listenedMs / 1000).toFixed(1)} s, heard ${result.frames} frame${result.frames === 1 ? '' : 's'}${result.ids.length > 0 ? ` (ids ${result.ids.join(' ')})` : ''}; nothing was sent\n`,
  );
  return 0;
};
