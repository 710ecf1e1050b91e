import { iou, type Box } from '../geometry';

/**
 * Which anchor points of a YOLOX head should answer for which ground-truth box. YOLOX's own
 * label assignment (SimOTA) in two steps: centre sampling picks the candidates — anchor points,
 * at every level, whose centre lies inside the box and within `centreRadius` strides of its centre
 * — and a dynamic top-k keeps, of those, the k whose predicted box fits the ground truth best, k
 * being the sum of the ten best IoUs (at least 1). SimOTA's cost also weighs the class scores;
 * here the class scores are what is being retrained while the regression stays the parent's, so
 * only the IoU of the parent's own box ranks the candidates: the anchors taught to fire are those
 * whose frozen box would land on the object.
 */
export interface AnchorGrid {
  inputSize: number;
  strides: readonly number[];
  /** Anchor points in all, finest grid first, row-major within a grid (the head's output order). */
  count: number;
  /** Per anchor: its level (index into `strides`) and its centre in input pixels. */
  level: Uint8Array;
  centreX: Float32Array;
  centreY: Float32Array;
  /** First anchor of each level. */
  levelStart: number[];
}

export function anchorGrid(inputSize: number, strides: readonly number[]): AnchorGrid {
  const levelStart: number[] = [];
  let count = 0;
  for (const s of strides) {
    if (!(inputSize % s === 0)) throw new Error(`input ${inputSize} is not a multiple of stride ${s}`);
    levelStart.push(count);
    count += (inputSize / s) ** 2;
  }
  const level = new Uint8Array(count);
  const centreX = new Float32Array(count);
  const centreY = new Float32Array(count);
  strides.forEach((s, l) => {
    const cells = inputSize / s;
    for (let i = 0; i < cells * cells; i++) {
      const a = levelStart[l]! + i;
      level[a] = l;
      centreX[a] = ((i % cells) + 0.5) * s;
      centreY[a] = (Math.floor(i / cells) + 0.5) * s;
    }
  });
  return { inputSize, strides, count, level, centreX, centreY, levelStart };
}

export interface GroundTruth {
  /** In input pixels (after the letterbox). */
  box: Box;
  classIndex: number;
}

export interface Positive {
  anchor: number;
  /** Index into the ground truths. */
  truth: number;
  classIndex: number;
  /** IoU of the predicted box at this anchor with the ground truth (1 when no prediction was given). */
  iou: number;
}

export interface Assignment {
  positives: Positive[];
  /** 1 for every anchor that was a candidate of some box: neither positive nor a fair negative when not kept. */
  candidate: Uint8Array;
}

export interface AssignOptions {
  /** Centre sampling radius, in strides of each level (YOLOX: 2.5). */
  centreRadius: number;
  /** Candidates ranked for the dynamic k (YOLOX: 10). */
  topCandidates: number;
  /** The model's box at an anchor, in input pixels; without it every candidate is positive. */
  predicted?: (anchor: number) => Box;
}

export const DEFAULT_ASSIGN: Omit<AssignOptions, 'predicted'> = { centreRadius: 2.5, topCandidates: 10 };

/** Centre-sampled candidates of one box; the finest grid's nearest anchor when the box is too small for any. */
export function centreCandidates(grid: AnchorGrid, box: Box, centreRadius: number): number[] {
  const [x1, y1, x2, y2] = box;
  const cx = (x1 + x2) / 2;
  const cy = (y1 + y2) / 2;
  const out: number[] = [];
  for (let a = 0; a < grid.count; a++) {
    const x = grid.centreX[a]!;
    const y = grid.centreY[a]!;
    const r = centreRadius * grid.strides[grid.level[a]!]!;
    if (x > x1 && x < x2 && y > y1 && y < y2 && Math.abs(x - cx) < r && Math.abs(y - cy) < r) out.push(a);
  }
  if (out.length) return out;
  const s = grid.strides[0]!;
  const cells = grid.inputSize / s;
  const clampCell = (v: number) => Math.min(cells - 1, Math.max(0, Math.floor(v / s)));
  return [grid.levelStart[0]! + clampCell(cy) * cells + clampCell(cx)];
}

export function assignAnchors(
  grid: AnchorGrid,
  truths: readonly GroundTruth[],
  opts: AssignOptions = DEFAULT_ASSIGN,
): Assignment {
  const candidate = new Uint8Array(grid.count);
  const owner = new Map<number, Positive>();
  truths.forEach((t, truth) => {
    const ranked = centreCandidates(grid, t.box, opts.centreRadius)
      .map((anchor) => ({ anchor, iou: opts.predicted ? iou(opts.predicted(anchor), t.box) : 1 }))
      .sort((a, b) => b.iou - a.iou || a.anchor - b.anchor);
    for (const c of ranked) candidate[c.anchor] = 1;
    const best = ranked.slice(0, opts.topCandidates).reduce((sum, c) => sum + c.iou, 0);
    const k = opts.predicted ? Math.max(1, Math.floor(best)) : ranked.length;
    for (const c of ranked.slice(0, k)) {
      const held = owner.get(c.anchor);
      // An anchor two boxes both want answers for the one its box fits better (SimOTA's lower cost).
      if (!held || c.iou > held.iou)
        owner.set(c.anchor, { anchor: c.anchor, truth, classIndex: t.classIndex, iou: c.iou });
    }
  });
  const positives = [...owner.values()].sort((a, b) => a.anchor - b.anchor);
  return { positives, candidate };
}

/**
 * The box a YOLOX head predicts at an anchor, in input pixels, from its raw output (anchors × (5 +
 * classes)): centre offsets and log sizes in strides of the anchor's level, as decodeYolox reads them.
 */
export function anchorBox(raw: ArrayLike<number>, grid: AnchorGrid, classes: number, anchor: number): Box {
  const o = anchor * (5 + classes);
  const s = grid.strides[grid.level[anchor]!]!;
  // The anchor's cell starts half a stride before its centre.
  const cx = grid.centreX[anchor]! + (raw[o]! - 0.5) * s;
  const cy = grid.centreY[anchor]! + (raw[o + 1]! - 0.5) * s;
  const w = Math.exp(raw[o + 2]!) * s;
  const h = Math.exp(raw[o + 3]!) * s;
  return [cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2];
}
