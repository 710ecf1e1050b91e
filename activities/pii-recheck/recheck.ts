import sharp from 'sharp';
import type { AppConfig } from '../../core/config';
import { NotFoundError } from '../../core/errors';
import { COVERAGE_L1 } from '../../core/export/gate-report';
import type { Box } from '../../core/geometry';
import { addOnlyRegions, recheckCrop, regionOnFrame, type RecheckCrop } from '../../core/pii-recheck/regions';
import type { PiiRegion } from '../../core/pii/regions';
import type { Frame } from '../../generated/prisma/client';
import type { Db } from '../db';
import type { ActivityDeps } from '../deps';
import { detectPii } from '../pii/detector';
import { readOriginal, writeAddedRedaction } from './frames';

export const PII_RECHECK_KIND = 'pii-recheck';
export const PII_BACKFILL_KIND = 'pii-backfill';
/** The kinds whose runs the PII undo reverts (activities/agent-runs/revert.ts). */
export const PII_RUN_KINDS: readonly string[] = [PII_RECHECK_KIND, PII_BACKFILL_KIND];

/** The annotated people and vehicles of a frame: what the export gate wants covered, and what the re-check searches. */
export const coverageObjects = (db: Db, frameId: string) =>
  db.$queryRaw<Array<{ id: string; className: string; bbox: number[] }>>`
    SELECT o.id::text, c.name AS "className", o.bbox FROM objects o JOIN ontology_classes c ON c.id = o.class_id
     WHERE o.frame_id = ${frameId}::uuid AND c.l1 = ANY(${[...COVERAGE_L1]}::text[]) AND o.state <> 'rejected'
     ORDER BY o.id`;

export interface RecheckPlan {
  frame_id: string;
  session_id: string;
  /** Each annotated person or vehicle searched: its crop of the frame and how much it was enlarged. */
  searched: Array<{ object_id: string; class_name: string; crop: RecheckCrop }>;
  /** Regions found on the crops, in frame pixels (grown as the PII pass grows them). */
  found: PiiRegion[];
  /** Regions recorded on the frame's audit before: all stay. */
  recorded: PiiRegion[];
  /** What would be added (found and not inside a recorded region). */
  added: PiiRegion[];
}

/**
 * The detectors of the PII pass on one crop, enlarged: the crop is cut and scaled here, then given
 * to detectPii as a frame of its own, with the whole-frame search at the crop's size (so the pass
 * neither shrinks it again nor runs its own vehicle detector: the annotations are the boxes).
 */
async function findOnCrop(config: AppConfig, image: Buffer, crop: RecheckCrop) {
  const width = Math.max(1, Math.round(crop.width * crop.scale));
  const height = Math.max(1, Math.round(crop.height * crop.scale));
  const input = await sharp(image)
    .extract({ left: crop.left, top: crop.top, width: crop.width, height: crop.height })
    .resize(width, height, { fit: 'fill' })
    .png({ compressionLevel: 0 })
    .toBuffer();
  const side = Math.max(width, height);
  const found = await detectPii(
    { ...config, pii: { ...config.pii, search: 'frame', faceMaxSide: side, detectMaxSide: side } },
    input,
  );
  return { regions: found.regions.map((r) => regionOnFrame(r, crop)), versions: found.versions };
}

/** The crop-and-upscale re-check of one frame, without writing anything. */
export async function planRecheck(
  deps: Pick<ActivityDeps, 'db' | 'storage' | 'config'>,
  frameId: string,
): Promise<{ plan: RecheckPlan; frame: Frame; versions: Record<string, string> }> {
  const frame = await deps.db.frame.findUnique({ where: { id: frameId }, include: { piiAudit: true } });
  if (!frame) throw new NotFoundError(`no frame ${frameId}`);
  const objects = await coverageObjects(deps.db, frameId);
  const recorded = (frame.piiAudit?.regions ?? []) as unknown as PiiRegion[];
  const plan: RecheckPlan = {
    frame_id: frame.id,
    session_id: frame.sessionId,
    searched: [],
    found: [],
    recorded,
    added: [],
  };
  let versions: Record<string, string> = {};
  if (objects.length > 0) {
    const image = await readOriginal(deps, frame);
    const meta = await sharp(image).metadata();
    const size = { width: meta.width ?? frame.width, height: meta.height ?? frame.height };
    const rule = {
      pad: deps.config.reanalyze.cropPad,
      targetSide: deps.config.reanalyze.cropTargetSide,
      maxUpscale: deps.config.reanalyze.maxUpscale,
    };
    // One crop at a time: the pass's sessions already use the machine's threads per call.
    for (const o of objects) {
      const crop = recheckCrop(o.bbox as Box, size, rule);
      const found = await findOnCrop(deps.config, image, crop);
      plan.searched.push({ object_id: o.id, class_name: o.className, crop });
      plan.found.push(...found.regions);
      versions = found.versions;
    }
  }
  plan.added = addOnlyRegions(recorded, plan.found).added;
  const { face, text } = versions;
  return { plan, frame, versions: face && text ? { recheck_face: face, recheck_text: text } : {} };
}

/** The re-check of one frame written as part of run `runId` (add-only, undoable). */
export async function applyRecheck(
  deps: Pick<ActivityDeps, 'db' | 'storage' | 'config'>,
  runId: string,
  frameId: string,
): Promise<{ plan: RecheckPlan; added: PiiRegion[] }> {
  const { plan, frame, versions } = await planRecheck(deps, frameId);
  const added = plan.added.length
    ? await writeAddedRedaction(deps, { runId, frame, found: plan.found, versions })
    : [];
  return { plan, added };
}
