/** Packed 8-bit RGB pixels. */
export interface RgbImage {
  data: Uint8Array;
  width: number;
  height: number;
}

export interface Rect {
  left: number;
  top: number;
  width: number;
  height: number;
}

const { floor, min, max, round } = Math;

/**
 * Draws `region` of `src` into the `cell` square of `dst` at (cellLeft, cellTop), scaled to fit
 * whole and centred (letterboxed; the bars keep what `dst` holds), by bilinear sampling at each
 * destination pixel's centre. A crop sheet needs 64 of these per request: an image library pays a
 * pipeline's set-up (about 2 ms) for each, far more than the few thousand pixels of a thumbnail.
 */
export function drawContained(
  src: RgbImage,
  region: Rect,
  dst: RgbImage,
  cellLeft: number,
  cellTop: number,
  cell: number,
): void {
  const scale = min(cell / region.width, cell / region.height);
  const w = max(1, round(region.width * scale));
  const h = max(1, round(region.height * scale));
  const offX = cellLeft + floor((cell - w) / 2);
  const offY = cellTop + floor((cell - h) / 2);
  const maxX = src.width - 1;
  const maxY = src.height - 1;
  const s = src.data;
  const d = dst.data;
  for (let y = 0; y < h; y++) {
    const sy = min(maxY, max(0, region.top + (y + 0.5) / scale - 0.5));
    const y0 = floor(sy);
    const y1 = min(maxY, y0 + 1);
    const fy = sy - y0;
    let out = ((offY + y) * dst.width + offX) * 3;
    for (let x = 0; x < w; x++) {
      const sx = min(maxX, max(0, region.left + (x + 0.5) / scale - 0.5));
      const x0 = floor(sx);
      const x1 = min(maxX, x0 + 1);
      const fx = sx - x0;
      const a = (y0 * src.width + x0) * 3;
      const b = (y0 * src.width + x1) * 3;
      const c = (y1 * src.width + x0) * 3;
      const e = (y1 * src.width + x1) * 3;
      for (let k = 0; k < 3; k++) {
        const top = s[a + k]! + (s[b + k]! - s[a + k]!) * fx;
        const bottom = s[c + k]! + (s[e + k]! - s[c + k]!) * fx;
        d[out++] = round(top + (bottom - top) * fy);
      }
    }
  }
}
