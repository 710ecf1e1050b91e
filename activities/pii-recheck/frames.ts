import { CopyDestinationOptions, CopySourceOptions } from 'minio';
import sharp from 'sharp';
import { addOnlyRegions } from '../../core/pii-recheck/regions';
import type { PiiRegion } from '../../core/pii/regions';
import type { Frame, Prisma } from '../../generated/prisma/client';
import type { ActivityDeps } from '../deps';
import { isMissingObject, objectLocation, readObject, type ObjectLocation } from '../inspector/frame-objects';
import { detectPii } from '../pii/detector';
import { redactFrame } from '../pii/redact';

/**
 * Frame-level pieces of the PII re-checks (docs/pii-recheck.md): reading a frame's original and
 * redacted copy, and writing a frame's new redaction so that its run can undo it exactly.
 */

export type StoreDeps = Pick<ActivityDeps, 'storage'>;
type WriteDeps = Pick<ActivityDeps, 'db' | 'storage' | 'config'>;

/** Where a frame's redacted copy lives: the row's own name for it, else the original's key in the redacted bucket. */
export function redactedLocation(deps: StoreDeps, frame: Pick<Frame, 'uri' | 'redactedUri'>): ObjectLocation {
  return frame.redactedUri
    ? objectLocation(deps.storage, frame.redactedUri, 'redacted')
    : { bucket: deps.storage.bucket('redacted'), key: objectLocation(deps.storage, frame.uri, 'frames').key };
}

export const readOriginal = (deps: StoreDeps, frame: Pick<Frame, 'uri'>): Promise<Buffer> =>
  readObject(deps.storage, objectLocation(deps.storage, frame.uri, 'frames'));

async function objectExists(deps: StoreDeps, at: ObjectLocation): Promise<boolean> {
  try {
    await deps.storage.client.statObject(at.bucket, at.key);
    return true;
  } catch (err) {
    if (isMissingObject(err)) return false;
    throw err;
  }
}

export const copyBlob = (deps: StoreDeps, from: ObjectLocation, to: ObjectLocation) =>
  deps.storage.client.copyObject(
    new CopySourceOptions({ Bucket: from.bucket, Object: from.key }),
    new CopyDestinationOptions({ Bucket: to.bucket, Object: to.key }),
  );

/** Where a run keeps the redacted copy it replaced, for its revert: under the run, never overwritten. */
export const keptCopyKey = (runId: string, key: string): string => `agent-runs/${runId}/${key}`;

/** What a run keeps of a frame for its undo (AgentRunFrame.replaced). */
export interface PiiUndo {
  /** The frame's audit row as it was (to_jsonb), null when it had none. */
  audit: Record<string, unknown> | null;
  redacted_uri: string | null;
  /** Key of the kept previous redacted copy in the redacted bucket; null when there was none. */
  kept_key: string | null;
  /** The audit's regions as the run left them: a revert finding others leaves the frame alone. */
  regions_after: PiiRegion[];
  added: PiiRegion[];
}

/** An audit row's fields for its regions: faces and plates counted from what is redacted. */
const auditFields = (regions: readonly PiiRegion[], versions: Record<string, unknown>) => ({
  nFaces: regions.filter((r) => r.kind === 'face').length,
  nPlates: regions.filter((r) => r.kind === 'plate').length,
  regions: regions as unknown as Prisma.InputJsonValue,
  examined: true,
  modelVersions: versions as Prisma.InputJsonValue,
});

/**
 * Writes a frame's new redaction as part of run `runId`, only ever adding: `found` joins the
 * recorded regions (addOnlyRegions); when nothing is new, nothing is written. The previous redacted
 * copy is kept under the run (once: a retry keeps the first), then the new regions are pixelated
 * onto it — or, for a frame without a copy, every region onto the original. The audit row, the
 * frame's `redacted_uri` and the undo row (job_id = the run's id: the column is NOT NULL and a
 * re-check has no job) commit in one transaction, which re-reads the audit under a lock so a
 * concurrent writer's regions are kept too. A frame the run already wrote is left as it is.
 */
