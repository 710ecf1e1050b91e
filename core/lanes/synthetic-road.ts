import type { RgbImage } from './image';

/**
 * A road drawn in pixels for the lane tests (unit and integration): a dark road under a vanishing
 * point, markings converging on it, each known exactly. Not used by the service itself.
 */

export interface DrawnMarking {
  /** Where the marking's centre meets the bottom edge of the image. */
  bottomX: number;
  /** Its width at the bottom edge (it narrows to nothing at the vanishing point). */
  bottomWidth: number;
  colour: [number, number, number];
  /** Painted rows: every row, or `on` rows painted then `off` rows bare, from the bottom up. */
  pattern?: { on: number; off: number };
}

export interface DrawnRoad {
  width: number;
  height: number;
  vanishing: [number, number];
  markings: DrawnMarking[];
  /** Road brightness (grey) with a deterministic texture of ± `noise`. */
  road?: number;
  noise?: number;
  seed?: number;
}

export const WHITE: [number, number, number] = [235, 235, 230];
export const YELLOW: [number, number, number] = [225, 190, 40];

/** The centre of a drawn marking at height `y` (continuous pixels). */
export function markingCentre(road: DrawnRoad, m: DrawnMarking, y: number): number {
  const [vx, vy] = road.vanishing;
  return vx + ((m.bottomX - vx) * (y - vy)) / (road.height - vy);
}

export function drawRoad(road: DrawnRoad): RgbImage {
  const { width, height } = road;
  const [, vy] = road.vanishing;
  const rgb = new Uint8Array(width * height * 3);
  const base = road.road ?? 70;
  const noise = road.noise ?? 6;
  let state = road.seed ?? 7;
  const next = () => {
    state = (state * 1103515245 + 12345) % 2 ** 31;
    return state / 2 ** 31;
  };
  for (let y = 0; y < height; y++)
    for (let x = 0; x < width; x++) {
      const v = (y < vy ? 150 : base) + Math.round((next() * 2 - 1) * noise);
      rgb.set([v, v, v], (y * width + x) * 3);
    }
  for (const m of road.markings)
    for (let y = Math.ceil(vy); y < height; y++) {
      const up = height - 1 - y;
      if (m.pattern && up % (m.pattern.on + m.pattern.off) >= m.pattern.on) continue;
      const cy = y + 0.5;
      const half = (m.bottomWidth * (cy - vy)) / (height - vy) / 2;
      const cx = markingCentre(road, m, cy);
      for (let x = Math.floor(cx - half); x <= Math.ceil(cx + half); x++)
        if (x >= 0 && x < width && Math.abs(x + 0.5 - cx) <= Math.max(0.5, half))
          rgb.set(m.colour, (y * width + x) * 3);
    }
  return { width, height, rgb };
}
