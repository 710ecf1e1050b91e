import { costCertificateBody, type CostCertificateBody } from '../../core/billing/certificate';
import {
  effectiveSpend,
  nextPeriod,
  periodStart,
  totalsOf,
  usageByPeriod,
  type Period,
} from '../../core/billing/spend';
import type { AppConfig } from '../../core/config';
import { RefusedError } from '../../core/errors';
import { recordAudit } from '../audit';
import { commitParts, findCommit, readTable } from '../datasets/read';
import type { Db } from '../db';
import { createCertificateSigner } from '../export/signing';
import { readSpendRows } from '../govern/spend';
import type { ObjectStore } from '../storage/object-store';

/**
 * Billing (docs/billing.md): usage per period and the month's invoice from the spend records the
 * starts and ends of training, cloud sessions and corpus runs write, and the signed cost
 * certificate of a dataset commit.
 */

/** Periods one usage answer lists at most. */
export const MAX_PERIODS = 400;

export async function billingUsage(db: Db, q: { period: Period; from: Date; to: Date }) {
  const starts = periodStart(q.from, q.period);
  let n = 0;
  for (let s = starts; s < q.to && n <= MAX_PERIODS; s = nextPeriod(s, q.period)) n++;
  if (n > MAX_PERIODS)
    throw new RefusedError(
      `from ${q.from.toISOString()} to ${q.to.toISOString()} is more than ${MAX_PERIODS} ${q.period}s; ask for a longer period or a shorter span`,
    );
  const rows = await readSpendRows(db, starts, q.to);
  const periods = usageByPeriod(rows, q.period, q.from, q.to);
  const counted = effectiveSpend(rows).filter((r) => r.at >= q.from && r.at < q.to);
  return {
    period: q.period,
    from: q.from.toISOString(),
    to: q.to.toISOString(),
    ...totalsOf(counted),
    periods,
  };
}

/** The month (`YYYY-MM`, UTC) as [start, end). */
export function monthSpan(month: string): { from: Date; to: Date } {
  const [y, m] = month.split('-').map(Number) as [number, number];
  return { from: new Date(Date.UTC(y, m - 1, 1)), to: new Date(Date.UTC(y, m, 1)) };
}

/**
 * A month's invoice: one line per subject whose spend counts in the month (its actual, or its
 * estimate while it runs), the totals per kind and in all, and how many lines are still estimates.
 */
export async function billingInvoice(db: Db, month: string) {
  const { from, to } = monthSpan(month);
  const counted = effectiveSpend(await readSpendRows(db, from, to)).filter((r) => r.at >= from && r.at < to);
  const lines = counted.map((r) => ({
    kind: r.kind,
    subject_type: r.subject_type,
    subject_id: r.subject_id,
    basis: r.basis,
    gpu_hours: r.gpu_hours,
    hourly_usd: r.hourly_usd,
    usd: r.usd,
    at: r.at.toISOString(),
  }));
  return {
    month,
    from: from.toISOString(),
    to: to.toISOString(),
    ...totalsOf(counted),
    estimated_lines: lines.filter((l) => l.basis === 'estimate').length,
    lines,
  };
}

/** The objects a commit holds: its objects table's ids; a commit without Parquet, its sessions' objects. */
async function commitObjectIds(
  deps: { db: Db; storage: ObjectStore },
  commit: Awaited<ReturnType<typeof findCommit>>,
) {
  const parts = commitParts(deps.storage, commit, 'objects');
  if (!parts.length) {
    const rows = await deps.db.annoObject.findMany({
      where: { frame: { sessionId: { in: commit.sessionIds } }, state: { not: 'rejected' } },
      select: { id: true },
    });
    return rows.map((r) => r.id);
  }
  const ids: string[] = [];
  for await (const batch of readTable(deps.storage, parts, { columns: ['object_id'] }))
    for (const r of batch) ids.push(r.object_id);
  return ids;
}

/**
 * Certifies what a commit cost (docs/billing.md): compute, the GPU hours of the completed
 * auto-label jobs of its sessions that finished before it was made, at the local GPU price;
 * labelling, the time reviewers recorded on its objects before then, at the labelling price. The
 * body is signed with the dataset-certificate key and kept (cost_certificates), audited.
 */
export async function certifyCommitCost(
  deps: { db: Db; storage: ObjectStore; config: Pick<AppConfig, 'cost' | 'export'> },
  commitId: string,
  actor: { userId: string | null; requestId: string | null },
): Promise<CostCertificateBody & { certificate_id: string; signature: string; public_key_pem: string }> {
  const { db, config } = deps;
  const commit = await findCommit(db, commitId);
  const [jobs, objectIds, user] = await Promise.all([
    db.autolabelJob.findMany({
      where: {
        sessionId: { in: commit.sessionIds },
        state: 'completed',
        startedAt: { not: null },
        finishedAt: { not: null, lte: commit.createdAt },
      },
      orderBy: [{ finishedAt: 'asc' }, { id: 'asc' }],
      select: { id: true, sessionId: true, startedAt: true, finishedAt: true },
    }),
    commitObjectIds(deps, commit),
    actor.userId ? db.user.findUnique({ where: { id: actor.userId }, select: { email: true } }) : null,
  ]);
  const [reviews] = await db.$queryRaw<Array<{ n: number; ms: number }>>`
    SELECT count(*)::int AS n, COALESCE(sum(time_spent_ms), 0)::float8 AS ms FROM reviews
     WHERE object_id = ANY(${objectIds}::uuid[]) AND created_at <= ${commit.createdAt}`;
  const signer = createCertificateSigner(config.export);
  const body = costCertificateBody({
    commit: { commit_id: commit.commitId, name: commit.name, version: commit.version },
    jobs: jobs.map((j) => ({
      job_id: j.id,
      session_id: j.sessionId,
      started_at: j.startedAt!.toISOString(),
      finished_at: j.finishedAt!.toISOString(),
    })),
    gpuHourlyUsd: config.cost.gpuHourlyUsd,
    reviews: reviews?.n ?? 0,
    reviewMs: reviews?.ms ?? 0,
    labelHourlyUsd: config.cost.labelHourlyUsd,
    certifiedBy: { user_id: actor.userId, email: user?.email ?? null },
    certifiedAt: new Date().toISOString(),
    keyId: signer.keyId,
  });
  const signature = signer.sign(body);
  const row = await db.costCertificate.create({
    data: {
      commitId: commit.commitId,
      totalUsd: body.total_usd,
      body: body as object,
      signature,
      keyId: signer.keyId,
      createdBy: actor.userId,
    },
  });
  await recordAudit(db, {
    actorId: actor.userId,
    action: 'billing.certified',
    subjectType: 'dataset_commit',
    subjectId: commit.commitId,
    detail: { certificate_id: row.id, total_usd: body.total_usd },
    requestId: actor.requestId,
  });
  return { ...body, certificate_id: row.id, signature, public_key_pem: signer.publicKeyPem };
}
