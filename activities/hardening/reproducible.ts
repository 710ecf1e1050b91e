import { randomUUID } from 'node:crypto';
import { commitIdOf, sha256Hex, type CommitFile } from '../../core/datasets/manifest';
import { jsonDifferences, manifestDifferences, type Difference } from '../../core/hardening/reproducible';
import { RefusedError } from '../../core/errors';
import type { AppConfig } from '../../core/config';
import type { DatasetCommit, ExportJob, GovernanceRun, Prisma } from '../../generated/prisma/client';
import type { Actor } from '../annotations/objects';
import { recordAudit } from '../audit';
import { commitFiles, findCommit } from '../datasets/read';
import type { Db } from '../db';
import { computeEvaluations, findEvaluation, type EvaluateParams } from '../evalgov/evaluate';
import { createCertificateSigner } from '../export/signing';
import { assertWorkMayStart } from '../govern/start-guard';
import { isMissingObject, readObject } from '../inspector/frame-objects';
import type { ObjectStore } from '../storage/object-store';

/**
 * Reproducibility checks (docs/hardening.md "Reproducible"): an evaluation computed again from the
 * same run, gold set, slice, IoU threshold and parity tolerance and compared with what was stored
 * (in the request); a dataset commit's export rebuilt by the export workflow into a scratch prefix
 * and compared file by file with its signed manifest, its stored files hashed again. Each check is
 * a governance run (`kind = reproducible`), audited.
 */

/** Differences listed at most; the rest are counted. */
export const DIFFERENCES_LISTED = 50;

type Deps = { db: Db; storage: ObjectStore; config: Pick<AppConfig, 'export'> };

async function reproduceEvaluation(db: Db, operationId: string) {
  const op = await findEvaluation(db, operationId);
  const p = op.params as unknown as EvaluateParams;
  const { evaluated } = await computeEvaluations(
    db,
    { run_id: p.run_id, gold_id: p.gold_id, slice_ids: p.slice_id ? [p.slice_id] : [], iou_thr: p.iou_thr },
    p.parity_epsilon,
  );
  const again = evaluated.find((e) => e.params.slice_id === p.slice_id);
  if (!again) throw new RefusedError(`the slice ${p.slice_id} of evaluation ${op.id} no longer exists`);
  const differences = jsonDifferences(op.result, again.result);
  const r = again.result;
  return {
    subject: {
      kind: 'evaluation' as const,
      id: op.id,
      run_id: p.run_id,
      gold_id: p.gold_id,
      slice_id: p.slice_id,
    },
    checked: 'every stored figure of the evaluation (mAP, AP50, AP75, per class, parity)',
    differences,
    now: { map: r.map, ap50: r.ap50, ap75: r.ap75 },
  };
}

/** The commit's stored files hashed again against its manifest, and its certificate's signature. */
async function verifyStoredCommit(deps: Deps, commit: DatasetCommit) {
  const bucket = deps.storage.bucket('exports');
  const stored: CommitFile[] = [];
  for (const f of commitFiles(commit)) {
    try {
      const data = await readObject(deps.storage, { bucket, key: `${commit.prefix}${f.path}` });
      stored.push({ path: f.path, sha256: sha256Hex(data), size: data.length });
    } catch (err) {
      if (!isMissingObject(err)) throw err;
    }
  }
  const differences = manifestDifferences(commitFiles(commit), stored);
  const bytes = stored.reduce((n, f) => n + f.size, 0);
  const signer = createCertificateSigner(deps.config.export);
  const signature =
    commit.keyId !== signer.keyId
      ? `signed by ${commit.keyId}, not the configured key ${signer.keyId}: not checked`
      : signer.verify(commit.certificate as object, commit.signature)
        ? 'valid'
        : 'invalid';
  if (signature === 'invalid')
    differences.push({ path: 'certificate.signature', original: 'valid', now: 'invalid' });
  return { differences, files: commitFiles(commit).length, bytes, signature };
}

const commitSubject = (commit: DatasetCommit) => ({
  kind: 'commit' as const,
  id: commit.commitId,
  name: commit.name,
  version: commit.version,
});

/** The answer's shape, whichever subject: the first differences listed, all counted. */
function checkResult<T extends { differences: Difference[] }>(outcome: T) {
  return {
    ...outcome,
    reproduced: outcome.differences.length === 0,
    differences_total: outcome.differences.length,
    differences: outcome.differences.slice(0, DIFFERENCES_LISTED),
  };
}

const auditCheck = (
  db: Db,
  input: {
    actorId: string | null;
    subject: { kind: string; id: string };
    detail: object;
    requestId?: string;
  },
) =>
  recordAudit(db, {
    actorId: input.actorId,
    action: 'hardening.reproducible_checked',
    subjectType: input.subject.kind === 'commit' ? 'dataset_commit' : 'eval_operation',
    subjectId: input.subject.id,
    detail: input.detail,
    requestId: input.requestId,
  });

