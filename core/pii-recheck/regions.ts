import { boxArea, cropRegion, iou, type Box } from '../geometry';
import type { PiiRegion } from '../pii/regions';

/**
 * The pure part of the PII re-check (docs/pii-recheck.md): where an annotated person or vehicle is
 * cut from its frame and how much it is enlarged, how a region found in that crop lands back on
 * the frame, and the add-only merge that keeps every recorded region as it is.
 */

export interface RecheckCrop {
  left: number;
  top: number;
  width: number;
  height: number;
  /** Input pixels per frame pixel: the crop's longer side reaches `targetSide`, enlarged at most `maxUpscale`. */
  scale: number;
}

export interface CropRule {
  pad: number;
  targetSide: number;
  maxUpscale: number;
}

/** The crop of an object's box, grown by `pad` on every side and kept inside the frame. */
export function recheckCrop(box: Box, frame: { width: number; height: number }, rule: CropRule): RecheckCrop {
  const region = cropRegion(box, rule.pad, frame, frame);
  const scale = Math.min(rule.maxUpscale, rule.targetSide / Math.max(region.width, region.height));
  return { ...region, scale };
}

/** A region found on a crop's enlarged input, in frame pixels (whole pixels, inside the crop). */
export function regionOnFrame(region: PiiRegion, crop: RecheckCrop): PiiRegion {
  const [x1, y1, x2, y2] = region.bbox;
  const at = (v: number, origin: number, extent: number) =>
    Math.min(origin + extent, Math.max(origin, origin + v / crop.scale));
  return {
    ...region,
    bbox: [
      Math.floor(at(x1, crop.left, crop.width)),
      Math.floor(at(y1, crop.top, crop.height)),
      Math.ceil(at(x2, crop.left, crop.width)),
      Math.ceil(at(y2, crop.top, crop.height)),
    ],
  };
}

/** True when `inner` lies wholly inside `outer` (edges may touch). */
export const liesInside = (inner: Box, outer: Box): boolean =>
  inner[0] >= outer[0] && inner[1] >= outer[1] && inner[2] <= outer[2] && inner[3] <= outer[3];

/** Two finds of one face or plate (from two overlapping crops) are joined when they overlap this much. */
const SAME_FIND_IOU = 0.5;

/**
 * Adds what a re-check found to the recorded regions without ever removing or shrinking one: the
 * recorded regions come first, unchanged; a found region that lies inside a recorded one (or one
 * already added) adds nothing; two finds of the same face or plate become their enclosing box.
 * `added` is what the redacted copy must newly pixelate.
 */
export function addOnlyRegions(
  recorded: readonly PiiRegion[],
  found: readonly PiiRegion[],
): { regions: PiiRegion[]; added: PiiRegion[] } {
  const added: PiiRegion[] = [];
  // Larger finds first, so a smaller one inside them is recognised as already covered.
  for (const f of [...found].sort((a, b) => boxArea(b.bbox) - boxArea(a.bbox))) {
    if ([...recorded, ...added].some((r) => liesInside(f.bbox, r.bbox))) continue;
    const same = added.findIndex((a) => a.kind === f.kind && iou(a.bbox, f.bbox) >= SAME_FIND_IOU);
    if (same < 0) {
      added.push({ ...f, bbox: [...f.bbox] });
      continue;
    }
    const a = added[same]!;
    added[same] = {
      kind: a.kind,
      bbox: [
        Math.min(a.bbox[0], f.bbox[0]),
        Math.min(a.bbox[1], f.bbox[1]),
        Math.max(a.bbox[2], f.bbox[2]),
        Math.max(a.bbox[3], f.bbox[3]),
      ],
      score: Math.max(a.score, f.score),
    };
  }
  return { regions: [...recorded, ...added], added };
}
