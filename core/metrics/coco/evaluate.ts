import { InputError } from '../../errors';
import { boxIou, maskIou } from './mask';
import { groupInput, type GroupedInput } from './grouping';
import {
  AREA_RANGES,
  IOU_50,
  IOU_75,
  IOU_THRESHOLDS,
  MAX_DETS,
  RECALL_THRESHOLDS,
  type AreaRange,
  type AreaRangeLabel,
} from './params';
import type { CocoEvaluationInput, IouType } from './types';

/**
 * COCO detection evaluation, the numbers of pycocotools' COCOeval (evaluate, accumulate,
 * summarize) for iouType `bbox` and `segm`, from one pass over flat typed arrays: input grouped
 * once by (category, image), each group's IoUs computed once for every area range and threshold,
 * each category's detections sorted by score once for every area range and maxDets.
 *
 * pycocotools' own quirks are kept, because they decide numbers: a ground truth's `ignore` field
 * is overwritten by `iscrowd`; a detection matched to ground truth id 0 counts as unmatched (0 is
 * COCOeval's "no match"); detections are ranked by score with ties in input order inside an image
 * and in image-id order across images; a detection's area is its box's.
 */

/** Per-category figures at area `all` and 100 detections; -1 where the category has no ground truth. */
export interface CocoCategoryResult {
  categoryId: number;
  name?: string;
  /** AP over IoU .50:.95. */
  ap: number;
  ap50: number;
  ar100: number;
}

/**
 * COCOeval.eval's arrays, flattened row-major in its own axis order, for precision-recall curves
 * (see precisionRecallCurve). T = 10 IoU thresholds, R = 101 recall thresholds, K categories
 * (ascending id), A = 4 area ranges (all, small, medium, large), M = 3 maxDets (1, 10, 100).
 */
export interface CocoAccumulation {
  iouThresholds: Float64Array;
  recallThresholds: Float64Array;
  categoryIds: number[];
  areaRanges: readonly AreaRange[];
  maxDets: readonly number[];
  /** [T][R][K][A][M]: interpolated precision at each recall threshold; -1 where the category has no ground truth in that area. */
  precision: Float64Array;
  /** [T][K][A][M]: recall reached with all detections; -1 likewise. */
  recall: Float64Array;
}

export interface CocoEvaluation {
  iouType: IouType;
  /** The twelve figures of COCOeval.stats in its order (COCO_STAT_NAMES); -1 where nothing was measurable. */
  stats: number[];
  perCategory: CocoCategoryResult[];
  accumulated: CocoAccumulation;
}

const T = IOU_THRESHOLDS.length;
const R = RECALL_THRESHOLDS.length;
const A = AREA_RANGES.length;
const M = MAX_DETS.length;
// Module-local copies for the inner loops: a compiled import is read through a getter on every use.
const MATCH_THRESHOLDS = IOU_THRESHOLDS.map((t) => Math.min(t, 1 - 1e-10));
const AREA_MIN = Float64Array.from(AREA_RANGES, (r) => r.min);
const AREA_MAX = Float64Array.from(AREA_RANGES, (r) => r.max);
const RECALL_POINTS = RECALL_THRESHOLDS.slice();
const MAX_DET_OF = Int32Array.from(MAX_DETS);

/** What a detection is at one area range and IoU threshold. */
const FALSE_POSITIVE = 0;
const TRUE_POSITIVE = 1;
const IGNORED = 2;
/** In `Matches.uniform`: the outcome may differ between thresholds, read it per threshold. */
const VARIES = 3;

/**
 * Each category's kept detections in COCOeval.accumulate's order — descending score, ties in
 * (image id, rank) order, numpy's stable argsort(-score) of the per-image lists concatenated —
 * as places: detection j (grouping order) sits at `place[j]`, its category's block keeping the
 * grouping's bounds. Outcomes are stored by place, so accumulation reads memory in order.
 */
interface Ranking {
  place: Int32Array;
  /** Rank inside its image of the detection at each place. */
  rankAt: Uint8Array;
}

