import { nms, type Box, type ScoredBox } from '../geometry';

/**
 * YOLOX's input and raw head (../shared/models/MODELS.md). The network sees a square image of
 * `inputSize` pixels: the frame scaled by r = min(S/w, S/h) (aspect kept) and placed at the top
 * left, the rest filled with 114, channels BGR, values 0–255 not normalised, planar (1×3×S×S) —
 * exactly YOLOX's own `preproc`, so the model sees what it was trained on. The head gives, per
 * anchor point of the stride-8, 16 and 32 grids (row-major, finest grid first), x and y offsets,
 * log width and log height in grid cells, objectness and the class scores (both already through a
 * sigmoid: the export leaves only the grid decode out).
 */
export const YOLOX_STRIDES = [8, 16, 32] as const;
export const YOLOX_PAD_VALUE = 114;

export interface Letterbox {
  /** Frame size. */
  width: number;
  height: number;
  /** Network input side. */
  inputSize: number;
  /** Frame pixels → input pixels. */
  scale: number;
  /** Size of the scaled frame inside the input. */
  scaledWidth: number;
  scaledHeight: number;
  /** Where the scaled frame starts inside the input (YOLOX puts it at the top left). */
  padX: number;
  padY: number;
}

export function letterbox(width: number, height: number, inputSize: number): Letterbox {
  if (!(width > 0 && height > 0)) throw new Error(`cannot letterbox a ${width}×${height} frame`);
  const scale = Math.min(inputSize / width, inputSize / height);
  return {
    width,
    height,
    inputSize,
    scale,
    scaledWidth: Math.max(1, Math.round(width * scale)),
    scaledHeight: Math.max(1, Math.round(height * scale)),
    padX: 0,
    padY: 0,
  };
}

/**
 * The input tensor's data from the scaled frame (packed RGB, `scaledWidth`×`scaledHeight`): planar
 * BGR float32 of S×S with the padding at 114.
 */
export function yoloxInput(rgb: Uint8Array, lb: Letterbox): Float32Array {
  const { inputSize: s, scaledWidth: w, scaledHeight: h, padX, padY } = lb;
  if (rgb.length !== w * h * 3) throw new Error(`expected ${w}×${h}×3 RGB bytes, got ${rgb.length}`);
  const plane = s * s;
  const out = new Float32Array(3 * plane).fill(YOLOX_PAD_VALUE);
  for (let y = 0; y < h; y++) {
    const row = (y + padY) * s + padX;
    for (let x = 0; x < w; x++) {
      const src = (y * w + x) * 3;
      const dst = row + x;
      out[dst] = rgb[src + 2]!; // B
      out[plane + dst] = rgb[src + 1]!; // G
      out[2 * plane + dst] = rgb[src]!; // R
    }
  }
  return out;
}

/** Anchor points of the three grids for a square input: 3549 for 416. */
export const yoloxAnchorCount = (inputSize: number): number =>
  YOLOX_STRIDES.reduce((n, s) => n + (inputSize / s) ** 2, 0);

export interface ClassBox extends ScoredBox {
  /** Index into the model's classes (COCO-80 for yolox_nano). */
  classIndex: number;
  /**
   * Objectness × score of every class at the box's anchor, by class index: what the model thought
   * of the other classes (label-error detection weighs the given class against them).
   */
  classScores: Float32Array;
}

export interface DecodeOptions {
  /** Objectness × class score below which an anchor is dropped. */
  minScore: number;
  /** NMS IoU, applied per class. */
  nmsIou: number;
}

/**
 * Decodes the raw head (anchors × (5 + classes)) into boxes in frame pixels: grid decode, the best
 * class per anchor with score = objectness × class score, NMS within each class, then back through
 * the letterbox and clipped to the frame.
 */
export function decodeYolox(
  raw: ArrayLike<number>,
  lb: Letterbox,
  numClasses: number,
  opts: DecodeOptions,
): ClassBox[] {
  const stride = 5 + numClasses;
  const anchors = yoloxAnchorCount(lb.inputSize);
  if (raw.length !== anchors * stride)
    throw new Error(
      `YOLOX output has ${raw.length} values; a ${lb.inputSize} input with ${numClasses} classes gives ${anchors}×${stride}`,
    );
  const candidates: Array<Omit<ClassBox, 'classScores'> & { offset: number }> = [];
  let anchor = 0;
  for (const s of YOLOX_STRIDES) {
    const cells = lb.inputSize / s;
    for (let i = 0; i < cells * cells; i++, anchor++) {
      const o = anchor * stride;
      const objectness = raw[o + 4]!;
      if (objectness < opts.minScore) continue;
      let best = 0;
      let classIndex = 0;
      for (let c = 0; c < numClasses; c++) {
        const v = raw[o + 5 + c]!;
        if (v > best) {
          best = v;
          classIndex = c;
        }
      }
      const score = objectness * best;
      if (score < opts.minScore) continue;
      const cx = (raw[o]! + (i % cells)) * s;
      const cy = (raw[o + 1]! + Math.floor(i / cells)) * s;
      const w = Math.exp(raw[o + 2]!) * s;
      const h = Math.exp(raw[o + 3]!) * s;
      candidates.push({
        box: [cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2],
        score,
        classIndex,
        offset: o,
      });
    }
  }
  const byClass = new Map<number, typeof candidates>();
  for (const c of candidates) {
    const same = byClass.get(c.classIndex);
    if (same) same.push(c);
    else byClass.set(c.classIndex, [c]);
  }
  const kept = [...byClass.values()].flatMap((boxes) => nms(boxes, opts.nmsIou));
  return kept
    .map(({ offset, ...b }) => {
      const classScores = new Float32Array(numClasses);
      for (let c = 0; c < numClasses; c++) classScores[c] = raw[offset + 4]! * raw[offset + 5 + c]!;
      return toFrame({ ...b, classScores }, lb);
    })
    .filter(({ box: [x1, y1, x2, y2] }) => x2 - x1 >= 1 && y2 - y1 >= 1)
    .sort((a, b) => b.score - a.score);
}

const clamp = (v: number, hi: number): number => (v < 0 ? 0 : v > hi ? hi : v);

/**
 * Input pixels → frame pixels, clipped to the frame. Each axis by the scale the resize really
 * applied (scaled size ÷ frame size): the scaled sides are rounded, so on one axis that can differ
 * from `scale` by up to half an input pixel over the frame.
 */
export function toFrame<T extends ScoredBox>(b: T, lb: Letterbox): T {
  const sx = lb.width / lb.scaledWidth;
  const sy = lb.height / lb.scaledHeight;
  const x = (v: number) => clamp((v - lb.padX) * sx, lb.width);
  const y = (v: number) => clamp((v - lb.padY) * sy, lb.height);
  const [x1, y1, x2, y2] = b.box;
  const box: Box = [x(x1), y(y1), x(x2), y(y2)];
  return { ...b, box };
}
