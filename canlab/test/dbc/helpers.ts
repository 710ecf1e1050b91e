import { readdirSync } from 'node:fs';
import { fixture } from '../fixtures';

/** Every fixture DBC (cantools', opendbc's and the real capture's): [label, absolute path]. */
export function fixtureDbcs(): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  for (const dir of ['dbc-cantools', 'dbc-opendbc', 'real']) {
    for (const file of readdirSync(fixture(dir)).sort()) {
      if (file.endsWith('.dbc')) out.push([`${dir}/${file}`, fixture(dir, file)]);
    }
  }
  return out;
}

export function hex(bytes: Uint8Array): string {
  return Buffer.from(bytes).toString('hex');
}

export function bytes(hexText: string): Uint8Array {
  return new Uint8Array(Buffer.from(hexText.replace(/\s+/g, ''), 'hex'));
}