function rankDetections(data: GroupedInput): Ranking {
  const { dtStart, dtScore, dtRank } = data;
  const K = data.categoryIds.length;
  const I = data.imageCount;
  const N = dtStart[K * I]!;
  const place = new Int32Array(N);
  const rankAt = new Uint8Array(N);
  for (let k = 0; k < K; k++) {
    const from = dtStart[k * I]!;
    const order = Array.from({ length: dtStart[(k + 1) * I]! - from }, (_, i) => from + i);
    order.sort((x, y) => {
      const sx = dtScore[x]!;
      const sy = dtScore[y]!;
      return sx > sy ? -1 : sx < sy ? 1 : x - y;
    });
    order.forEach((j, i) => {
      place[j] = from + i;
      rankAt[from + i] = dtRank[j]!;
    });
  }
  return { place, rankAt };
}

interface Matches {
  /**
   * [area range][place]: a detection overlapping no ground truth enough to match at any threshold
   * is the same at all of them (FALSE_POSITIVE or IGNORED); VARIES sends the reader to `outcome`.
   */
  uniform: Uint8Array;
  /** [area range][place][threshold], where uniform says VARIES. */
  outcome: Uint8Array;
  /** [category][area range]: ground truth that must be found (neither crowd nor outside the range). */
  groundTruthToFind: Int32Array;
}

/** Grow-only scratch arrays, so the per-group work allocates nothing. */
class Scratch {
  ious = new Float64Array(256);
  candidates = new Int32Array(256);
  candidateEnd = new Int32Array(64);
  gtOrder = new Int32Array(64);
  gtIgnored = new Uint8Array(64);
  gtMatched = new Uint8Array(64);
  ensure(detections: number, groundTruth: number): void {
    if (this.ious.length < detections * groundTruth) {
      this.ious = new Float64Array(2 * detections * groundTruth);
      this.candidates = new Int32Array(2 * detections * groundTruth);
    }
    if (this.candidateEnd.length < detections) this.candidateEnd = new Int32Array(2 * detections);
    if (this.gtOrder.length < groundTruth) {
      this.gtOrder = new Int32Array(2 * groundTruth);
      this.gtIgnored = new Uint8Array(2 * groundTruth);
      this.gtMatched = new Uint8Array(2 * groundTruth);
    }
  }
}

function computeIous(
  data: GroupedInput,
  iouType: IouType,
  d0: number,
  D: number,
  g0: number,
  G: number,
  ious: Float64Array,
): void {
  const { dtBox, gtBox, gtCrowd } = data;
  for (let d = 0; d < D; d++) {
    const db = 4 * (d0 + d);
    for (let g = 0; g < G; g++) {
      const crowd = gtCrowd[g0 + g] === 1;
      if (iouType === 'segm') {
        ious[d * G + g] = maskIou(data.dtMask[d0 + d]!, data.gtMask[g0 + g]!, crowd);
        continue;
      }
      const gb = 4 * (g0 + g);
      ious[d * G + g] = boxIou(
        dtBox[db]!,
        dtBox[db + 1]!,
        dtBox[db + 2]!,
        dtBox[db + 3]!,
        gtBox[gb]!,
        gtBox[gb + 1]!,
        gtBox[gb + 2]!,
        gtBox[gb + 3]!,
        crowd,
      );
    }
  }
}

/**
 * COCOeval.evaluateImg for every group, area range and threshold: each detection, best score
 * first, takes the ground truth it overlaps most (at least the threshold; the later one on a tie)
 * among those not yet taken — crowd regions can be taken again — trying regular ground truth
 * before ignored ones. Ground truth under the lowest threshold can never be taken, so each
 * detection only walks its candidates, in the same order.
 */
