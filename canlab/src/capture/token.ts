import { randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { CanlabInputError } from '../errors';

/**
 * The capture kit's API token: generated on first run (32 hex characters from 16 random bytes)
 * into `file` with mode 0600, and read back on later runs, so scripts keep working across
 * recordings.
 */
export async function loadOrCreateToken(file: string): Promise<{ token: string; created: boolean }> {
  try {
    const token = (await readFile(file, 'utf8')).trim();
    if (token.length === 0)
      throw new CanlabInputError(file, 'token file is empty; delete it to have a new token generated');
    if (/\s/.test(token))
      throw new CanlabInputError(file, 'token file holds more than one word; it should hold the token alone');
    return { token, created: false };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') {
      if (err instanceof CanlabInputError) throw err;
      throw new CanlabInputError(file, `cannot read token file: ${(err as Error).message}`);
    }
  }
  const token = randomBytes(16).toString('hex');
  try {
    await mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
    // 'wx': never overwrite a token another process created meanwhile
    await writeFile(file, token + '\n', { mode: 0o600, flag: 'wx' });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return loadOrCreateToken(file);
    throw new CanlabInputError(file, `cannot write token file: ${(err as Error).message}`);
  }
  return { token, created: true };
}
