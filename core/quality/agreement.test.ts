import fs from 'node:fs';
import path from 'node:path';
import { InputError } from '../errors';
import {
  type AgreementAnnotation,
  type AgreementIn,
  cohenKappa,
  computeAgreement,
  fleissKappa,
  krippendorffAlphaNominal,
  matchAnnotations,
} from './agreement';

// Reference numbers: tools/reference/stats_reference.py (sklearn, statsmodels, krippendorff, scipy's
// linear_sum_assignment; units rebuilt in Python from the raw annotations).
const fixture = (name: string) => JSON.parse(fs.readFileSync(path.join(__dirname, 'fixtures', name), 'utf8'));
const inputs: Record<string, AgreementIn> = fixture('agreement.input.json');
const references: Record<string, any> = fixture('agreement.reference.json').cases;

// Sums and means of IoUs are added in a different order than numpy's, so allow a few ulps.
const TOL = 1e-9;
function expectClose(actual: number | null, expected: number | null): void {
  if (expected === null) expect(actual).toBeNull();
  else {
    expect(actual).not.toBeNull();
    expect(Math.abs(actual! - expected)).toBeLessThanOrEqual(TOL);
  }
}

/** What the Python reference calls a unit member: annotator|class|box to 6 decimals. */
const describe_ = (a: AgreementAnnotation) =>
  `${a.annotator}|${a.class}|${a.bbox.map((v) => v.toFixed(6)).join(',')}`;
function unitDescriptions(input: AgreementIn): string[][] {
  const sortText = (x: string[], y: string[]) => (JSON.stringify(x) < JSON.stringify(y) ? -1 : 1);
  return matchAnnotations(input)
    .units.map((u) => u.members.map((i) => describe_(input.annotations[i]!)).sort())
    .sort(sortText);
}

describe('computeAgreement against the reference implementations', () => {
  it.each(Object.keys(inputs))('%s', (name) => {
    const input = inputs[name]!;
    const ref = references[name];
    const report = computeAgreement(input);
    expect(report.counts).toEqual(ref.counts);
    expectClose(report.class_agreement.fleiss_kappa, ref.fleiss_kappa);
    expectClose(report.class_agreement.krippendorff_alpha, ref.krippendorff_alpha);
    expectClose(report.localisation.mean_iou, ref.mean_iou);
    expect(report.annotators).toEqual(ref.annotators);
    expect(report.pairs).toHaveLength(ref.pairs.length);
    report.pairs.forEach((pair, i) => {
      const r = ref.pairs[i];
      expect({ annotators: pair.annotators, matches: pair.matches, unmatched: pair.unmatched }).toEqual({
        annotators: r.annotators,
        matches: r.matches,
        unmatched: r.unmatched,
      });
      expectClose(pair.observed_agreement, r.observed_agreement);
      expectClose(pair.cohen_kappa, r.cohen_kappa);
      expectClose(pair.mean_iou, r.mean_iou);
    });
  });

  it.each(Object.keys(inputs))('%s: the same units as the independent Python build', (name) => {
    const sortText = (x: string[], y: string[]) => (JSON.stringify(x) < JSON.stringify(y) ? -1 : 1);
    expect(unitDescriptions(inputs[name]!)).toEqual([...references[name].units].sort(sortText));
  });

  it('the fixtures exercise what they claim', () => {
    expect(references.crowded.greedy_differs).toBeGreaterThan(0);
    expect(references.degenerate.pairs[0].cohen_kappa).toBeNull();
    expect(references.degenerate.pairs[0].observed_agreement).toBe(1);
    expect(references.degenerate.counts.complete_units).toBe(0);
    // The chain in three-annotators f3 is split: one unit of three and C's other object alone.
    const f3 = matchAnnotations(inputs['three-annotators']!).units.filter((u) => u.frame_id === 'f3');
    expect(f3.map((u) => u.members.length).sort()).toEqual([1, 3]);
  });
});

const box = (
  annotator: string,
  cls: string,
  bbox: [number, number, number, number],
  frame_id = 'f',
): AgreementAnnotation => ({
  annotator,
  frame_id,
  class: cls,
  bbox,
});

