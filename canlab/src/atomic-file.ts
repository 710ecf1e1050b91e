import { rename, rm, writeFile } from 'node:fs/promises';
import { renameSync, rmSync, writeFileSync } from 'node:fs';

/**
 * Writes `file` through a temporary file in the same directory and a rename, so a reader sees
 * the old content or the new, never half of it. `mode` applies to the new file.
 */
export async function writeFileAtomic(file: string, content: string, mode = 0o644): Promise<void> {
  const temp = `${file}.tmp-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
  try {
    await writeFile(temp, content, { mode });
    await rename(temp, file);
  } catch (err) {
    await rm(temp, { force: true });
    throw err;
  }
}

/** The synchronous twin of writeFileAtomic, for small files that must be on disk before the caller answers. */
export function writeFileAtomicSync(file: string, content: string, mode = 0o644): void {
  const temp = `${file}.tmp-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
  try {
    writeFileSync(temp, content, { mode });
    renameSync(temp, file);
  } catch (err) {
    rmSync(temp, { force: true });
    throw err;
  }
}