function matchAll(data: GroupedInput, place: Int32Array, iouType: IouType): Matches {
  const { gtStart, dtStart, gtArea, gtCrowd, gtId, dtArea } = data;
  const K = data.categoryIds.length;
  const I = data.imageCount;
  const N = dtStart[K * I]!;
  const uniform = new Uint8Array(A * N);
  const outcome = new Uint8Array(A * N * T);
  const groundTruthToFind = new Int32Array(K * A);
  const lowest = MATCH_THRESHOLDS[0]!;
  const s = new Scratch();
  for (let q = 0; q < K * I; q++) {
    const k = Math.floor(q / I);
    const g0 = gtStart[q]!;
    const G = gtStart[q + 1]! - g0;
    const d0 = dtStart[q]!;
    const D = dtStart[q + 1]! - d0;
    if (G === 0 && D === 0) continue;
    s.ensure(D, G);
    const { ious, candidates, candidateEnd, gtOrder, gtIgnored, gtMatched } = s;
    computeIous(data, iouType, d0, D, g0, G, ious);
    for (let a = 0; a < A; a++) {
      const min = AREA_MIN[a]!;
      const max = AREA_MAX[a]!;
      let regular = 0;
      for (let g = 0; g < G; g++) {
        const area = gtArea[g0 + g]!;
        gtIgnored[g] = gtCrowd[g0 + g] === 1 || area < min || area > max ? 1 : 0;
        if (!gtIgnored[g]) gtOrder[regular++] = g;
      }
      groundTruthToFind[k * A + a]! += regular;
      for (let g = 0, n = regular; g < G; g++) if (gtIgnored[g]) gtOrder[n++] = g;
      let c = 0;
      for (let d = 0; d < D; d++) {
        const from = c;
        for (let o = 0; o < G; o++) if (ious[d * G + gtOrder[o]!]! >= lowest) candidates[c++] = gtOrder[o]!;
        candidateEnd[d] = c;
        const outside = dtArea[d0 + d]! < min || dtArea[d0 + d]! > max;
        uniform[a * N + place[d0 + d]!] = c > from ? VARIES : outside ? IGNORED : FALSE_POSITIVE;
      }

      if (c === 0) continue;
      for (let t = 0; t < T; t++) {
        for (let g = 0; g < G; g++) gtMatched[g] = 0;
        const threshold = MATCH_THRESHOLDS[t]!;
        for (let d = 0; d < D; d++) {
          const first = d === 0 ? 0 : candidateEnd[d - 1]!;
          if (first === candidateEnd[d]) continue;
          let best = threshold;
          let match = -1;
          for (let o = first; o < candidateEnd[d]!; o++) {
            const g = candidates[o]!;
            if (gtMatched[g] && !gtCrowd[g0 + g]) continue;
            // Regular ground truth comes first: once one matched, ignored ones cannot replace it.
            if (match > -1 && !gtIgnored[match] && gtIgnored[g]) break;
            const iou = ious[d * G + g]!;
            if (iou < best) continue;
            best = iou;
            match = g;
          }
          let result: number;
          if (match > -1) gtMatched[match] = 1;
          if (match > -1 && gtIgnored[match]) result = IGNORED;
          else if (match > -1 && gtId[g0 + match] !== 0) result = TRUE_POSITIVE;
          else result = dtArea[d0 + d]! < min || dtArea[d0 + d]! > max ? IGNORED : FALSE_POSITIVE;
          outcome[(a * N + place[d0 + d]!) * T + t] = result;
        }
      }
    }
  }
  return { uniform, outcome, groundTruthToFind };
}

/**
 * COCOeval.accumulate: per category, area range and maxDets, the detections of all images by
 * score give a precision-recall sequence per threshold; precision is made non-increasing from the
 * right and read at the first point reaching each recall threshold (0 past the last). Precision
 * only rises at a hit and recall only changes there, so only the hits are kept: the c-th hit, at
 * the n-th counted detection, has precision c / (n + ε) (COCOeval's c / (fp + tp + ε)), and
 * recall c / G reaches a threshold first there.
 */
