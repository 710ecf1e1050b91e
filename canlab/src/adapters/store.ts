/**
 * Saved adapters, mirrored to `<config_dir>/adapters.json` so the command line can use them by
 * name (`canlab capture --adapter <name>`, `canlab adapters list|add|remove|test`).
 *
 * ```json
 * { "version": 1, "adapters": [ { "name": "car", "backend": "gvret", "channel": "192.168.4.1:23",
 *   "bitrate": 500000, "fd": false, "extras": {} } ] }
 * ```
 */
import { mkdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { configDir } from '../config-dir';
import { CanlabInputError } from '../errors';
import { writeFileAtomic } from '../atomic-file';
import type { AdapterConfig, AdapterExtras } from './types';
import { BACKENDS, isBackendId } from './types';

const NAME = /^[A-Za-z0-9_.-]{1,64}$/;

export function adaptersFile(dir = configDir()): string {
  return path.join(dir, 'adapters.json');
}

function positiveInteger(value: unknown, what: string, where: string): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value) || value <= 0)
    throw new CanlabInputError(where, `${what} must be a positive integer, not ${JSON.stringify(value)}`);
  return value;
}

/** Checks an adapter description (from adapters.json or the command line); throws CanlabInputError naming `where`. */
export function validateAdapter(raw: unknown, where: string): AdapterConfig {
  if (typeof raw !== 'object' || raw === null)
    throw new CanlabInputError(where, 'an adapter is an object with name, backend and channel');
  const r = raw as Record<string, unknown>;
  if (typeof r['name'] !== 'string' || !NAME.test(r['name']))
    throw new CanlabInputError(
      where,
      `adapter name must be 1-64 letters, digits, _ . or -, not ${JSON.stringify(r['name'])}`,
    );
  const name = r['name'];
  if (typeof r['backend'] !== 'string' || !isBackendId(r['backend'])) {
    throw new CanlabInputError(
      where,
      `adapter '${name}': backend must be one of ${BACKENDS.join(', ')}, not ${JSON.stringify(r['backend'])}`,
    );
  }
  const channel = r['channel'] ?? '';
  if (typeof channel !== 'string')
    throw new CanlabInputError(where, `adapter '${name}': channel must be a string`);
  if (r['fd'] !== undefined && typeof r['fd'] !== 'boolean')
    throw new CanlabInputError(where, `adapter '${name}': fd must be true or false`);
  const extrasRaw = (r['extras'] ?? {}) as Record<string, unknown>;
  if (typeof extrasRaw !== 'object' || extrasRaw === null)
    throw new CanlabInputError(where, `adapter '${name}': extras must be an object`);
  const extras: AdapterExtras = {};
  const serialBaud = positiveInteger(extrasRaw['serialBaud'], `adapter '${name}': extras.serialBaud`, where);
  if (serialBaud !== undefined) extras.serialBaud = serialBaud;
  const host = extrasRaw['socketcandHost'];
  if (host !== undefined) {
    if (typeof host !== 'string' || host.length === 0)
      throw new CanlabInputError(
        where,
        `adapter '${name}': extras.socketcandHost must be a host or host:port`,
      );
    extras.socketcandHost = host;
  }
  const adapter: AdapterConfig = { name, backend: r['backend'], channel, fd: r['fd'] === true, extras };
  const bitrate = positiveInteger(r['bitrate'], `adapter '${name}': bitrate`, where);
  if (bitrate !== undefined) adapter.bitrate = bitrate;
  return adapter;
}

/** The saved adapters; none when the file does not exist yet. */
export async function loadAdapters(dir = configDir()): Promise<AdapterConfig[]> {
  const file = adaptersFile(dir);
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw new CanlabInputError(file, `cannot read: ${(err as Error).message}`);
  }
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    throw new CanlabInputError(file, `not JSON: ${(err as Error).message}`);
  }
  const list = (doc as { adapters?: unknown } | null)?.adapters;
  if (!Array.isArray(list)) throw new CanlabInputError(file, 'expected {"version": 1, "adapters": [...]}');
  return list.map((a, i) => validateAdapter(a, `${file}: adapters[${i}]`));
}

export async function saveAdapters(adapters: readonly AdapterConfig[], dir = configDir()): Promise<void> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  await writeFileAtomic(adaptersFile(dir), JSON.stringify({ version: 1, adapters }, null, 2) + '\n');
}

/** Adds an adapter or replaces the one with its name. */
export async function saveAdapter(adapter: AdapterConfig, dir = configDir()): Promise<void> {
  const list = (await loadAdapters(dir)).filter((a) => a.name !== adapter.name);
  await saveAdapters([...list, adapter], dir);
}

/** Removes a saved adapter; false when none has that name. */
export async function removeAdapter(name: string, dir = configDir()): Promise<boolean> {
  const list = await loadAdapters(dir);
  const kept = list.filter((a) => a.name !== name);
  if (kept.length === list.length) return false;
  await saveAdapters(kept, dir);
  return true;
}

export async function findAdapter(name: string, dir = configDir()): Promise<AdapterConfig> {
  const found = (await loadAdapters(dir)).find((a) => a.name === name);
  if (found === undefined)
    throw new CanlabInputError(adaptersFile(dir), `no saved adapter named '${name}' (canlab adapters list)`);
  return found;
}
