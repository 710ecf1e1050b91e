import type { AppConfig } from '../../core/config';
import {
  commitIdOf,
  sortFiles,
  type CertificateBody,
  type CommitFile,
  type CommitManifest,
} from '../../core/datasets/manifest';
import type { DatasetCommit, Prisma } from '../../generated/prisma/client';
import type { Db } from '../db';
import { createCertificateSigner } from './signing';

export interface NewCommit extends CommitManifest {
  jobId: string;
  /** Key prefix of the files in the exports bucket (ends with `/`). */
  prefix: string;
  counts: Record<string, unknown>;
  gate: Record<string, unknown>;
  sessionIds: string[];
  modelVersions: string[];
  createdBy: string | null;
}

/**
 * Records a finished export as a commit: its id from the manifest, the next version of its name
 * (under a per-name lock, so two exports finishing together cannot take the same version), and a
 * certificate signed with the configured key. Recording the same manifest again (a retried
 * finalisation, or an export that wrote identical files) returns the existing commit.
 */
export async function recordCommit(
  deps: { db: Db; config: Pick<AppConfig, 'export'> },
  input: NewCommit,
): Promise<DatasetCommit> {
  const files: CommitFile[] = sortFiles(input.files);
  const commitId = commitIdOf({
    name: input.name,
    files,
    predicate: input.predicate,
    split: input.split,
    formats: input.formats,
  });
  const signer = createCertificateSigner(deps.config.export);
  return deps.db.$transaction(async (tx) => {
    await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtext(${`dataset:${input.name}`}))`;
    const existing = await tx.datasetCommit.findUnique({ where: { commitId } });
    if (existing) return existing;
    const parent = await tx.datasetCommit.findFirst({
      where: { name: input.name },
      orderBy: { version: 'desc' },
    });
    const version = (parent?.version ?? 0) + 1;
    const exporter = input.createdBy
      ? await tx.user.findUnique({ where: { id: input.createdBy }, select: { email: true } })
      : null;
    const createdAt = new Date();
    const certificate: CertificateBody = {
      kind: 'drivelab.dataset-certificate/v1',
      commit_id: commitId,
      name: input.name,
      version,
      files,
      counts: input.counts,
      gate: input.gate,
      exported_by: { user_id: input.createdBy, email: exporter?.email ?? null },
      exported_at: createdAt.toISOString(),
      key_id: signer.keyId,
    };
    const json = (v: unknown) => v as Prisma.InputJsonValue;
    return tx.datasetCommit.create({
      data: {
        commitId,
        name: input.name,
        version,
        jobId: input.jobId,
        parentId: parent?.commitId ?? null,
        prefix: input.prefix,
        files: json(files),
        counts: json(input.counts),
        gate: json(input.gate),
        predicate: json(input.predicate),
        formats: input.formats,
        split: json(input.split),
        sessionIds: input.sessionIds,
        modelVersions: input.modelVersions,
        certificate: json(certificate),
        signature: signer.sign(certificate),
        keyId: signer.keyId,
        createdBy: input.createdBy,
        createdAt,
      },
    });
  });
}