export async function writeAddedRedaction(
  deps: WriteDeps,
  input: { runId: string; frame: Frame; found: readonly PiiRegion[]; versions: Record<string, string> },
): Promise<PiiRegion[]> {
  const { db } = deps;
  const { runId, frame } = input;
  if (await db.agentRunFrame.findUnique({ where: { runId_frameId: { runId, frameId: frame.id } } }))
    return [];
  const before = await db.piiAudit.findUnique({ where: { frameId: frame.id } });
  const { added } = addOnlyRegions((before?.regions ?? []) as unknown as PiiRegion[], input.found);
  if (added.length === 0) return [];
  const at = redactedLocation(deps, frame);
  const hasCopy = frame.redactedUri !== null && (await objectExists(deps, at));
  const kept = hasCopy ? { bucket: at.bucket, key: keptCopyKey(runId, at.key) } : null;
  if (kept && !(await objectExists(deps, kept))) await copyBlob(deps, at, kept);
  const base = kept ? await readObject(deps.storage, kept) : await readOriginal(deps, frame);
  const { data, info } = await sharp(base).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  const pixelate = kept
    ? added
    : addOnlyRegions((before?.regions ?? []) as unknown as PiiRegion[], added).regions;
  const jpeg = await redactFrame(data, info.width, info.height, pixelate);
  await deps.storage.client.putObject(at.bucket, at.key, jpeg, jpeg.length, { 'Content-Type': 'image/jpeg' });
  await db.$transaction(async (tx) => {
    const [prior] = await tx.$queryRaw<Array<{ row: Record<string, unknown>; regions: PiiRegion[] }>>`
      SELECT to_jsonb(a) AS row, a.regions FROM pii_audits a WHERE a.frame_id = ${frame.id}::uuid FOR UPDATE`;
    const { regions } = addOnlyRegions(prior?.regions ?? [], added);
    const undo: PiiUndo = {
      audit: prior?.row ?? null,
      redacted_uri: frame.redactedUri,
      kept_key: kept?.key ?? null,
      regions_after: regions,
      added,
    };
    await tx.agentRunFrame.create({
      data: {
        runId,
        frameId: frame.id,
        jobId: runId,
        created: [],
        replaced: undo as unknown as Prisma.InputJsonValue,
      },
    });
    const versions = { ...((prior?.row?.model_versions as object | undefined) ?? {}), ...input.versions };
    const row = auditFields(regions, versions);
    await tx.piiAudit.upsert({
      where: { frameId: frame.id },
      create: { frameId: frame.id, ...row },
      update: row,
    });
    await tx.frame.update({ where: { id: frame.id }, data: { redactedUri: at.key } });
  });
  return added;
}

/**
 * The normal PII pass (the detectors of activities/pii/ on the whole frame, as ingest runs them)
 * of a frame that lacks an audit or was not examined, written add-only and undoably as above.
 */
export async function piiPassFrame(deps: WriteDeps, runId: string, frame: Frame): Promise<PiiRegion[]> {
  const found = await detectPii(deps.config, await readOriginal(deps, frame));
  const added = await writeAddedRedaction(deps, {
    runId,
    frame,
    found: found.regions,
    versions: found.versions,
  });
  // A frame with nothing to redact still gets its audit: it has now been examined.
  if (added.length === 0)
    await deps.db.piiAudit.upsert({
      where: { frameId: frame.id },
      create: { frameId: frame.id, ...auditFields([], found.versions) },
      update: { examined: true },
    });
  return added;
}

/**
 * Undoes one frame of a PII run inside the revert's batch transaction (activities/agent-runs/
 * revert.ts): the audit row comes back exactly as it was (or goes, when the frame had none), and so
 * do `redacted_uri` and the redacted copy (from the kept copy; removed when the frame had none). A
 * frame whose audit another writer has changed since is superseded and left alone.
 */
export async function revertPiiFrame(
  tx: Prisma.TransactionClient,
  deps: StoreDeps,
  f: { frameId: string; replaced: Prisma.JsonValue },
) {
  const undo = f.replaced as unknown as PiiUndo;
  const [now] = await tx.$queryRaw<Array<{ same: boolean; uri: string; redactedUri: string | null }>>`
    SELECT a.regions = ${JSON.stringify(undo.regions_after)}::jsonb AS same, fr.uri, fr.redacted_uri AS "redactedUri"
      FROM frames fr LEFT JOIN pii_audits a ON a.frame_id = fr.id
     WHERE fr.id = ${f.frameId}::uuid FOR UPDATE OF fr`;
  if (!now?.same) return { superseded: true, restored: 0, removed: [] as null[], kept: 0 };
  const at = redactedLocation(deps, now);
  if (undo.kept_key) await copyBlob(deps, { bucket: at.bucket, key: undo.kept_key }, at);
  else await deps.storage.client.removeObject(at.bucket, at.key);
  await tx.$executeRaw`DELETE FROM pii_audits WHERE frame_id = ${f.frameId}::uuid`;
  if (undo.audit)
    await tx.$executeRaw`INSERT INTO pii_audits SELECT (jsonb_populate_record(NULL::pii_audits, ${JSON.stringify(undo.audit)}::jsonb)).*`;
  await tx.frame.update({ where: { id: f.frameId }, data: { redactedUri: undo.redacted_uri } });
  // No object is removed: the tally's `removed` counts objects, and a region is not one.
  return { superseded: false, restored: 1, removed: [] as null[], kept: 0 };
}
