import { describe, expect, it } from '@jest/globals';
import { drawContained, type RgbImage } from './thumbnail';

const image = (width: number, height: number, fill = 0): RgbImage => ({
  data: new Uint8Array(width * height * 3).fill(fill),
  width,
  height,
});
const pixel = (img: RgbImage, x: number, y: number) =>
  Array.from(img.data.subarray((y * img.width + x) * 3, (y * img.width + x) * 3 + 3));

describe('a thumbnail drawn into a sheet cell', () => {
  it('fits a wide region whole, centred, and leaves the bars as they were', () => {
    const src = image(40, 20, 200);
    const dst = image(24, 12, 128);
    drawContained(src, { left: 0, top: 0, width: 20, height: 10 }, dst, 12, 0, 12);
    // 20×10 scaled by 0.6 is 12×6, centred vertically: rows 3..8 of the cell.
    expect(pixel(dst, 12, 2)).toEqual([128, 128, 128]);
    expect(pixel(dst, 12, 3)).toEqual([200, 200, 200]);
    expect(pixel(dst, 23, 8)).toEqual([200, 200, 200]);
    expect(pixel(dst, 23, 9)).toEqual([128, 128, 128]);
    // The first cell is untouched.
    expect(pixel(dst, 11, 5)).toEqual([128, 128, 128]);
  });

  it('keeps where things are: the right half of the region lands in the right half of the cell', () => {
    const src = image(10, 10, 0);
    for (let y = 0; y < 10; y++) for (let x = 5; x < 10; x++) src.data.set([255, 0, 0], (y * 10 + x) * 3);
    const dst = image(20, 20, 0);
    drawContained(src, { left: 0, top: 0, width: 10, height: 10 }, dst, 0, 0, 20);
    expect(pixel(dst, 2, 10)).toEqual([0, 0, 0]);
    expect(pixel(dst, 17, 10)).toEqual([255, 0, 0]);
    // Bilinear: the seam is a blend, not a jump.
    expect(pixel(dst, 10, 10)[0]).toBeGreaterThan(0);
    expect(pixel(dst, 9, 10)[0]).toBeLessThan(255);
  });

  it('reads only inside the source at its edges', () => {
    const src = image(3, 3, 50);
    const dst = image(30, 30, 0);
    drawContained(src, { left: 2, top: 2, width: 1, height: 1 }, dst, 0, 0, 30);
    expect(pixel(dst, 0, 0)).toEqual([50, 50, 50]);
    expect(pixel(dst, 29, 29)).toEqual([50, 50, 50]);
  });
});
