import { InputError } from '../../errors';
import { compareHarnesses, harnessMetricsOf, HEADLINE_METRICS, type HarnessMetrics } from './compare';
import { evaluateCoco } from './evaluate';
import { EVALUATION_CASES } from './fixtures/cases';
import { COCO_STAT_NAMES } from './params';
import { evaluateStreaming, StreamingBoxEvaluator } from './streaming';

const bboxCases = EVALUATION_CASES.filter((c) => c.iouType === 'bbox');

describe.each(bboxCases)('the streaming harness on the $name fixture equals pycocotools', (fixture) => {
  const streamed = evaluateStreaming(fixture.input);
  const { reference } = fixture;

  it.each(HEADLINE_METRICS.map((m) => [m]))('gives %s', (metric) => {
    const expected = reference.stats[COCO_STAT_NAMES.indexOf(metric)]!;
    expect(streamed.headline[metric]).toBeCloseTo(expected, 4);
  });

  it('gives per-category AP', () => {
    expect(streamed.perCategoryAp.map((c) => c.categoryId)).toEqual(
      reference.perCategory.map((c) => c.categoryId),
    );
    streamed.perCategoryAp.forEach((c, k) => {
      expect({ categoryId: c.categoryId, ap: c.ap }).toEqual({
        categoryId: c.categoryId,
        ap: expect.closeTo(reference.perCategory[k]!.ap, 4),
      });
    });
  });

  it('agrees with evaluateCoco to rounding', () => {
    const comparison = compareHarnesses(harnessMetricsOf(evaluateCoco(fixture.input)), streamed, 1e-12);
    expect(comparison.divergences.filter((d) => d.diverges)).toEqual([]);
    expect(comparison.within).toBe(true);
  });
});

describe('StreamingBoxEvaluator', () => {
  const fixture = bboxCases.find((c) => c.name === 'random-bbox')!;

  it('gives the same figures whatever order the images come in', () => {
    const { images, categories, groundTruth, detections } = fixture.input;
    const evaluator = new StreamingBoxEvaluator(categories);
    for (const image of [...images].reverse()) {
      evaluator.addImage(
        image.id,
        groundTruth.filter((g) => g.image_id === image.id),
        detections.filter((d) => d.image_id === image.id),
      );
    }
    expect(evaluator.finish()).toEqual(evaluateStreaming(fixture.input));
  });

  it('refuses an image added twice', () => {
    const evaluator = new StreamingBoxEvaluator([{ id: 1 }]);
    evaluator.addImage(1, [], []);
    expect(() => evaluator.addImage(1, [], [])).toThrow(InputError);
  });
});

describe('compareHarnesses', () => {
  const metrics: HarnessMetrics = harnessMetricsOf(evaluateCoco(bboxCases[0]!.input));

  it('lists every compared metric, none diverging, for identical results', () => {
    const comparison = compareHarnesses(metrics, metrics, 1e-6);
    expect(comparison.within).toBe(true);
    expect(comparison.epsilon).toBe(1e-6);
    expect(comparison.divergences.map((d) => d.metric)).toEqual([
      ...HEADLINE_METRICS,
      ...metrics.perCategoryAp.map((c) => `AP[category ${c.categoryId}]`),
    ]);
    expect(comparison.divergences.every((d) => d.delta === 0 && !d.diverges)).toBe(true);
  });

  it('flags a perturbed metric and only it', () => {
    const perturbed: HarnessMetrics = {
      headline: { ...metrics.headline, AP75: metrics.headline.AP75 + 2e-4 },
      perCategoryAp: metrics.perCategoryAp.map((c, k) => (k === 0 ? { ...c, ap: c.ap - 5e-5 } : c)),
    };
    const comparison = compareHarnesses(metrics, perturbed, 1e-4);
    expect(comparison.within).toBe(false);
    const flagged = comparison.divergences.filter((d) => d.diverges);
    expect(flagged).toHaveLength(1);
    expect(flagged[0]).toMatchObject({ metric: 'AP75', primary: metrics.headline.AP75 });
    expect(flagged[0]!.delta).toBeCloseTo(2e-4, 12);
    // Under the epsilon: listed, not flagged.
    const first = comparison.divergences.find(
      (d) => d.metric === `AP[category ${metrics.perCategoryAp[0]!.categoryId}]`,
    )!;
    expect(first.delta).toBeCloseTo(-5e-5, 12);
    expect(first.diverges).toBe(false);
  });

  it('flags a category only one side has', () => {
    const fewer: HarnessMetrics = { ...metrics, perCategoryAp: metrics.perCategoryAp.slice(1) };
    const comparison = compareHarnesses(metrics, fewer, 1);
    expect(comparison.within).toBe(false);
    expect(comparison.divergences.filter((d) => d.diverges)).toEqual([
      expect.objectContaining({ secondary: null, delta: null, diverges: true }),
    ]);
  });
});
