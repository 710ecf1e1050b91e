import type { Prisma } from '../../generated/prisma/client';
import { recordAudit } from '../audit';
import type { ActivityDeps } from '../deps';
import { removeKeys } from '../ingest/storage';

export const CLEANUP_SWEEP_KIND = 'cleanup-sweep';

/** What the sweep did per bucket. */
export interface OrphanTally {
  bucket: string;
  listed: number;
  /** Old enough and named by no row. */
  removed: number;
}

export interface CleanupResult {
  pii_run_id: string | null;
  orphans: OrphanTally[];
}

/** Keys looked up per statement. */
const KEY_BATCH = 1000;

/**
 * The cleanup sweep's own steps (docs/pii-recheck.md "Cleanup sweep"), on the `cpu` queue: the
 * orphaned blobs of the frames and redacted buckets, and the governance run's end.
 */
export function createCleanupActivities(deps: ActivityDeps) {
  const { db, storage, config } = deps;

  /**
   * Keys of `bucket` named by no row: no frame's original or redacted copy (a bare key or an
   * `s3://` URI), no ingest candidate (an ingest writes its blobs before its frame rows), no copy a
   * PII run keeps for its revert.
   */
  const unreferenced = async (bucket: string, keys: string[]): Promise<string[]> => {
    const rows = await db.$queryRaw<Array<{ k: string }>>`
      SELECT k FROM unnest(${keys}::text[]) k
       WHERE NOT EXISTS (SELECT 1 FROM frames f WHERE f.uri IN (k, 's3://' || ${bucket} || '/' || k)
                            OR f.redacted_uri IN (k, 's3://' || ${bucket} || '/' || k))
         AND NOT EXISTS (SELECT 1 FROM ingest_candidates c WHERE c.object_key = k)
         AND NOT EXISTS (SELECT 1 FROM agent_run_frames r
                          WHERE r.reverted_at IS NULL AND r.replaced->>'kept_key' = k)`;
    return rows.map((r) => r.k);
  };

  return {
    /**
     * Removes the blobs of the frames and redacted buckets that no row names and that are older
     * than `reanalyze.orphanMinAgeHours` (a blob younger than that may belong to an ingest or a
     * re-check whose row is not written yet).
     */
    async removeOrphanBlobs(): Promise<OrphanTally[]> {
      const before = Date.now() - config.reanalyze.orphanMinAgeHours * 3600_000;
      const tallies: OrphanTally[] = [];
      for (const bucket of [storage.bucket('frames'), storage.bucket('redacted')]) {
        const tally = { bucket, listed: 0, removed: 0 };
        let batch: string[] = [];
        const sweep = async () => {
          const gone = await unreferenced(bucket, batch);
          await removeKeys(storage, bucket, gone);
          tally.removed += gone.length;
          batch = [];
        };
        for await (const item of storage.client.listObjects(bucket, '', true)) {
          if (!item.name) continue;
          tally.listed++;
          if (item.lastModified && item.lastModified.getTime() <= before) batch.push(item.name);
          if (batch.length >= KEY_BATCH) await sweep();
        }
        if (batch.length) await sweep();
        tallies.push(tally);
      }
      return tallies;
    },

    /** Ends the sweep's governance run with what it did, audited. */
    async finishCleanupSweep(input: {
      governanceRunId: string;
      status: 'completed' | 'failed';
      result: CleanupResult;
      error?: string;
    }): Promise<void> {
      const run = await db.governanceRun.update({
        where: { id: input.governanceRunId },
        data: {
          status: input.status,
          result: input.result as unknown as Prisma.InputJsonValue,
          error: input.error ?? null,
          finishedAt: new Date(),
        },
      });
      await recordAudit(db, {
        actorId: run.requestedBy,
        action: `cleanup_sweep.${input.status}`,
        subjectType: 'governance_run',
        subjectId: run.id,
        detail: { ...input.result, error: input.error ?? null } as unknown as Prisma.InputJsonValue,
      });
    },
  };
}