function accumulate(data: GroupedInput, { rankAt }: Ranking, matches: Matches): CocoAccumulation {
  const { dtStart } = data;
  const { uniform, outcome, groundTruthToFind } = matches;
  const K = data.categoryIds.length;
  const I = data.imageCount;
  const N = dtStart[K * I]!;
  const precision = new Float64Array(T * R * K * A * M).fill(-1);
  const recall = new Float64Array(T * K * A * M).fill(-1);
  let largest = 0;
  for (let k = 0; k < K; k++) largest = Math.max(largest, dtStart[(k + 1) * I]! - dtStart[k * I]!);
  /** [threshold][c]: the count of counted detections at the c-th hit. */
  const hitAt = new Float64Array(T * largest);
  const bestFrom = new Float64Array(largest);
  const counted = new Float64Array(T);
  const hits = new Int32Array(T);
  for (let k = 0; k < K; k++) {
    const from = dtStart[k * I]!;
    const to = dtStart[(k + 1) * I]!;
    for (let a = 0; a < A; a++) {
      const toFind = groundTruthToFind[k * A + a]!;
      if (toFind === 0) continue;
      for (let m = 0; m < M; m++) {
        const maxDet = MAX_DET_OF[m]!;
        counted.fill(0);
        hits.fill(0);
        // Misses at every threshold, counted once for all of them.
        let missedByAll = 0;
        for (let p = from; p < to; p++) {
          if (rankAt[p]! >= maxDet) continue;
          const kind = uniform[a * N + p]!;
          if (kind === FALSE_POSITIVE) missedByAll++;
          if (kind !== VARIES) continue;
          const at = (a * N + p) * T;
          for (let t = 0; t < T; t++) {
            const o = outcome[at + t]!;
            if (o === IGNORED) continue;
            counted[t]!++;
            if (o === TRUE_POSITIVE) hitAt[t * largest + hits[t]!++] = counted[t]! + missedByAll;
          }
        }
        for (let t = 0; t < T; t++) {
          const base = t * largest;
          const n = hits[t]!;
          recall[((t * K + k) * A + a) * M + m] = n / toFind;
          let best = 0;
          for (let c = n; c >= 1; c--)
            bestFrom[c - 1] = best = Math.max(best, c / (hitAt[base + c - 1]! + Number.EPSILON));
          let c = 1;
          for (let r = 0; r < R; r++) {
            while (c <= n && c / toFind < RECALL_POINTS[r]!) c++;
            precision[(((t * R + r) * K + k) * A + a) * M + m] = c <= n ? bestFrom[c - 1]! : 0;
          }
        }
      }
    }
  }
  return {
    iouThresholds: IOU_THRESHOLDS.slice(),
    recallThresholds: RECALL_THRESHOLDS.slice(),
    categoryIds: data.categoryIds,
    areaRanges: AREA_RANGES,
    maxDets: MAX_DETS,
    precision,
    recall,
  };
}

interface Selection {
  /** One threshold index, or every threshold. */
  iou?: number;
  /** One category index, or every category. */
  category?: number;
  /** One recall-threshold index, or every one (precision only). */
  recall?: number;
  area: number;
  maxDets: number;
}

/** COCOeval.summarize's mean over the selected entries that are not -1; -1 if there are none. */
function meanPrecision(acc: CocoAccumulation, { iou, category, recall, area, maxDets }: Selection): number {
  const K = acc.categoryIds.length;
  let sum = 0;
  let n = 0;
  for (let t = iou ?? 0; t <= (iou ?? T - 1); t++)
    for (let r = recall ?? 0; r <= (recall ?? R - 1); r++)
      for (let k = category ?? 0; k <= (category ?? K - 1); k++) {
        const p = acc.precision[(((t * R + r) * K + k) * A + area) * M + maxDets]!;
        if (p > -1) {
          sum += p;
          n++;
        }
      }
  return n === 0 ? -1 : sum / n;
}

function meanRecall(acc: CocoAccumulation, { iou, category, area, maxDets }: Selection): number {
  const K = acc.categoryIds.length;
  let sum = 0;
  let n = 0;
  for (let t = iou ?? 0; t <= (iou ?? T - 1); t++)
    for (let k = category ?? 0; k <= (category ?? K - 1); k++) {
      const r = acc.recall[((t * K + k) * A + area) * M + maxDets]!;
      if (r > -1) {
        sum += r;
        n++;
      }
    }
  return n === 0 ? -1 : sum / n;
}

