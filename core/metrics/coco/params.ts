/**
 * COCOeval's default detection parameters (pycocotools Params.setDetParams), computed the way numpy's
 * linspace computes them so every threshold is the same double: a detection whose IoU is exactly
 * 0.75 must land on the same side of the 0.75 threshold as in pycocotools.
 */

/** numpy.linspace(start, stop, count): start + i·step, the last value pinned to stop. */
function linspace(start: number, stop: number, count: number): Float64Array {
  const step = (stop - start) / (count - 1);
  const values = new Float64Array(count);
  for (let i = 0; i < count; i++) values[i] = i * step + start;
  values[count - 1] = stop;
  return values;
}

/** IoU thresholds .50:.05:.95 (T = 10). */
export const IOU_THRESHOLDS: Float64Array = linspace(0.5, 0.95, 10);
/** Recall points 0:.01:1 at which precision is sampled (R = 101). */
export const RECALL_THRESHOLDS: Float64Array = linspace(0, 1, 101);
/** Detections kept per image and category, ascending (M = 3). */
export const MAX_DETS = [1, 10, 100] as const;
/** The largest maxDets: detections past it in an image and category are never looked at. */
export const DETECTIONS_KEPT = MAX_DETS[2];

export type AreaRangeLabel = 'all' | 'small' | 'medium' | 'large';

export interface AreaRange {
  label: AreaRangeLabel;
  /** Inclusive bounds in square pixels: an area of exactly 32² is both small and medium. */
  min: number;
  max: number;
}

/** Object size classes (A = 4), in COCOeval's order. */
export const AREA_RANGES: readonly AreaRange[] = [
  { label: 'all', min: 0, max: 1e5 ** 2 },
  { label: 'small', min: 0, max: 32 ** 2 },
  { label: 'medium', min: 32 ** 2, max: 96 ** 2 },
  { label: 'large', min: 96 ** 2, max: 1e5 ** 2 },
];

/** Index of IoU .50 and .75 in IOU_THRESHOLDS (the AP50 and AP75 rows). */
export const IOU_50 = 0;
export const IOU_75 = 5;

/**
 * The twelve summary figures in COCOeval.stats order. AP is averaged over IoU .50:.95 unless named
 * (AP50, AP75); area-named figures (s/m/l) and the AP figures use 100 detections per image.
 */
export const COCO_STAT_NAMES = [
  'AP',
  'AP50',
  'AP75',
  'APsmall',
  'APmedium',
  'APlarge',
  'AR1',
  'AR10',
  'AR100',
  'ARsmall',
  'ARmedium',
  'ARlarge',
] as const;

export type CocoStatName = (typeof COCO_STAT_NAMES)[number];
