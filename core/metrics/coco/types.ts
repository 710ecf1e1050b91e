/**
 * COCO detection evaluation in COCO's own convention (cocodataset.org/#format-data): boxes are
 * [x, y, width, height] in pixels, ids are numbers, field names are COCO's snake_case, so a COCO
 * JSON file parses straight into these types.
 */

/** [x, y, width, height] in pixels, top-left origin. */
export type CocoBox = readonly [number, number, number, number];

/** A polygon as COCO stores it: [x1, y1, x2, y2, ...], at least three points. */
export type CocoPolygon = readonly number[];

/**
 * A run-length mask: column-major runs starting with a run of zeros; `counts` either as numbers
 * ("uncompressed", crowd annotations in COCO files) or as pycocotools' compressed string.
 */
export interface CocoRunLengths {
  /** [height, width] of the mask. */
  size: readonly [number, number];
  counts: readonly number[] | string;
}

/** An object's region: the union of one or more polygons, or a run-length mask. */
export type CocoSegmentation = readonly CocoPolygon[] | CocoRunLengths;

export interface CocoImage {
  id: number;
  width: number;
  height: number;
}

export interface CocoCategory {
  id: number;
  name?: string;
}

export interface CocoGroundTruth {
  id: number;
  image_id: number;
  category_id: number;
  bbox: CocoBox;
  /** The object's area, which decides its area range (segmentation area in COCO files). */
  area: number;
  /** Crowd regions never count as misses, and detections inside them are neither hits nor false alarms. */
  iscrowd: number | boolean;
  /**
   * Accepted for COCO files that carry it but, exactly as in pycocotools' COCOeval (which
   * overwrites it with `iscrowd` before matching), it changes nothing: only `iscrowd` ignores.
   */
  ignore?: number | boolean;
  /** Needed for `segm` evaluation. */
  segmentation?: CocoSegmentation;
}

export interface CocoDetection {
  image_id: number;
  category_id: number;
  bbox: CocoBox;
  score: number;
  /** For `segm` evaluation; a detection without one is evaluated as its box (pycocotools' loadRes). */
  segmentation?: CocoSegmentation;
}

export interface CocoEvaluationInput {
  images: readonly CocoImage[];
  categories: readonly CocoCategory[];
  groundTruth: readonly CocoGroundTruth[];
  detections: readonly CocoDetection[];
}

/** `bbox` compares boxes, `segm` compares masks (polygons or run lengths). */
export type IouType = 'bbox' | 'segm';
