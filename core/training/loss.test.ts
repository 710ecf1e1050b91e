import { seededRandom } from './random';
import {
  anchorPenalty,
  bceWithLogits,
  meanLoss,
  zeroGradient,
  type HeadGradient,
  type HeadLevel,
  type HeadsTrained,
  type Samples,
} from './loss';

/** A small random head (3 classes, 4 channels, 2 levels) and samples of both kinds on both levels. */
function fixture(seed: number) {
  const random = seededRandom(seed);
  const r = (n: number, scale = 1) => Float32Array.from({ length: n }, () => (random() - 0.5) * 2 * scale);
  const channels = 4;
  const levels: HeadLevel[] = [0, 1].map(() => ({
    clsWeight: r(3 * channels),
    clsBias: r(3),
    objWeight: r(channels),
    objBias: r(1),
  }));
  const target = Int16Array.from([0, 2, -1, 1, -1, 2]);
  const samples: Samples = {
    channels,
    count: target.length,
    level: Uint8Array.from([0, 1, 0, 1, 1, 0]),
    target,
    clsFeatures: r(target.length * channels, 2),
    objFeatures: r(target.length * channels, 2),
  };
  return { levels, samples };
}

const PARTS = ['clsWeight', 'clsBias', 'objWeight', 'objBias'] as const;

/** Central differences in float64: the head's values are float32, so the probe replaces whole arrays. */
function numericGradient(levels: HeadLevel[], samples: Samples, heads: HeadsTrained) {
  const h = 1e-3;
  return levels.map((level) => {
    const g = {} as Record<(typeof PARTS)[number], number[]>;
    for (const part of PARTS) {
      g[part] = Array.from(level[part], (_, j) => {
        const saved = level[part][j]!;
        level[part][j] = saved + h;
        const up = meanLoss(levels, samples, heads);
        level[part][j] = saved - h;
        const down = meanLoss(levels, samples, heads);
        level[part][j] = saved;
        // The probe's true step is what float32 stored, not h.
        const stepUp = Math.fround(saved + h) - saved;
        const stepDown = saved - Math.fround(saved - h);
        return (up - down) / (stepUp + stepDown);
      });
    }
    return g;
  });
}

describe('head losses', () => {
  it('binary cross-entropy from logits is stable at extreme logits and right at 0', () => {
    expect(bceWithLogits(0, 1)).toBeCloseTo(Math.LN2, 12);
    expect(bceWithLogits(800, 1)).toBe(0);
    expect(bceWithLogits(-800, 1)).toBeCloseTo(800, 9);
    expect(bceWithLogits(-800, 0)).toBe(0);
  });

  it.each<[string, HeadsTrained]>([
    ['class scores', { cls: true, obj: false }],
    ['objectness', { cls: false, obj: true }],
    ['both', { cls: true, obj: true }],
  ])('its gradient matches finite differences (%s)', (_, heads) => {
    const { levels, samples } = fixture(7);
    const grads: HeadGradient[] = levels.map(zeroGradient);
    meanLoss(levels, samples, heads, undefined, grads);
    const numeric = numericGradient(levels, samples, heads);
    levels.forEach((_, l) => {
      for (const part of PARTS) {
        const analytic = Array.from(grads[l]![part]);
        numeric[l]![part].forEach((v, j) => expect(analytic[j]).toBeCloseTo(v, 4));
        const learns = part.startsWith('cls') ? heads.cls : heads.obj;
        // A part that does not learn gets no gradient at all; one that learns gets some.
        expect(analytic.some((v) => v !== 0)).toBe(learns);
      }
    });
  });

  it('averages over the chosen samples only', () => {
    const { levels, samples } = fixture(3);
    const heads = { cls: true, obj: true };
    const all = meanLoss(levels, samples, heads);
    const halves = [meanLoss(levels, samples, heads, [0, 1, 2]), meanLoss(levels, samples, heads, [3, 4, 5])];
    expect((halves[0]! + halves[1]!) / 2).toBeCloseTo(all, 12);
    expect(meanLoss(levels, samples, heads, [])).toBe(0);
  });

  it('negatives teach objectness only: a class-only head has no loss on them', () => {
    const { levels, samples } = fixture(5);
    expect(meanLoss(levels, samples, { cls: true, obj: false }, [2, 4])).toBe(0);
    expect(meanLoss(levels, samples, { cls: false, obj: true }, [2, 4])).toBeGreaterThan(0);
  });

  it('the pull toward the parent is λ/2·‖w − w₀‖² with gradient λ(w − w₀)', () => {
    const w = Float32Array.from([1, -2, 0.5]);
    const w0 = Float32Array.from([0, -1, 0.5]);
    const grad = new Float64Array(3);
    expect(anchorPenalty(w, w0, 4, grad)).toBeCloseTo((4 / 2) * (1 + 1), 12);
    expect(Array.from(grad)).toEqual([4, -4, 0]);
  });
});