const ALL = 0;
const [SMALL, MEDIUM, LARGE] = [1, 2, 3];
const [DETS_1, DETS_10, DETS_100] = [0, 1, 2];

/** COCOeval._summarizeDets. */
function summaryStats(acc: CocoAccumulation): number[] {
  const ap = (s: Selection) => meanPrecision(acc, s);
  const ar = (s: Selection) => meanRecall(acc, s);
  return [
    ap({ area: ALL, maxDets: DETS_100 }),
    ap({ iou: IOU_50, area: ALL, maxDets: DETS_100 }),
    ap({ iou: IOU_75, area: ALL, maxDets: DETS_100 }),
    ap({ area: SMALL, maxDets: DETS_100 }),
    ap({ area: MEDIUM, maxDets: DETS_100 }),
    ap({ area: LARGE, maxDets: DETS_100 }),
    ar({ area: ALL, maxDets: DETS_1 }),
    ar({ area: ALL, maxDets: DETS_10 }),
    ar({ area: ALL, maxDets: DETS_100 }),
    ar({ area: SMALL, maxDets: DETS_100 }),
    ar({ area: MEDIUM, maxDets: DETS_100 }),
    ar({ area: LARGE, maxDets: DETS_100 }),
  ];
}

/**
 * Evaluates detections against ground truth exactly as pycocotools' COCOeval(gt, dt, iouType)
 * followed by evaluate(), accumulate() and summarize(). Throws InputError for duplicate ids, a
 * detection on an image not in `images`, or (segm) a ground truth without segmentation.
 */
export function evaluateCoco(input: CocoEvaluationInput, iouType: IouType = 'bbox'): CocoEvaluation {
  const data = groupInput(input, iouType);
  const ranking = rankDetections(data);
  const accumulated = accumulate(data, ranking, matchAll(data, ranking.place, iouType));
  const perCategory = data.categoryIds.map((categoryId, k) => {
    const name = data.categoryNames[k];
    return {
      categoryId,
      ...(name === undefined ? {} : { name }),
      ap: meanPrecision(accumulated, { category: k, area: ALL, maxDets: DETS_100 }),
      ap50: meanPrecision(accumulated, { iou: IOU_50, category: k, area: ALL, maxDets: DETS_100 }),
      ar100: meanRecall(accumulated, { category: k, area: ALL, maxDets: DETS_100 }),
    };
  });
  return { iouType, stats: summaryStats(accumulated), perCategory, accumulated };
}

/**
 * One precision-recall curve from an evaluation: precision at each of the 101 recall thresholds
 * for a category (or the mean over categories with ground truth when `categoryId` is omitted), an
 * IoU threshold of .50:.05:.95, an area range and a maxDets. Null where no category has ground truth.
 */
export function precisionRecallCurve(
  acc: CocoAccumulation,
  options: { categoryId?: number; iouThreshold?: number; area?: AreaRangeLabel; maxDets?: number } = {},
): { recall: Float64Array; precision: Float64Array } | null {
  const { categoryId, iouThreshold = 0.5, area = 'all', maxDets = 100 } = options;
  const t = Array.from(acc.iouThresholds).findIndex((x) => Math.abs(x - iouThreshold) < 1e-9);
  const a = acc.areaRanges.findIndex((r) => r.label === area);
  const m = acc.maxDets.indexOf(maxDets);
  const k = categoryId === undefined ? undefined : acc.categoryIds.indexOf(categoryId);
  if (t < 0 || m < 0 || k === -1) {
    throw new InputError(
      `no curve for IoU ${iouThreshold}, maxDets ${maxDets}, category ${categoryId ?? 'all'}`,
    );
  }
  const precision = new Float64Array(R);
  for (let r = 0; r < R; r++) {
    precision[r] = meanPrecision(acc, { iou: t, category: k, recall: r, area: a, maxDets: m });
    if (precision[r] === -1) return null;
  }
  return { recall: acc.recallThresholds.slice(), precision };
}
