/**
 * Plugin approvals, trust on first use: `<config_dir>/plugins-approved.json` maps a file's
 * SHA-256 to what was approved. A file runs only while its current hash is approved, so an edit
 * (a new hash) needs a new approval.
 *
 * ```json
 * { "version": 1, "approved": { "<sha256 hex>": { "path": "/abs/plugin.js", "name": "x", "version": "1.0", "approvedAt": "…" } } }
 * ```
 */
import { createHash } from 'node:crypto';
import { mkdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { writeFileAtomic } from '../atomic-file';
import { configDir } from '../config-dir';
import { CanlabInputError } from '../errors';

export interface Approval {
  path: string;
  name: string;
  version: string;
  approvedAt: string;
}

export function approvalsFile(dir = configDir()): string {
  return path.join(dir, 'plugins-approved.json');
}

export function sha256(content: Buffer): string {
  return createHash('sha256').update(content).digest('hex');
}

export async function loadApprovals(dir = configDir()): Promise<Record<string, Approval>> {
  const file = approvalsFile(dir);
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw new CanlabInputError(file, `cannot read: ${(err as Error).message}`);
  }
  try {
    const doc = JSON.parse(text) as { approved?: Record<string, Approval> };
    if (typeof doc.approved !== 'object' || doc.approved === null) throw new Error('no "approved" object');
    return doc.approved;
  } catch (err) {
    throw new CanlabInputError(file, `not a plugin approval file: ${(err as Error).message}`);
  }
}

export async function saveApprovals(approved: Record<string, Approval>, dir = configDir()): Promise<void> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  await writeFileAtomic(approvalsFile(dir), JSON.stringify({ version: 1, approved }, null, 2) + '\n', 0o600);
}
