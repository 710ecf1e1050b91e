import { InputError } from '../../errors';
import { DETECTIONS_KEPT } from './params';
import { boxPolygon, segmentationToRle, withBoundingBox, type BoxedRle } from './mask';
import type { CocoEvaluationInput, IouType } from './types';

/**
 * The evaluation's input regrouped once into flat arrays by (category, image), the unit COCOeval
 * matches in: group `k·I + i` holds category k's objects on image i, categories and images in
 * ascending id order as COCOeval's catIds and imgIds. Ground truth keeps its input order inside a
 * group; detections are sorted by descending score, ties in input order (numpy's stable mergesort
 * of COCOeval.evaluateImg), and cut to the largest maxDets.
 */
export interface GroupedInput {
  categoryIds: number[];
  categoryNames: (string | undefined)[];
  imageCount: number;
  /** Ground truth of group q is [gtStart[q], gtStart[q + 1]). */
  gtStart: Int32Array;
  gtId: Float64Array;
  /** [x, y, w, h] per ground truth, 4 numbers each. */
  gtBox: Float64Array;
  gtArea: Float64Array;
  gtCrowd: Uint8Array;
  /** Masks for `segm`, else empty. */
  gtMask: BoxedRle[];
  /** Kept detections of group q are [dtStart[q], dtStart[q + 1]): a category's are contiguous, by image id. */
  dtStart: Int32Array;
  dtBox: Float64Array;
  dtArea: Float64Array;
  dtScore: Float64Array;
  /** Place in its group's score order: kept under maxDets m when rank < m. */
  dtRank: Uint8Array;
  dtMask: BoxedRle[];
}

function sortedIndex(ids: readonly number[], what: string): Map<number, number> {
  const sorted = [...ids].sort((a, b) => a - b);
  const index = new Map<number, number>();
  sorted.forEach((id, i) => {
    if (index.has(id)) throw new InputError(`duplicate ${what} id ${id}`);
    index.set(id, i);
  });
  return index;
}

/** Counting sort of item indices by group, stable; items in group -1 are dropped. */
function groupOrder(groupOf: Int32Array, groupCount: number): { start: Int32Array; order: Int32Array } {
  const start = new Int32Array(groupCount + 1);
  for (const q of groupOf) if (q >= 0) start[q + 1]!++;
  for (let q = 0; q < groupCount; q++) start[q + 1]! += start[q]!;
  const next = start.slice(0, groupCount);
  const order = new Int32Array(start[groupCount]!);
  groupOf.forEach((q, item) => {
    if (q >= 0) order[next[q]!++] = item;
  });
  return { start, order };
}

/** Stable sort of order[from, to) by descending score: insertion for small groups, else the engine's stable sort. */
function sortByScore(order: Int32Array, from: number, to: number, scores: Float64Array): void {
  if (to - from > 32) {
    const part = Array.from(order.subarray(from, to)).sort((a, b) => {
      const sa = scores[a]!;
      const sb = scores[b]!;
      return sa > sb ? -1 : sa < sb ? 1 : 0;
    });
    order.set(part, from);
    return;
  }
  for (let i = from + 1; i < to; i++) {
    const item = order[i]!;
    const s = scores[item]!;
    let j = i - 1;
    while (j >= from && scores[order[j]!]! < s) {
      order[j + 1] = order[j]!;
      j--;
    }
    order[j + 1] = item;
  }
}

