import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';

/**
 * Dataset commits (docs/datasets.md). A commit is content-addressed: its id is the SHA-256 of the
 * canonical JSON (RFC 8785) of its manifest, so two exports that wrote the same files under the
 * same name and selection are the same commit, and any change of a byte is a different one.
 */

export interface CommitFile {
  /** Path inside the dataset, e.g. `annotations/instances_train.json`. */
  path: string;
  sha256: string;
  size: number;
}

export interface CommitManifest {
  name: string;
  /** Files sorted by path: the archive order of a download. */
  files: CommitFile[];
  predicate: unknown;
  split: unknown;
  formats: string[];
}

export function canonicalJson(value: unknown): string {
  const text = canonicalize(value);
  if (text === undefined) throw new Error('value has no canonical JSON form');
  return text;
}

export const sha256Hex = (data: string | Buffer): string => createHash('sha256').update(data).digest('hex');

export function sortFiles(files: readonly CommitFile[]): CommitFile[] {
  return [...files].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

export function commitIdOf(manifest: CommitManifest): string {
  return sha256Hex(canonicalJson({ ...manifest, files: sortFiles(manifest.files) }));
}

/** What a certificate states; its canonical JSON is what the key signs. */
export interface CertificateBody {
  kind: 'drivelab.dataset-certificate/v1';
  commit_id: string;
  name: string;
  version: number;
  files: CommitFile[];
  counts: Record<string, unknown>;
  gate: Record<string, unknown>;
  exported_by: { user_id: string | null; email: string | null };
  exported_at: string;
  key_id: string;
}
