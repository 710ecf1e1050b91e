import { compareHarnesses } from '../metrics/coco';
import { cocoInputOf, harnessParity } from './parity';

const frames = [
  { frame_id: 'f2', width: 640, height: 480 },
  { frame_id: 'f1', width: 640, height: 480 },
];
const gold = [
  { frame_id: 'f1', class_id: 3, bbox: [10, 10, 110, 90] },
  { frame_id: 'f1', class_id: 5, bbox: [200, 200, 260, 300] },
  { frame_id: 'f2', class_id: 3, bbox: [0, 0, 30, 30] },
];
const predictions = [
  { frame_id: 'f1', class_id: 3, bbox: [12, 11, 108, 92], conf: 0.9 },
  { frame_id: 'f1', class_id: 5, bbox: [205, 190, 255, 310], conf: 0.7 },
  { frame_id: 'f2', class_id: 3, bbox: [100, 100, 140, 140], conf: 0.6 },
  { frame_id: 'f2', class_id: 9, bbox: [0, 0, 30, 30], conf: 0.5 },
  { frame_id: 'elsewhere', class_id: 3, bbox: [0, 0, 1, 1], conf: 0.99 },
];

describe('harness parity', () => {
  it('turns gold frames into a COCO dataset: images by frame id, xywh boxes, areas, categories of both sides', () => {
    const input = cocoInputOf(frames, gold, predictions);
    expect(input.images.map((i) => i.id)).toEqual([1, 2]);
    expect(input.categories.map((c) => c.id)).toEqual([3, 5, 9]);
    expect(input.groundTruth[0]).toEqual({
      id: 1,
      image_id: 1,
      category_id: 3,
      bbox: [10, 10, 100, 80],
      area: 8000,
      iscrowd: 0,
    });
    expect(input.detections).toHaveLength(4);
  });

  it('finds both harnesses within epsilon on a normal run', () => {
    const report = harnessParity(cocoInputOf(frames, gold, predictions), 1e-9);
    expect(report.comparison.within).toBe(true);
    expect(report.diverging).toEqual([]);
    expect(report.primary.headline.AP).toBeGreaterThan(0);
    expect(report.primary.headline).toEqual(
      Object.fromEntries(
        Object.entries(report.secondary.headline).map(([k, v]) => [k, expect.closeTo(v as number, 9)]),
      ),
    );
  });

  it('flags a figure beyond epsilon, a missing category, and everything under a negative epsilon', () => {
    const { primary, secondary } = harnessParity(cocoInputOf(frames, gold, predictions), 1e-9);
    const shifted = {
      ...secondary,
      headline: { ...secondary.headline, AP50: secondary.headline.AP50 + 1e-3 },
    };
    const moved = compareHarnesses(primary, shifted, 1e-6);
    expect(moved.within).toBe(false);
    expect(moved.divergences.filter((d) => d.diverges).map((d) => d.metric)).toEqual(['AP50']);
    const fewer = compareHarnesses(
      primary,
      { ...secondary, perCategoryAp: secondary.perCategoryAp.slice(1) },
      1,
    );
    expect(fewer.divergences.find((d) => d.diverges)).toMatchObject({
      metric: 'AP[category 3]',
      secondary: null,
    });
    expect(compareHarnesses(primary, secondary, -1).within).toBe(false);
  });
});
