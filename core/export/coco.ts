/**
 * COCO pieces (docs/datasets.md). An export writes `annotations/instances_<split>.json` page by
 * page: each page contributes an `images` fragment and an `annotations` fragment, and the final
 * file is the head, the fragments joined by commas, and the categories, so no step holds the
 * whole file.
 */

export interface CocoCategory {
  id: number;
  name: string;
  supercategory: string;
}

export interface CocoImage {
  id: number;
  file_name: string;
  width: number;
  height: number;
  frame_id: string;
  session_id: string;
  timestamp_ms: number;
}

export interface CocoAnnotation {
  id: number;
  image_id: number;
  category_id: number;
  bbox: [number, number, number, number];
  area: number;
  iscrowd: 0;
  segmentation: number[][];
  object_id: string;
  score: number | null;
  attributes: Record<string, unknown>;
}

const round = (v: number): number => Math.round(v * 100) / 100;

/** Shoelace area of one flat [x, y, x, y, …] ring. */
export function ringArea(ring: readonly number[]): number {
  let twice = 0;
  const n = Math.floor(ring.length / 2);
  for (let i = 0; i < n; i++) {
    const j = (i + 1) % n;
    twice += ring[2 * i]! * ring[2 * j + 1]! - ring[2 * j]! * ring[2 * i + 1]!;
  }
  return Math.abs(twice) / 2;
}

/**
 * One annotation. The bbox is COCO's [x, y, w, h] of the stored [x1, y1, x2, y2]; the area is the
 * polygons' area when the object has a mask (as COCO's own tools compute it for segments), else
 * the box's.
 */
export function cocoAnnotation(input: {
  id: number;
  imageId: number;
  categoryId: number;
  bbox: readonly number[];
  polygons: number[][] | null;
  objectId: string;
  conf: number | null;
  attrs: Record<string, unknown>;
}): CocoAnnotation {
  const [x1, y1, x2, y2] = input.bbox as [number, number, number, number];
  const w = Math.max(0, x2 - x1);
  const h = Math.max(0, y2 - y1);
  const segmentation = (input.polygons ?? []).filter((r) => r.length >= 6).map((r) => r.map(round));
  const area = segmentation.length ? segmentation.reduce((s, r) => s + ringArea(r), 0) : w * h;
  return {
    id: input.id,
    image_id: input.imageId,
    category_id: input.categoryId,
    bbox: [round(x1), round(y1), round(w), round(h)],
    area: round(area),
    iscrowd: 0,
    segmentation,
    object_id: input.objectId,
    score: input.conf,
    attributes: input.attrs,
  };
}

/** Items of a fragment, comma-joined without brackets. */
export const fragment = (items: readonly object[]): string => items.map((i) => JSON.stringify(i)).join(',');

/** No export date in the file (the certificate has it), so the same data is the same bytes. */
export function cocoHead(info: { name: string; split: string }): string {
  return `{"info":${JSON.stringify({
    description: `${info.name} (${info.split})`,
    contributor: 'drivelab',
  })},"licenses":[],"images":[`;
}

export const COCO_BETWEEN_IMAGES_AND_ANNOTATIONS = '],"annotations":[';

export const cocoTail = (categories: readonly CocoCategory[]): string =>
  `],"categories":${JSON.stringify(categories)}}`;