/** An evaluation computed again and compared with what was stored: one governance run, in the request. */
export async function checkEvaluationReproducible(deps: Deps, evaluationId: string, actor: Actor) {
  const result = checkResult(await reproduceEvaluation(deps.db, evaluationId));
  const run = await deps.db.governanceRun.create({
    data: {
      kind: 'reproducible',
      status: 'completed',
      params: { subject: 'evaluation', id: result.subject.id },
      result: result as unknown as Prisma.InputJsonValue,
      requestedBy: actor.userId,
      finishedAt: new Date(),
    },
  });
  await auditCheck(deps.db, {
    actorId: actor.userId,
    subject: result.subject,
    detail: { check_id: run.id, reproduced: result.reproduced, differences: result.differences_total },
    requestId: actor.requestId,
  });
  return { check_id: run.id, ...result, created_at: run.createdAt.toISOString() };
}

/**
 * Records the rebuild of a commit (the export run again from the commit's selection, split,
 * formats and gate mode into its own job's scratch prefix, recording no commit) and its check,
 * running, in one transaction. The kill switch refuses it as it refuses an export.
 */
export async function queueCommitRebuild(
  deps: { db: Db; config: Pick<AppConfig, 'pii'> },
  commitId: string,
  actor: Actor,
) {
  const { db } = deps;
  await assertWorkMayStart(db, 'export');
  const commit = await findCommit(db, commitId);
  const original = await db.exportJob.findUnique({ where: { id: commit.jobId } });
  const includeImages =
    original?.includeImages ?? commitFiles(commit).some((f) => f.path.startsWith('images/'));
  const mode = (commit.gate as { mode?: string }).mode ?? deps.config.pii.coverageGate;
  const json = (v: unknown) => v as Prisma.InputJsonValue;
  const checkId = randomUUID();
  return db.$transaction(async (tx) => {
    const job = await tx.exportJob.create({
      data: {
        name: commit.name,
        predicate: json(commit.predicate),
        formats: commit.formats,
        includeImages,
        split: json(commit.split),
        gateMode: mode,
        gate: json({ mode, outcome: 'pending' }),
        createdBy: actor.userId,
        reproducesCommitId: commit.commitId,
        reproductionCheckId: checkId,
      },
    });
    const check = await tx.governanceRun.create({
      data: {
        id: checkId,
        kind: 'reproducible',
        status: 'running',
        params: { subject: 'commit', id: commit.commitId, job_id: job.id },
        requestedBy: actor.userId,
      },
    });
    return { commit, job, check, subject: commitSubject(commit) };
  });
}

/** A rebuild that could not start: neither its job nor its check is kept. */
export async function forgetCommitRebuild(db: Db, queued: { job: ExportJob; check: GovernanceRun }) {
  await db.$transaction([
    db.exportJob.delete({ where: { id: queued.job.id } }),
    db.governanceRun.delete({ where: { id: queued.check.id } }),
  ]);
}

/**
 * The end of a rebuild (called by the export's last step once every file is written to the
 * scratch prefix): its files against the commit's manifest, the commit's stored files hashed
 * again, and the sessions the rebuild no longer holds (erased, or left out for consent). Completes
 * the check and returns what the job records.
 */
export async function completeCommitRebuild(
  deps: Deps,
  job: ExportJob,
  rebuilt: { files: CommitFile[]; sessionIds: string[]; consentExcluded: unknown[] },
) {
  const commit = await findCommit(deps.db, job.reproducesCommitId!);
  const stored = await verifyStoredCommit(deps, commit);
  const rebuiltCommitId = commitIdOf({
    name: commit.name,
    files: rebuilt.files,
    predicate: commit.predicate,
    split: commit.split,
    formats: commit.formats,
  });
  const now = new Set(rebuilt.sessionIds);
  const result = checkResult({
    subject: commitSubject(commit),
    checked: `the export rebuilt from the commit's selection, split, formats and gate mode (export job ${job.id}), file by file against the manifest; the stored files hashed again (paths under stored/); the certificate's signature`,
    differences: [
      ...manifestDifferences(commitFiles(commit), rebuilt.files),
      ...stored.differences.map((d) => ({ ...d, path: `stored/${d.path}` })),
    ],
    now: {
      files: stored.files,
      bytes: stored.bytes,
      signature: stored.signature,
      rebuild: {
        job_id: job.id,
        commit_id: rebuiltCommitId,
        files: rebuilt.files.length,
        bytes: rebuilt.files.reduce((n, f) => n + f.size, 0),
        sessions_left_out: commit.sessionIds.filter((id) => !now.has(id)),
        consent_excluded: rebuilt.consentExcluded,
      },
    },
  });
  const check = await deps.db.governanceRun.update({
    where: { id: job.reproductionCheckId! },
    data: {
      status: 'completed',
      result: result as unknown as Prisma.InputJsonValue,
      error: null,
      finishedAt: new Date(),
    },
  });
  await auditCheck(deps.db, {
    actorId: job.createdBy,
    subject: result.subject,
    detail: {
      check_id: check.id,
      job_id: job.id,
      reproduced: result.reproduced,
      differences: result.differences_total,
    },
  });
  return { check_id: check.id, ...result, created_at: check.createdAt.toISOString() };
}

/** A rebuild that failed or was refused: its check says why. */
export async function failCommitRebuild(db: Db, checkId: string, error: string): Promise<void> {
  await db.governanceRun.updateMany({
    where: { id: checkId, status: 'running' },
    data: { status: 'failed', error, finishedAt: new Date() },
  });
}
