import { createHash } from 'node:crypto';
import type { Readable } from 'node:stream';
import {
  canonicalJson,
  commitIdOf,
  type CertificateBody,
  type CommitFile,
} from '../../core/datasets/manifest';
import { archivePieces, archiveBytes, tarLayout, type TarLayout } from '../../core/datasets/tar';
import type { DatasetCommit } from '../../generated/prisma/client';
import type { CertificateSigner } from '../export/signing';
import { isMissingObject } from '../inspector/frame-objects';
import type { ObjectStore } from '../storage/object-store';
import { commitFiles } from './read';

/**
 * Moving a commit's stored files out of the exports bucket (docs/datasets-release.md): whole or
 * by byte range, as one file, as a tar archive, or through a hash for verification. Everything
 * streams; nothing holds more than a stream buffer of a file.
 */

export const commitKey = (commit: Pick<DatasetCommit, 'prefix'>, path: string): string =>
  `${commit.prefix}${path}`;

/** `length` bytes of a stored object from `offset`. */
export const openStored = (
  storage: ObjectStore,
  key: string,
  offset: number,
  length: number,
): Promise<Readable> => storage.client.getPartialObject(storage.bucket('exports'), key, offset, length);

/** A commit as a ustar archive: its files in `files` order, all stamped with the commit's time. */
export function commitArchive(commit: Pick<DatasetCommit, 'files' | 'createdAt'>): TarLayout {
  return tarLayout(commitFiles(commit), Math.floor(commit.createdAt.getTime() / 1000));
}

/** Archive bytes [start, end) of a commit, fetching only the byte ranges of the files they overlap. */
export function commitArchiveBytes(
  storage: ObjectStore,
  commit: Pick<DatasetCommit, 'prefix'>,
  layout: TarLayout,
  range: { start: number; end: number },
): AsyncGenerator<Uint8Array> {
  return archiveBytes(layout, archivePieces(layout, range.start, range.end), (index, offset, length) =>
    openStored(storage, commitKey(commit, layout.entries[index]!.path), offset, length),
  );
}

const CONTENT_TYPES: Record<string, string> = {
  json: 'application/json',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  png: 'image/png',
  txt: 'text/plain; charset=utf-8',
  md: 'text/markdown; charset=utf-8',
  yaml: 'application/yaml',
  parquet: 'application/vnd.apache.parquet',
  tar: 'application/x-tar',
};

export const contentTypeOf = (path: string): string =>
  CONTENT_TYPES[path.slice(path.lastIndexOf('.') + 1).toLowerCase()] ?? 'application/octet-stream';

/** Size and SHA-256 of a stored object, or null when it is absent; stops early when `signal` fires. */
async function hashStored(
  storage: ObjectStore,
  key: string,
  signal?: AbortSignal,
): Promise<{ size: number; sha256: string } | null> {
  let stream: Readable;
  try {
    stream = await storage.client.getObject(storage.bucket('exports'), key);
  } catch (err) {
    if (isMissingObject(err)) return null;
    throw err;
  }
  const hash = createHash('sha256');
  let size = 0;
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    if (signal?.aborted) break;
    hash.update(chunk);
    size += chunk.length;
  }
  return { size, sha256: hash.digest('hex') };
}

export type MismatchReason = 'missing' | 'size' | 'sha256';

export interface FileMismatch {
  path: string;
  reason: MismatchReason;
  expected: string | number;
  actual: string | number | null;
}

export type SignatureOutcome = 'valid' | 'invalid' | 'unknown_key';

export interface CommitVerification {
  commit_id: string;
  valid: boolean;
  files_total: number;
  files_checked: number;
  bytes_checked: number;
  mismatches: FileMismatch[];
  signature: SignatureOutcome;
  signature_valid: boolean;
  key_id: string;
  manifest_valid: boolean;
  /** What disagrees between the row, its manifest and the signed certificate; empty when valid. */
  manifest_problems: string[];
  checked_at: string;
}

/** Files hashed at once: enough to hide per-request latency, few enough to leave the store to others. */
const VERIFY_CONCURRENCY = 4;

/** The ways a commit row disagrees with its own manifest and with the certificate that was signed. */
function manifestProblems(commit: DatasetCommit, files: CommitFile[], certificate: Partial<CertificateBody>) {
  const problems: string[] = [];
  const manifestId = commitIdOf({
    name: commit.name,
    files,
    predicate: commit.predicate,
    split: commit.split,
    formats: commit.formats,
  });
  if (manifestId !== commit.commitId)
    problems.push(`the manifest (name, files, predicate, split, formats) hashes to ${manifestId}`);
  if (canonicalJson(files) !== canonicalJson(certificate.files ?? null))
    problems.push("the stored file list differs from the certificate's");
  if (new Set(files.map((f) => f.path)).size !== files.length) problems.push('the file list repeats a path');
  const stated: Array<[keyof CertificateBody, unknown]> = [
    ['commit_id', commit.commitId],
    ['name', commit.name],
    ['version', commit.version],
    ['key_id', commit.keyId],
  ];
  for (const [field, value] of stated)
    if (certificate[field] !== value)
      problems.push(
        `the certificate's ${field} is ${JSON.stringify(certificate[field])}, the commit's ${JSON.stringify(value)}`,
      );
  return problems;
}

/**
 * Re-hashes every stored file of a commit and checks its manifest and signature. A commit signed
 * by another key than the configured one (a rotated key) cannot be checked here: `unknown_key`,
 * and not valid, since nothing vouches for it. When `signal` fires (the caller left) the remaining
 * files are skipped and the result is incomplete, hence not valid.
 */
export async function verifyCommit(
  storage: ObjectStore,
  signer: CertificateSigner,
  commit: DatasetCommit,
  signal?: AbortSignal,
): Promise<CommitVerification> {
  const files = commitFiles(commit);
  const certificate = (commit.certificate ?? {}) as Partial<CertificateBody>;
  const problems = manifestProblems(commit, files, certificate);
  const signature: SignatureOutcome =
    commit.keyId !== signer.keyId
      ? 'unknown_key'
      : signer.verify(certificate as CertificateBody, commit.signature)
        ? 'valid'
        : 'invalid';

  const found: Array<FileMismatch | null> = [];
  let checked = 0;
  let bytes = 0;
  let next = 0;
  const worker = async () => {
    while (next < files.length && !signal?.aborted) {
      const index = next++;
      const file = files[index]!;
      const stored = await hashStored(storage, commitKey(commit, file.path), signal);
      if (signal?.aborted) return;
      checked++;
      bytes += stored?.size ?? 0;
      found[index] = !stored
        ? { path: file.path, reason: 'missing', expected: file.sha256, actual: null }
        : stored.size !== file.size
          ? { path: file.path, reason: 'size', expected: file.size, actual: stored.size }
          : stored.sha256 !== file.sha256
            ? { path: file.path, reason: 'sha256', expected: file.sha256, actual: stored.sha256 }
            : null;
    }
  };
  await Promise.all(Array.from({ length: Math.min(VERIFY_CONCURRENCY, files.length) }, worker));
  // In file order whatever order the workers finished in.
  const mismatches = found.filter((m): m is FileMismatch => Boolean(m));

  return {
    commit_id: commit.commitId,
    valid: checked === files.length && !mismatches.length && !problems.length && signature === 'valid',
    files_total: files.length,
    files_checked: checked,
    bytes_checked: bytes,
    mismatches,
    signature,
    signature_valid: signature === 'valid',
    key_id: commit.keyId,
    manifest_valid: !problems.length,
    manifest_problems: problems,
    checked_at: new Date().toISOString(),
  };
}
