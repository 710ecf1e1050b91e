import { expandBox, type ScoredBox } from './boxes';

/**
 * What the PII pass redacts: faces, and text regions shaped like licence plates (short, wide,
 * small relative to the frame). Longer text (signs, banners) is not personal data and stays.
 */
export type PiiKind = 'face' | 'plate';

export interface PiiRegion {
  kind: PiiKind;
  /** [x1, y1, x2, y2] in pixels of the original frame, the area that was redacted. */
  bbox: [number, number, number, number];
  score: number;
}

export function isPlateShaped(b: ScoredBox, frameWidth: number, frameHeight: number): boolean {
  const w = b.x2 - b.x1;
  const h = b.y2 - b.y1;
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
  const merged = [...boxes].sort((a, b) => a.x1 - b.x1).map((b) => ({ ...b }));
  for (let changed = true; changed;) {
    changed = false;
    outer: for (let i = 0; i < merged.length; i++) {
      for (let j = i + 1; j < merged.length; j++) {
        const a = merged[i]!;
        const b = merged[j]!;
        const ha = a.y2 - a.y1;
        const hb = b.y2 - b.y1;
        const vOverlap = Math.min(a.y2, b.y2) - Math.max(a.y1, b.y1);
        const gap = Math.max(a.x1, b.x1) - Math.min(a.x2, b.x2);
        if (vOverlap >= 0.6 * Math.min(ha, hb) && gap <= gapRatio * Math.max(ha, hb)) {
          merged[i] = {
            x1: Math.min(a.x1, b.x1),
            y1: Math.min(a.y1, b.y1),
            x2: Math.max(a.x2, b.x2),
            y2: Math.max(a.y2, b.y2),
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
  const e = expandBox(b, MARGIN[kind], frameWidth, frameHeight);
  const r = (v: number) => Math.round(v);
  return { kind, bbox: [r(e.x1), r(e.y1), r(e.x2), r(e.y2)], score: Math.round(b.score * 1000) / 1000 };
}

/**
 * Pixel-block size: about six blocks across a face's shorter side, and blocks half a plate's
 * height, so characters (narrower than the plate is high) cannot be read back.
 */
export function pixelateBlock(kind: PiiKind, w: number, h: number): number {
  return Math.max(4, Math.ceil(kind === 'plate' ? h / 2 : Math.min(w, h) / 6));
}
