import { InputError } from '../../errors';
import { evaluateCoco, precisionRecallCurve, type CocoEvaluation } from './evaluate';
import { EVALUATION_CASES } from './fixtures/cases';
import { IOU_THRESHOLDS, RECALL_THRESHOLDS } from './params';
import type { CocoEvaluationInput } from './types';

const TOLERANCE = 1e-4;

/** Every entry within the tolerance, failing on the first that is not, by its flat index. */
function expectClose(name: string, actual: ArrayLike<number>, expected: readonly number[]): void {
  expect({ name, length: actual.length }).toEqual({ name, length: expected.length });
  const off = expected.findIndex((e, i) => !(Math.abs(actual[i]! - e) <= TOLERANCE));
  expect({ name, index: off, actual: actual[off], expected: expected[off] }).toEqual({
    name,
    index: -1,
    actual: undefined,
    expected: undefined,
  });
}

/** Mean over recall thresholds of each [t][:][k][a][m] row, -1 rows kept, as the reference stores it. */
function apBySetting(result: CocoEvaluation): number[] {
  const { precision, categoryIds } = result.accumulated;
  const [T, R, K, A, M] = [10, 101, categoryIds.length, 4, 3];
  const out: number[] = [];
  for (let t = 0; t < T; t++)
    for (let k = 0; k < K; k++)
      for (let a = 0; a < A; a++)
        for (let m = 0; m < M; m++) {
          let sum = 0;
          for (let r = 0; r < R; r++) sum += precision[(((t * R + r) * K + k) * A + a) * M + m]!;
          out.push(precision[((t * R * K + k) * A + a) * M + m]! === -1 ? -1 : sum / R);
        }
  return out;
}

describe.each(EVALUATION_CASES)('evaluateCoco on the $name fixture equals pycocotools', (fixture) => {
  const result = evaluateCoco(fixture.input, fixture.iouType);
  const { reference } = fixture;

  it('gives the twelve summary stats', () => {
    expectClose('stats', result.stats, reference.stats);
  });

  it('gives per-category AP, AP50 and AR@100', () => {
    expect(result.perCategory.map((c) => c.categoryId)).toEqual(
      reference.perCategory.map((c) => c.categoryId),
    );
    expectClose(
      'ap',
      result.perCategory.map((c) => c.ap),
      reference.perCategory.map((c) => c.ap),
    );
    expectClose(
      'ap50',
      result.perCategory.map((c) => c.ap50),
      reference.perCategory.map((c) => c.ap50),
    );
    expectClose(
      'ar100',
      result.perCategory.map((c) => c.ar100),
      reference.perCategory.map((c) => c.ar100),
    );
  });

  it('accumulates the same recall and precision arrays', () => {
    expectClose('recall', result.accumulated.recall, reference.recall);
    expectClose('apBySetting', apBySetting(result), reference.apBySetting);
    if (reference.precision) expectClose('precision', result.accumulated.precision, reference.precision);
  });
});

