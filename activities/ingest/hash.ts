import { createHash, type Hash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { compareFrameNames } from '../../core/media/frame-files';

async function hashFileInto(file: string, hash: Hash): Promise<number> {
  let size = 0;
  for await (const chunk of fs.createReadStream(file)) {
    hash.update(chunk as Buffer);
    size += (chunk as Buffer).length;
  }
  return size;
}

/**
 * SHA-256 of a server drive, read once: a file's bytes, or for a folder its file names and their
 * bytes in natural name order. What ingest recognises a server-path drive by (docs/ingest.md).
 */
export async function hashServerDrive(real: string): Promise<{ sha256: string; size: number }> {
  const hash = createHash('sha256');
  const stat = await fs.promises.stat(real);
  if (!stat.isDirectory()) {
    const size = await hashFileInto(real, hash);
    return { sha256: hash.digest('hex'), size };
  }
  const names = (await fs.promises.readdir(real, { recursive: true, withFileTypes: true }))
    .filter((d) => d.isFile())
    .map((d) => path.relative(real, path.join(d.parentPath, d.name)))
    .sort(compareFrameNames);
  let size = 0;
  for (const name of names) {
    hash.update(`${name}\0`);
    size += await hashFileInto(path.join(real, name), hash);
  }
  return { sha256: hash.digest('hex'), size };
}
