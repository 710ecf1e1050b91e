import { InputError } from '../../errors';
import type { HarnessMetrics } from './compare';
import { boxIou } from './mask';
import { AREA_RANGES, DETECTIONS_KEPT, IOU_50, IOU_75, IOU_THRESHOLDS, RECALL_THRESHOLDS } from './params';
import type { CocoCategory, CocoDetection, CocoEvaluationInput, CocoGroundTruth } from './types';

/**
 * A second, independent COCO bbox evaluator: it takes one image at a time (its ground truth and
 * detections), settles that image's matches at once, and keeps per category only each kept
 * detection's score, image and rank with its outcome per (area range, IoU threshold), plus how
 * many ground truths each area range must find. The figures come at the end.
 *
 * It shares with evaluateCoco the IoU primitive (boxIou, maskApi's bbIou: that formula is the
 * definition, checked on its own against pycocotools) and the parameter constants, nothing else:
 * matching is phrased as "best regular ground truth, else best ignored region", AP reads a suffix
 * maximum by binary search, so agreement between the two checks each one's matching and
 * accumulation. Same conventions as pycocotools: `iscrowd` alone ignores, a match to ground truth
 * id 0 counts as unmatched, score ties go by input order in an image and by image id across images.
 */

const T = IOU_THRESHOLDS.length;
const A = AREA_RANGES.length;
const NOT_COUNTED = 255;

/** One category's kept detections as growing columns; `outcome` holds A·T entries a row: 1 hit, 0 miss, 255 not counted. */
class CategoryLedger {
  rows = 0;
  score = new Float64Array(64);
  imageId = new Float64Array(64);
  rank = new Uint8Array(64);
  outcome = new Uint8Array(64 * A * T);
  groundTruthToFind = new Int32Array(A);

  addRow(score: number, imageId: number, rank: number): number {
    if (this.rows === this.score.length) {
      const grow = <Arr extends Float64Array | Uint8Array>(old: Arr, make: (n: number) => Arr): Arr => {
        const next = make(old.length * 2);
        next.set(old);
        return next;
      };
      this.score = grow(this.score, (n) => new Float64Array(n));
      this.imageId = grow(this.imageId, (n) => new Float64Array(n));
      this.rank = grow(this.rank, (n) => new Uint8Array(n));
      this.outcome = grow(this.outcome, (n) => new Uint8Array(n));
    }
    this.score[this.rows] = score;
    this.imageId[this.rows] = imageId;
    this.rank[this.rows] = rank;
    return this.rows++;
  }
}

/** Best candidate at or above the threshold, the later one on equal IoU; -1 if none. */
function bestCandidate(
  iouRow: readonly number[],
  candidates: readonly number[],
  threshold: number,
  taken: boolean[],
): number {
  let best = -1;
  let bestIou = threshold;
  for (const g of candidates) {
    if (taken[g] || iouRow[g]! < bestIou) continue;
    best = g;
    bestIou = iouRow[g]!;
  }
  return best;
}

export class StreamingBoxEvaluator {
  private readonly ledgers = new Map<number, CategoryLedger>();
  private readonly seen = new Set<number>();

  constructor(categories: readonly CocoCategory[]) {
    for (const { id } of [...categories].sort((a, b) => a.id - b.id))
      this.ledgers.set(id, new CategoryLedger());
  }

  /** Settles one image; each image once. Objects of categories not given to the constructor are skipped. */
  addImage(
    imageId: number,
    groundTruth: readonly CocoGroundTruth[],
    detections: readonly CocoDetection[],
  ): void {
    if (this.seen.has(imageId)) throw new InputError(`image ${imageId} was already added`);
    this.seen.add(imageId);
    const byCategory = new Map<number, { gts: CocoGroundTruth[]; dts: CocoDetection[] }>();
    const entry = (categoryId: number) => {
      let found = byCategory.get(categoryId);
      if (!found) byCategory.set(categoryId, (found = { gts: [], dts: [] }));
      return found;
    };
    for (const g of groundTruth) entry(g.category_id).gts.push(g);
    for (const d of detections) entry(d.category_id).dts.push(d);
    for (const [categoryId, { gts, dts }] of byCategory) {
      const ledger = this.ledgers.get(categoryId);
      if (!ledger) continue;
      // Array.prototype.sort is stable: equal scores keep their input order.
      const kept = dts.sort((x, y) => y.score - x.score).slice(0, DETECTIONS_KEPT);
      this.settle(imageId, ledger, gts, kept);
    }
  }