describe('evaluateCoco', () => {
  const handBuilt = EVALUATION_CASES.find((c) => c.name === 'hand-built')!;

  it("uses numpy's exact thresholds", () => {
    expect(Array.from(IOU_THRESHOLDS)).toEqual(handBuilt.reference.iouThresholds);
    expect(Array.from(RECALL_THRESHOLDS)).toEqual(handBuilt.reference.recallThresholds);
  });

  it('exercises what the fixtures are for: crowds, categories without ground truth, every area range', () => {
    const stats = handBuilt.reference.stats;
    expect(stats.every((s) => s > 0 && s < 1)).toBe(true);
    expect(handBuilt.input.groundTruth.some((g) => g.iscrowd)).toBe(true);
    const withoutGroundTruth = handBuilt.reference.perCategory.filter((c) => c.ap === -1);
    expect(withoutGroundTruth.map((c) => c.categoryId)).toEqual([3, 4]);
    expect(evaluateCoco(handBuilt.input).perCategory.find((c) => c.categoryId === 3)).toMatchObject({
      ap: -1,
      ap50: -1,
      ar100: -1,
    });
  });

  it('does not depend on the order of the input beyond score ties', () => {
    const { input } = EVALUATION_CASES.find((c) => c.name === 'random-bbox')!;
    const reordered: CocoEvaluationInput = {
      images: [...input.images].reverse(),
      categories: [...input.categories].reverse(),
      groundTruth: [...input.groundTruth].sort((a, b) => b.image_id - a.image_id || a.id - b.id),
      detections: input.detections
        .map((d, i) => ({ d, i }))
        .sort((x, y) => y.d.image_id - x.d.image_id || x.i - y.i)
        .map((x) => x.d),
    };
    expect(evaluateCoco(reordered).stats).toEqual(evaluateCoco(input).stats);
  });

  it('breaks score ties inside an image by input order', () => {
    const images = [{ id: 1, width: 100, height: 100 }];
    const categories = [{ id: 1 }];
    const groundTruth = [
      { id: 1, image_id: 1, category_id: 1, bbox: [0, 0, 10, 10] as const, area: 100, iscrowd: 0 },
    ];
    const hit = { image_id: 1, category_id: 1, bbox: [0, 0, 10, 10] as const, score: 0.5 };
    const miss = { image_id: 1, category_id: 1, bbox: [50, 50, 10, 10] as const, score: 0.5 };
    const hitFirst = evaluateCoco({ images, categories, groundTruth, detections: [hit, miss] });
    const missFirst = evaluateCoco({ images, categories, groundTruth, detections: [miss, hit] });
    // Only one detection counts at maxDets 1: the hit when it comes first, the miss otherwise.
    expect(hitFirst.stats[6]).toBe(1);
    expect(missFirst.stats[6]).toBe(0);
    expect(hitFirst.stats[0]).toBeCloseTo(1, 10);
    expect(missFirst.stats[0]).toBeCloseTo(0.5, 10);
  });

  it('gives -1 for every stat when nothing has ground truth', () => {
    const result = evaluateCoco({
      images: [{ id: 1, width: 10, height: 10 }],
      categories: [{ id: 1 }],
      groundTruth: [],
      detections: [{ image_id: 1, category_id: 1, bbox: [0, 0, 5, 5], score: 1 }],
    });
    expect(result.stats).toEqual(Array(12).fill(-1));
    expect(precisionRecallCurve(result.accumulated)).toBeNull();
  });

  it('refuses detections on unknown images and duplicate ids', () => {
    const base = handBuilt.input;
    const stray = { image_id: 999, category_id: 1, bbox: [0, 0, 1, 1] as const, score: 1 };
    expect(() => evaluateCoco({ ...base, detections: [...base.detections, stray] })).toThrow(InputError);
    expect(() => evaluateCoco({ ...base, groundTruth: [...base.groundTruth, base.groundTruth[0]!] })).toThrow(
      InputError,
    );
    expect(() => evaluateCoco({ ...base, images: [...base.images, base.images[0]!] })).toThrow(InputError);
  });

  it('draws a precision-recall curve from the accumulated arrays', () => {
    const result = evaluateCoco(handBuilt.input);
    const { T, R, K, A, M } = handBuilt.reference.counts;
    expect(result.accumulated.precision.length).toBe(T * R * K * A * M);
    const car = precisionRecallCurve(result.accumulated, { categoryId: 1, iouThreshold: 0.75 })!;
    expect(car.recall).toHaveLength(101);
    // The curve is the reference's precision[t = .75][:][car][all][100].
    const k = result.accumulated.categoryIds.indexOf(1);
    const expected = Array.from(
      { length: R },
      (_, r) => handBuilt.reference.precision![(((5 * R + r) * K + k) * A + 0) * M + 2]!,
    );
    expectClose('curve', car.precision, expected);
    for (let r = 1; r < R; r++) expect(car.precision[r]!).toBeLessThanOrEqual(car.precision[r - 1]!);
    expect(() => precisionRecallCurve(result.accumulated, { iouThreshold: 0.52 })).toThrow(InputError);
  });
});
