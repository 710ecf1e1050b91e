/**
 * Sizes for the OCR models. The recognizer takes lines 48 px tall, as wide as their aspect asks
 * (PaddleOCR's default cap is 320; longer lines are squeezed); the detector takes sides that are
 * multiples of 32. Small regions are upscaled so that text a few pixels tall reaches the sizes
 * the detector was trained on.
 */
export const REC_HEIGHT = 48;

export function recInputWidth(width: number, height: number, maxWidth: number): number {
  const w = Math.ceil((REC_HEIGHT * width) / Math.max(1, height));
  return Math.max(8, Math.min(maxWidth, w));
}

/**
 * How much to enlarge a region before detection: enough for its longer side to reach
 * `targetSide`, at most `maxUpscale`, never shrinking below its own size unless it is over
 * `targetSide` (then scaled down to it).
 */
export function regionScale(width: number, height: number, targetSide: number, maxUpscale: number): number {
  const longer = Math.max(width, height, 1);
  return Math.min(maxUpscale, targetSide / longer);
}

/** Packed RGB bytes to planar float BGR, (v/255 - mean) / std per channel: what PaddleOCR feeds. */
export function planarBgr(
  rgb: Uint8Array,
  width: number,
  height: number,
  mean: readonly [number, number, number],
  std: readonly [number, number, number],
  out: Float32Array = new Float32Array(3 * width * height),
  outWidth = width,
): Float32Array {
  const plane = height * outWidth;
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const i = (y * width + x) * 3;
      const o = y * outWidth + x;
      for (let c = 0; c < 3; c++) out[c * plane + o] = (rgb[i + 2 - c]! / 255 - mean[c]!) / std[c]!;
    }
  }
  return out;
}

/**
 * A detected line grown before recognition: DB-net boxes hug the glyphs, and the recognizer drops
 * a first or last character that touches the crop's edge, so each side gets a margin of a share of
 * the line's height (what a character's width is, roughly).
 */
export function lineMargin(box: readonly number[], share = 0.15): [number, number, number, number] {
  const [x1, y1, x2, y2] = box as [number, number, number, number];
  const m = (y2 - y1) * share;
  return [x1 - m, y1 - m / 3, x2 + m, y2 + m / 3];
}