  private settle(
    imageId: number,
    ledger: CategoryLedger,
    gts: CocoGroundTruth[],
    dts: CocoDetection[],
  ): void {
    const ious = dts.map(({ bbox: [dx, dy, dw, dh] }) =>
      gts.map(({ bbox: [gx, gy, gw, gh], iscrowd }) =>
        boxIou(dx, dy, dw, dh, gx, gy, gw, gh, Boolean(iscrowd)),
      ),
    );
    const rows = dts.map((d, rank) => ledger.addRow(d.score, imageId, rank));
    AREA_RANGES.forEach((range, a) => {
      const inRange = (area: number) => area >= range.min && area <= range.max;
      const regular = gts.flatMap((g, i) => (!g.iscrowd && inRange(g.area) ? [i] : []));
      const ignoredRegions = gts.flatMap((g, i) => (g.iscrowd || !inRange(g.area) ? [i] : []));
      ledger.groundTruthToFind[a]! += regular.length;
      IOU_THRESHOLDS.forEach((iouThreshold, t) => {
        const threshold = Math.min(iouThreshold, 1 - 1e-10);
        // Crowd regions stay open to every detection; other ground truth is found once.
        const taken = gts.map(() => false);
        dts.forEach((d, j) => {
          let outcome: number;
          const hit = bestCandidate(ious[j]!, regular, threshold, taken);
          const region = hit < 0 ? bestCandidate(ious[j]!, ignoredRegions, threshold, taken) : -1;
          if (hit >= 0) taken[hit] = true;
          if (region >= 0 && !gts[region]!.iscrowd) taken[region] = true;
          if (region >= 0) outcome = NOT_COUNTED;
          else if (hit >= 0 && gts[hit]!.id !== 0) outcome = 1;
          else outcome = inRange(d.bbox[2] * d.bbox[3]) ? 0 : NOT_COUNTED;
          ledger.outcome[rows[j]! * A * T + a * T + t] = outcome;
        });
      });
    });
  }

  /** The figures over every image added so far. */
  finish(): HarnessMetrics {
    const perCategory = [...this.ledgers].map(([categoryId, ledger]) => ({
      categoryId,
      ...categoryFigures(ledger),
    }));
    const mean = (values: number[]): number =>
      values.length === 0 ? -1 : values.reduce((s, v) => s + v, 0) / values.length;
    const across = (pick: (f: (typeof perCategory)[number]) => number[] | null | undefined): number =>
      mean(perCategory.flatMap((f) => pick(f) ?? []));
    const ALL = 0;
    return {
      headline: {
        AP: across((f) => f.ap[ALL]),
        AP50: across((f) => (f.ap[ALL] ? [f.ap[ALL][IOU_50]!] : null)),
        AP75: across((f) => (f.ap[ALL] ? [f.ap[ALL][IOU_75]!] : null)),
        APsmall: across((f) => f.ap[1]),
        APmedium: across((f) => f.ap[2]),
        APlarge: across((f) => f.ap[3]),
        AR100: across((f) => f.recall[ALL]),
        ARsmall: across((f) => f.recall[1]),
        ARmedium: across((f) => f.recall[2]),
        ARlarge: across((f) => f.recall[3]),
      },
      perCategoryAp: perCategory.map((f) => ({ categoryId: f.categoryId, ap: mean(f.ap[ALL] ?? []) })),
    };
  }
}

/** Per area range, AP and recall per IoU threshold; null where the category has nothing to find there. */
function categoryFigures(ledger: CategoryLedger): { ap: (number[] | null)[]; recall: (number[] | null)[] } {
  const order = Array.from({ length: ledger.rows }, (_, i) => i).sort(
    (x, y) =>
      ledger.score[y]! - ledger.score[x]! ||
      ledger.imageId[x]! - ledger.imageId[y]! ||
      ledger.rank[x]! - ledger.rank[y]!,
  );
  const ap: (number[] | null)[] = [];
  const recall: (number[] | null)[] = [];
  for (let a = 0; a < A; a++) {
    const toFind = ledger.groundTruthToFind[a]!;
    if (toFind === 0) {
      ap.push(null);
      recall.push(null);
      continue;
    }
    const apRow: number[] = [];
    const recallRow: number[] = [];
    for (let t = 0; t < T; t++) {
      const precisions: number[] = [];
      const recalls: number[] = [];
      let hits = 0;
      for (const row of order) {
        const outcome = ledger.outcome[row * A * T + a * T + t]!;
        if (outcome === NOT_COUNTED) continue;
        hits += outcome;
        precisions.push(hits / (precisions.length + 1));
        recalls.push(hits / toFind);
      }
      apRow.push(interpolatedAp(precisions, recalls));
      recallRow.push(hits / toFind);
    }
    ap.push(apRow);
    recall.push(recallRow);
  }
  return { ap, recall };
}

/** 101-point AP: at each recall point, the best precision reached at that recall or beyond (0 if never reached). */
function interpolatedAp(precisions: number[], recalls: number[]): number {
  const bestFrom = new Float64Array(precisions.length);
  let best = 0;
  for (let i = precisions.length - 1; i >= 0; i--) bestFrom[i] = best = Math.max(best, precisions[i]!);
  let sum = 0;
  for (const point of RECALL_THRESHOLDS) {
    let lo = 0;
    let hi = recalls.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (recalls[mid]! < point) lo = mid + 1;
      else hi = mid;
    }
    if (lo < recalls.length) sum += bestFrom[lo]!;
  }
  return sum / RECALL_THRESHOLDS.length;
}

/** Streams a whole dataset through StreamingBoxEvaluator, image by image. */
export function evaluateStreaming(input: CocoEvaluationInput): HarnessMetrics {
  const evaluator = new StreamingBoxEvaluator(input.categories);
  const byImage = new Map(
    input.images.map((im) => [im.id, { gts: [] as CocoGroundTruth[], dts: [] as CocoDetection[] }]),
  );
  for (const g of input.groundTruth) byImage.get(g.image_id)?.gts.push(g);
  for (const d of input.detections) {
    const image = byImage.get(d.image_id);
    if (!image) throw new InputError(`detection on image ${d.image_id}, not in the dataset`);
    image.dts.push(d);
  }
  for (const [imageId, { gts, dts }] of byImage) evaluator.addImage(imageId, gts, dts);
  return evaluator.finish();
}
