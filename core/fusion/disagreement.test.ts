import { disagreementOf, disagreementScore, type FusionRecord } from './disagreement';

const agreed: FusionRecord = {
  agreement: 1,
  entropy: 0,
  classDistribution: { car: 1 },
  pathsRan: ['closed_set', 'open_vocab'],
  paths: ['closed_set', 'open_vocab'],
  verifierVerdict: null,
};

describe('disagreementOf', () => {
  it('finds none where every path that ran proposed the same class', () => {
    expect(disagreementOf(agreed)).toEqual({ disagreement: 0, kinds: [], silent: [] });
    // One path alone cannot disagree with itself.
    expect(
      disagreementOf({ ...agreed, agreement: 1, pathsRan: ['closed_set'], paths: ['closed_set'] })
        .disagreement,
    ).toBe(0);
  });

  it('scales a class dispute by its maximum: an even split is 1', () => {
    expect(
      disagreementOf({ ...agreed, entropy: 1, classDistribution: { car: 0.5, truck: 0.5 } }),
    ).toMatchObject({ disagreement: 1, kinds: ['class_disagreement'] });
    const lopsided = disagreementOf({
      ...agreed,
      entropy: 0.47,
      classDistribution: { car: 0.9, truck: 0.1 },
    });
    expect(lopsided.disagreement).toBeCloseTo(0.47);
  });

  it('names the paths that ran and stayed silent, and the verifier’s dissent', () => {
    const d = disagreementOf({ ...agreed, agreement: 0.5, paths: ['closed_set'] });
    expect(d).toEqual({ disagreement: 0.5, kinds: ['path_missing'], silent: ['open_vocab'] });
    expect(disagreementOf({ ...agreed, verifierVerdict: 'reject' })).toMatchObject({
      disagreement: 1,
      kinds: ['verifier_rejected'],
    });
    expect(disagreementOf({ ...agreed, verifierVerdict: 'relabel' }).kinds).toEqual(['verifier_relabelled']);
    expect(disagreementOf({ ...agreed, verifierVerdict: 'confirm' }).disagreement).toBe(0);
  });

  it('ranks the same dispute higher on a rarer class', () => {
    const d = disagreementOf({ ...agreed, entropy: 1, classDistribution: { car: 0.5, truck: 0.5 } });
    expect(disagreementScore(d, 5, 1000)).toBeGreaterThan(disagreementScore(d, 500, 1000));
  });
});
