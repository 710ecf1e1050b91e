import type { Box } from '../geometry';

/**
 * The plate search in two passes: the text detector sees the whole frame small (coarse), then
 * only the places where it saw text again at full detail (fine). The fine crops are grown around
 * each coarse candidate, so a plate the coarse pass caught only in part is whole in its crop, and
 * crops that touch are joined, so a text line is never cut in two nor found twice.
 */
export interface TextCrop {
  /** Integer pixels of the frame, inside it. */
  box: Box;
  /** Scale of the crop in the detector's input: the fine pass's scale, or more for small text. */
  scale: number;
}

export interface TextCropOptions {
  /** Scale at which the fine pass sees the frame (at most 1). */
  fineScale: number;
  /** Text whose candidate is lower than this many pixels at `fineScale` is upscaled to it (at most 3×). */
  minTextHeight: number;
}

/** Margin around a candidate: its height above and below, twice its height left and right. */
function grow([x1, y1, x2, y2]: Box, width: number, height: number): Box {
  const h = y2 - y1;
  return [
    Math.max(0, Math.floor(x1 - 2 * h)),
    Math.max(0, Math.floor(y1 - h)),
    Math.min(width, Math.ceil(x2 + 2 * h)),
    Math.min(height, Math.ceil(y2 + h)),
  ];
}

const touch = (a: Box, b: Box): boolean => a[0] <= b[2] && b[0] <= a[2] && a[1] <= b[3] && b[1] <= a[3];

export function textCrops(
  candidates: readonly Box[],
  width: number,
  height: number,
  opts: TextCropOptions,
): TextCrop[] {
  const crops = candidates.map((c) => ({ box: grow(c, width, height), textHeight: c[3] - c[1] }));
  for (let i = 0; i < crops.length; i++) {
    for (let j = i + 1; j < crops.length; j++) {
      const a = crops[i]!;
      const b = crops[j]!;
      if (!touch(a.box, b.box)) continue;
      crops[i] = {
        box: [
          Math.min(a.box[0], b.box[0]),
          Math.min(a.box[1], b.box[1]),
          Math.max(a.box[2], b.box[2]),
          Math.max(a.box[3], b.box[3]),
        ],
        textHeight: Math.min(a.textHeight, b.textHeight),
      };
      crops.splice(j, 1);
      // The joined crop may now touch one already passed: look again from the start.
      i = -1;
      break;
    }
  }
  return crops.map(({ box, textHeight }) => {
    const seen = textHeight * opts.fineScale;
    const up = seen > 0 && seen < opts.minTextHeight ? Math.min(3, opts.minTextHeight / seen) : 1;
    return { box, scale: opts.fineScale * up };
  });
}