describe('matching', () => {
  it('matches optimally where greedy would strand an object', () => {
    // Greedy takes a1-b1 (0.67) and leaves a2-b2 (0.05) under the threshold; the optimum pairs a1-b2 (0.54) and a2-b1 (0.43).
    const annotations = [
      box('a', 'car', [0, 0, 10, 10]),
      box('a', 'car', [6, 0, 16, 10]),
      box('b', 'car', [2, 0, 12, 10]),
      box('b', 'car', [-3, 0, 7, 10]),
    ];
    const { pairs } = matchAnnotations({ annotations, iou_thr: 0.4 });
    expect(pairs[0]!.matches.map((m) => [m.a, m.b]).sort()).toEqual([
      [0, 3],
      [1, 2],
    ]);
  });

  it('breaks an exact IoU tie in favour of the same class', () => {
    const annotations = [
      box('a', 'truck', [0, 0, 10, 10]),
      box('a', 'car', [0, 0, 10, 10]),
      box('b', 'car', [0, 0, 10, 10]),
    ];
    const report = computeAgreement({ annotations });
    expect(report.pairs[0]!.observed_agreement).toBe(1);
  });

  it('never matches below the threshold', () => {
    const annotations = [box('a', 'car', [0, 0, 10, 10]), box('b', 'car', [5, 0, 15, 10])];
    expect(computeAgreement({ annotations, iou_thr: 0.34 }).counts.matches).toBe(0);
    expect(computeAgreement({ annotations, iou_thr: 0.33 }).counts.matches).toBe(1);
  });

  it('does not depend on the order of the input', () => {
    for (const name of Object.keys(inputs)) {
      const input = inputs[name]!;
      // A fixed scramble: reversed, then every 7th element first.
      const reversed = [...input.annotations].reverse();
      const scrambled = [
        ...reversed.filter((_, i) => i % 7 === 0),
        ...reversed.filter((_, i) => i % 7 !== 0),
      ];
      const again = { ...input, annotations: scrambled };
      expect(computeAgreement(again)).toEqual(computeAgreement(input));
      expect(unitDescriptions(again)).toEqual(unitDescriptions(input));
    }
  });

  it('refuses fewer than two annotators, a threshold outside (0, 1] and a box that is not finite', () => {
    const one = [box('a', 'car', [0, 0, 10, 10]), box('a', 'car', [20, 0, 30, 10], 'g')];
    expect(() => computeAgreement({ annotations: one })).toThrow(InputError);
    expect(() => computeAgreement({ annotations: [] })).toThrow(InputError);
    const two = [...one, box('b', 'car', [0, 0, 10, 10])];
    expect(() => computeAgreement({ annotations: two, iou_thr: 0 })).toThrow(InputError);
    expect(() => computeAgreement({ annotations: two, iou_thr: 1.5 })).toThrow(InputError);
    expect(() => computeAgreement({ annotations: [...two, box('b', 'car', [0, 0, NaN, 10])] })).toThrow(
      InputError,
    );
  });
});

describe('agreement coefficients', () => {
  it("Cohen's kappa: textbook value, and null where sklearn gives NaN", () => {
    // 50 items: 20 yes/yes, 5 yes/no, 10 no/yes, 15 no/no → po 0.7, pe 0.5, kappa 0.4.
    const first = [...Array(25).fill('yes'), ...Array(25).fill('no')];
    const second = [
      ...Array(20).fill('yes'),
      ...Array(5).fill('no'),
      ...Array(10).fill('yes'),
      ...Array(15).fill('no'),
    ];
    expect(cohenKappa(first, second)).toBeCloseTo(0.4, 12);
    expect(cohenKappa(['car', 'car'], ['car', 'car'])).toBeNull();
    expect(cohenKappa([], [])).toBeNull();
  });

  it("Fleiss' kappa and Krippendorff's alpha: perfect agreement is 1, one class is undefined", () => {
    expect(
      fleissKappa([
        ['a', 'a', 'a'],
        ['b', 'b', 'b'],
      ]),
    ).toBe(1);
    expect(fleissKappa([['a', 'a']])).toBeNull();
    expect(() => fleissKappa([['a', 'a'], ['a']])).toThrow(InputError);
    expect(krippendorffAlphaNominal([['a', 'a'], ['b', 'b', 'b'], ['c']])).toBe(1);
    expect(krippendorffAlphaNominal([['a', 'a'], ['b']])).toBeNull();
    expect(krippendorffAlphaNominal([['a'], ['b']])).toBeNull();
  });

  it('keeps numeric and string labels apart', () => {
    // Were 1 and '1' one label, both raters would use a single class and kappa would be undefined.
    expect(cohenKappa([1, 1], ['1', '1'])).toBe(0);
  });
});
