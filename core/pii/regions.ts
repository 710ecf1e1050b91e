import { expandBox, type Box, type ScoredBox } from '../geometry';

/**
 * What the PII pass redacts: faces, and text regions shaped like licence plates (short, wide,
 * small relative to the frame). Longer text (signs, banners) is not personal data and stays.
 */
export type PiiKind = 'face' | 'plate';

export interface PiiRegion {
  kind: PiiKind;
  /** [x1, y1, x2, y2] in pixels of the original frame, the area that was redacted. */
  bbox: Box;
  score: number;
}

export function isPlateShaped(b: ScoredBox, frameWidth: number, frameHeight: number): boolean {
  const [x1, y1, x2, y2] = b.box;
  const w = x2 - x1;
  const h = y2 - y1;
  if (h < 6 || w < 12) return false;
  const aspect = w / h;
  // Single-line plates with their spaces run to about 10:1 (e.g. "KA 05 MH 2931").
  return aspect >= 1.3 && aspect <= 10 && h <= frameHeight * 0.25 && w <= frameWidth * 0.5;
}

/**
 * Joins word boxes of one text line: the detector splits a plate at the gap between its
 * character groups ("LD71" "0KR"). Boxes join when they overlap vertically by most of the smaller
 * height and the horizontal gap is under `gapRatio` of the taller height.
 */
export function mergeTextLines(boxes: readonly ScoredBox[], gapRatio = 0.8): ScoredBox[] {
  const merged = [...boxes].sort((a, b) => a.box[0] - b.box[0]);
  for (let changed = true; changed;) {
    changed = false;
    outer: for (let i = 0; i < merged.length; i++) {
      for (let j = i + 1; j < merged.length; j++) {
        const a = merged[i]!;
        const b = merged[j]!;
        const [ax1, ay1, ax2, ay2] = a.box;
        const [bx1, by1, bx2, by2] = b.box;
        const ha = ay2 - ay1;
        const hb = by2 - by1;
        const vOverlap = Math.min(ay2, by2) - Math.max(ay1, by1);
        const gap = Math.max(ax1, bx1) - Math.min(ax2, bx2);
        if (vOverlap >= 0.6 * Math.min(ha, hb) && gap <= gapRatio * Math.max(ha, hb)) {
          merged[i] = {
            box: [Math.min(ax1, bx1), Math.min(ay1, by1), Math.max(ax2, bx2), Math.max(ay2, by2)],
            score: Math.min(a.score, b.score),
          };
          merged.splice(j, 1);
          changed = true;
          break outer;
        }
      }
    }
  }
  return merged;
}

/** Margins added around a detection before redacting it, so hairlines and plate frames go too. */
const MARGIN: Record<PiiKind, number> = { face: 0.2, plate: 0.1 };

export function toRedactionRegion(
  kind: PiiKind,
  b: ScoredBox,
  frameWidth: number,
  frameHeight: number,
): PiiRegion {
  const [x1, y1, x2, y2] = expandBox(b.box, MARGIN[kind], frameWidth, frameHeight);
  const r = (v: number) => Math.round(v);
  return { kind, bbox: [r(x1), r(y1), r(x2), r(y2)], score: Math.round(b.score * 1000) / 1000 };
}

/**
 * Pixel-block size: about six blocks across a face's shorter side, and blocks half a plate's
 * height, so characters (narrower than the plate is high) cannot be read back.
 */
export function pixelateBlock(kind: PiiKind, w: number, h: number): number {
  return Math.max(4, Math.ceil(kind === 'plate' ? h / 2 : Math.min(w, h) / 6));
}

/**
 * Pixelates every region of a packed RGB frame in place: each block of pixelateBlock's size is
 * filled with its mean colour. Done here on the decoded pixels rather than by an image pipeline per
 * region, because every such pipeline would copy the whole frame.
 */
export function pixelateRegions(
  rgb: Buffer,
  width: number,
  height: number,
  regions: readonly PiiRegion[],
): void {
  for (const r of regions) {
    const [x1, y1, x2, y2] = r.bbox.map(Math.round) as Box;
    const left = Math.max(0, x1);
    const top = Math.max(0, y1);
    const right = Math.min(width, x2);
    const bottom = Math.min(height, y2);
    if (right - left < 1 || bottom - top < 1) continue;
    const block = pixelateBlock(r.kind, right - left, bottom - top);
    for (let by = top; by < bottom; by += block) {
      const ey = Math.min(bottom, by + block);
      for (let bx = left; bx < right; bx += block) {
        const ex = Math.min(right, bx + block);
        let red = 0;
        let green = 0;
        let blue = 0;
        for (let y = by; y < ey; y++)
          for (let x = bx; x < ex; x++) {
            const i = (y * width + x) * 3;
            red += rgb[i]!;
            green += rgb[i + 1]!;
            blue += rgb[i + 2]!;
          }
        const n = (ey - by) * (ex - bx);
        const mean = [Math.round(red / n), Math.round(green / n), Math.round(blue / n)];
        for (let y = by; y < ey; y++) for (let x = bx; x < ex; x++) rgb.set(mean, (y * width + x) * 3);
      }
    }
  }
}
