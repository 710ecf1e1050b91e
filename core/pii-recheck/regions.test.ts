import type { Box } from '../geometry';
import type { PiiRegion } from '../pii/regions';
import { addOnlyRegions, liesInside, recheckCrop, regionOnFrame } from './regions';

const region = (kind: PiiRegion['kind'], bbox: Box, score = 0.9): PiiRegion => ({ kind, bbox, score });

describe('addOnlyRegions', () => {
  it('keeps the recorded regions first and unchanged, skips finds inside them, and joins two finds of one face', () => {
    const recorded = [region('plate', [100, 100, 160, 120]), region('face', [10, 10, 30, 34])];
    const found = [
      region('face', [12, 12, 28, 30]), // inside a recorded face: nothing new
      region('face', [200, 50, 220, 74], 0.8),
      region('face', [202, 52, 222, 76], 0.95), // the same face from an overlapping crop
      region('plate', [300, 300, 340, 312]),
    ];
    const { regions, added } = addOnlyRegions(recorded, found);
    expect(regions.slice(0, 2)).toEqual(recorded);
    expect(added).toHaveLength(2);
    expect(added).toEqual(
      expect.arrayContaining([
        region('face', [200, 50, 222, 76], 0.95),
        region('plate', [300, 300, 340, 312]),
      ]),
    );
    expect(regions).toHaveLength(4);
  });

  it('never removes or shrinks a region, and covers every find, whatever it is given (seeded random cases)', () => {
    let s = 7;
    const rand = () => (s = (Math.imul(s, 1103515245) + 12345) >>> 0) / 2 ** 32;
    const box = (): Box => {
      const x = rand() * 500;
      const y = rand() * 300;
      return [x, y, x + 4 + rand() * 60, y + 4 + rand() * 40];
    };
    const kinds: PiiRegion['kind'][] = ['face', 'plate'];
    for (let c = 0; c < 300; c++) {
      const recorded = Array.from({ length: Math.floor(rand() * 5) }, () => region(kinds[c % 2]!, box()));
      const found = Array.from({ length: Math.floor(rand() * 8) }, () => region(kinds[(c + 1) % 2]!, box()));
      const { regions, added } = addOnlyRegions(recorded, found);
      expect(regions.slice(0, recorded.length)).toEqual(recorded);
      expect(regions.slice(recorded.length)).toEqual(added);
      for (const f of found) expect(regions.some((r) => liesInside(f.bbox, r.bbox))).toBe(true);
      // Given its own output, it adds nothing more.
      expect(addOnlyRegions(regions, found).added).toEqual([]);
    }
  });
});

describe('recheckCrop and regionOnFrame', () => {
  it('pads the box inside the frame, enlarges its longer side to the target at most maxUpscale, and maps a find back', () => {
    const crop = recheckCrop(
      [100, 50, 140, 130],
      { width: 400, height: 300 },
      { pad: 0.1, targetSide: 640, maxUpscale: 4 },
    );
    expect(crop).toMatchObject({ left: 96, top: 42, width: 48, height: 96, scale: 4 });
    const back = regionOnFrame(region('face', [40, 40, 80, 100]), crop);
    expect(back.bbox).toEqual([106, 52, 116, 67]);
    // A find at the crop's edge stays inside the crop.
    expect(regionOnFrame(region('face', [-20, -20, 1000, 1000]), crop).bbox).toEqual([96, 42, 144, 138]);
  });
});
