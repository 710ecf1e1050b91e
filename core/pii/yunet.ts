import { nms, type ScoredBox } from '../geometry';

/**
 * Decoding of the YuNet face detector's raw outputs (see ../shared/models/MODELS.md). Per stride s
 * in 8/16/32 the outputs cls_s, obj_s (anchors×1) and bbox_s (anchors×4) are flattened row-major
 * over the (H/s)×(W/s) grid: score = sqrt(clamp(cls)·clamp(obj)), centre = ((col + dx)·s,
 * (row + dy)·s), size = (exp(dw)·s, exp(dh)·s). Then NMS.
 */
export const YUNET_STRIDES = [8, 16, 32] as const;

export type YunetOutputs = Record<string, ArrayLike<number>>;

const clamp01 = (v: number): number => (v < 0 ? 0 : v > 1 ? 1 : v);

/** The network input must have H and W multiples of 32. */
export const yunetInputSide = (side: number): number => Math.max(32, Math.ceil(side / 32) * 32);

export function decodeYunet(
  outputs: YunetOutputs,
  inputWidth: number,
  inputHeight: number,
  opts: { minScore: number; nmsIou?: number },
): ScoredBox[] {
  if (inputWidth % 32 || inputHeight % 32)
    throw new Error(`YuNet input ${inputWidth}×${inputHeight} is not a multiple of 32`);
  const faces: ScoredBox[] = [];
  for (const s of YUNET_STRIDES) {
    const cols = inputWidth / s;
    const rows = inputHeight / s;
    const cls = outputs[`cls_${s}`];
    const obj = outputs[`obj_${s}`];
    const bbox = outputs[`bbox_${s}`];
    if (!cls || !obj || !bbox)
      throw new Error(`YuNet output for stride ${s} is missing (cls_${s}, obj_${s}, bbox_${s})`);
    if (cls.length !== rows * cols || obj.length !== rows * cols || bbox.length !== rows * cols * 4) {
      throw new Error(`YuNet stride ${s}: output sizes do not match a ${cols}×${rows} grid`);
    }
    for (let i = 0; i < rows * cols; i++) {
      const score = Math.sqrt(clamp01(cls[i]!) * clamp01(obj[i]!));
      if (score < opts.minScore) continue;
      const row = Math.floor(i / cols);
      const col = i % cols;
      const cx = (col + bbox[i * 4]!) * s;
      const cy = (row + bbox[i * 4 + 1]!) * s;
      const w = Math.exp(bbox[i * 4 + 2]!) * s;
      const h = Math.exp(bbox[i * 4 + 3]!) * s;
      faces.push({ box: [cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2], score });
    }
  }
  return nms(faces, opts.nmsIou ?? 0.3);
}
