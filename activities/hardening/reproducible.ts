import { sha256Hex } from '../../core/datasets/manifest';
import { jsonDifferences, type Difference } from '../../core/hardening/reproducible';
import { RefusedError } from '../../core/errors';
import type { AppConfig } from '../../core/config';
import type { Prisma } from '../../generated/prisma/client';
import type { Actor } from '../annotations/objects';
import { recordAudit } from '../audit';
import { commitFiles, findCommit } from '../datasets/read';
import type { Db } from '../db';
import { computeEvaluations, findEvaluation, type EvaluateParams } from '../evalgov/evaluate';
import { createCertificateSigner } from '../export/signing';
import { isMissingObject, readObject } from '../inspector/frame-objects';
import type { ObjectStore } from '../storage/object-store';

/**
 * Reproducibility checks (docs/hardening.md "Reproducible"): an evaluation computed again from the
 * same run, gold set, slice, IoU threshold and parity tolerance and compared with what was stored;
 * a dataset commit's stored files hashed again and compared with its signed manifest. Each check is
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

async function reproduceCommit(deps: Deps, commitId: string) {
  const commit = await findCommit(deps.db, commitId);
  const bucket = deps.storage.bucket('exports');
  const differences: Difference[] = [];
  let bytes = 0;
  for (const f of commitFiles(commit)) {
    try {
      const data = await readObject(deps.storage, { bucket, key: `${commit.prefix}${f.path}` });
      bytes += data.length;
      const hash = sha256Hex(data);
      if (hash !== f.sha256) differences.push({ path: `${f.path}.sha256`, original: f.sha256, now: hash });
      if (data.length !== f.size)
        differences.push({ path: `${f.path}.size`, original: f.size, now: data.length });
    } catch (err) {
      if (!isMissingObject(err)) throw err;
      differences.push({ path: f.path, original: f.sha256, now: null });
    }
  }
  const signer = createCertificateSigner(deps.config.export);
  const signature =
    commit.keyId !== signer.keyId
      ? `signed by ${commit.keyId}, not the configured key ${signer.keyId}: not checked`
      : signer.verify(commit.certificate as object, commit.signature)
        ? 'valid'
        : 'invalid';
  if (signature === 'invalid')
    differences.push({ path: 'certificate.signature', original: 'valid', now: 'invalid' });
  return {
    subject: { kind: 'commit' as const, id: commit.commitId, name: commit.name, version: commit.version },
    checked: `${commitFiles(commit).length} files (${bytes} bytes) against the manifest's SHA-256 and sizes, and the certificate's signature`,
    differences,
    now: { files: commitFiles(commit).length, bytes, signature },
  };
}

export async function checkReproducible(
  deps: Deps,
  subject: { evaluationId: string } | { commitId: string },
  actor: Actor,
) {
  const outcome =
    'evaluationId' in subject
      ? await reproduceEvaluation(deps.db, subject.evaluationId)
      : await reproduceCommit(deps, subject.commitId);
  const result = {
    ...outcome,
    reproduced: outcome.differences.length === 0,
    differences_total: outcome.differences.length,
    differences: outcome.differences.slice(0, DIFFERENCES_LISTED),
  };
  const run = await deps.db.governanceRun.create({
    data: {
      kind: 'reproducible',
      status: 'completed',
      params: { subject: outcome.subject.kind, id: outcome.subject.id },
      result: result as unknown as Prisma.InputJsonValue,
      requestedBy: actor.userId,
      finishedAt: new Date(),
    },
  });
  await recordAudit(deps.db, {
    actorId: actor.userId,
    action: 'hardening.reproducible_checked',
    subjectType: outcome.subject.kind === 'commit' ? 'dataset_commit' : 'eval_operation',
    subjectId: outcome.subject.id,
    detail: { check_id: run.id, reproduced: result.reproduced, differences: result.differences_total },
    requestId: actor.requestId,
  });
  return { check_id: run.id, ...result, created_at: run.createdAt.toISOString() };
}