export function groupInput(input: CocoEvaluationInput, iouType: IouType): GroupedInput {
  const imageIndex = sortedIndex(
    input.images.map((im) => im.id),
    'image',
  );
  const categoryIndex = sortedIndex(
    input.categories.map((c) => c.id),
    'category',
  );
  const imageSize = new Map(input.images.map((im) => [im.id, im]));
  const categoryIds = [...categoryIndex.keys()];
  const names = new Map(input.categories.map((c) => [c.id, c.name]));
  const I = imageIndex.size;
  const groupCount = categoryIds.length * I;
  const groupKey = (imageId: number, categoryId: number): number => {
    const i = imageIndex.get(imageId);
    const k = categoryIndex.get(categoryId);
    return i === undefined || k === undefined ? -1 : k * I + i;
  };
  const maskOf = (segmentation: Parameters<typeof segmentationToRle>[0], imageId: number): BoxedRle => {
    const image = imageSize.get(imageId)!;
    return withBoundingBox(segmentationToRle(segmentation, image.height, image.width));
  };

  // Ground truth: like COCOeval, objects of images or categories outside the dataset are not evaluated.
  const gts = input.groundTruth;
  const seenIds = new Set<number>();
  const gtGroupOf = new Int32Array(gts.length);
  gts.forEach((g, n) => {
    if (seenIds.has(g.id)) throw new InputError(`duplicate ground-truth id ${g.id}`);
    seenIds.add(g.id);
    if (typeof g.area !== 'number') throw new InputError(`ground truth ${g.id} has no area`);
    gtGroupOf[n] = groupKey(g.image_id, g.category_id);
  });
  const { start: gtStart, order: gtOrder } = groupOrder(gtGroupOf, groupCount);
  const G = gtOrder.length;
  const gtId = new Float64Array(G);
  const gtBox = new Float64Array(4 * G);
  const gtArea = new Float64Array(G);
  const gtCrowd = new Uint8Array(G);
  const gtMask: BoxedRle[] = [];
  gtOrder.forEach((n, j) => {
    const g = gts[n]!;
    gtId[j] = g.id;
    gtBox.set(g.bbox, 4 * j);
    gtArea[j] = g.area;
    gtCrowd[j] = g.iscrowd ? 1 : 0;
    if (iouType === 'segm') {
      if (!g.segmentation)
        throw new InputError(`ground truth ${g.id} has no segmentation for segm evaluation`);
      gtMask.push(maskOf(g.segmentation, g.image_id));
    }
  });

  // Detections: on an unknown image they are an error (pycocotools' loadRes refuses them), of an
  // unknown category they are not evaluated.
  const dts = input.detections;
  const dtGroupOf = new Int32Array(dts.length);
  const scores = new Float64Array(dts.length);
  // Read in input order (where the parsed objects lie together), copied in group order below.
  const boxes = new Float64Array(4 * dts.length);
  dts.forEach((d, n) => {
    scores[n] = d.score;
    const box = d.bbox;
    boxes[4 * n] = box[0];
    boxes[4 * n + 1] = box[1];
    boxes[4 * n + 2] = box[2];
    boxes[4 * n + 3] = box[3];
    if (!imageIndex.has(d.image_id))
      throw new InputError(`detection ${n} is on image ${d.image_id}, not in the dataset`);
    dtGroupOf[n] = groupKey(d.image_id, d.category_id);
  });
  const grouped = groupOrder(dtGroupOf, groupCount);
  const dtStart = new Int32Array(groupCount + 1);
  let kept = 0;
  for (let q = 0; q < groupCount; q++) {
    const from = grouped.start[q]!;
    const to = grouped.start[q + 1]!;
    sortByScore(grouped.order, from, to, scores);
    const n = Math.min(to - from, DETECTIONS_KEPT);
    grouped.order.copyWithin(kept, from, from + n);
    kept += n;
    dtStart[q + 1] = kept;
  }
  const dtBox = new Float64Array(4 * kept);
  const dtArea = new Float64Array(kept);
  const dtScore = new Float64Array(kept);
  const dtRank = new Uint8Array(kept);
  const dtMask: BoxedRle[] = [];
  for (let q = 0; q < groupCount; q++) {
    for (let j = dtStart[q]!; j < dtStart[q + 1]!; j++) {
      const n = grouped.order[j]!;
      for (let c = 0; c < 4; c++) dtBox[4 * j + c] = boxes[4 * n + c]!;
      // loadRes gives a detection with a box the box's area, whatever its mask.
      dtArea[j] = boxes[4 * n + 2]! * boxes[4 * n + 3]!;
      dtScore[j] = scores[n]!;
      dtRank[j] = j - dtStart[q]!;
      if (iouType === 'segm') {
        const d = dts[n]!;
        dtMask.push(maskOf(d.segmentation ?? boxPolygon(d.bbox), d.image_id));
      }
    }
  }
  return {
    categoryIds,
    categoryNames: categoryIds.map((id) => names.get(id)),
    imageCount: I,
    gtStart,
    gtId,
    gtBox,
    gtArea,
    gtCrowd,
    gtMask,
    dtStart,
    dtBox,
    dtArea,
    dtScore,
    dtRank,
    dtMask,
  };
}
