import {
  addRelabelTally,
  countDecision,
  decideRelabel,
  emptyRelabelTally,
  RELABEL_FAILURES_KEPT,
} from './decide';

const rule = { minScore: 0.5, minMargin: 0.1 };
const known = new Set(['car', 'van', 'truck', 'bus']);
const c = (className: string, score: number) => ({ className, score, iou: 0.8 });

describe('decideRelabel', () => {
  it('moves an object to a confident other class the ontology knows', () => {
    expect(decideRelabel('car', [c('van', 0.82)], known, rule)).toEqual({
      move: true,
      from: 'car',
      to: 'van',
      score: 0.82,
      own_score: null,
    });
  });

  it('keeps an object the classifier agrees with, even when it also sees another class', () => {
    expect(decideRelabel('car', [c('car', 0.9), c('van', 0.85)], known, rule)).toEqual({
      move: false,
      reason: 'agrees',
    });
  });

  it('keeps an object when nothing was detected on its box', () => {
    expect(decideRelabel('car', [], known, rule)).toEqual({ move: false, reason: 'no_detection' });
  });

  it('keeps an object when the best class is under min_score (the bound itself moves)', () => {
    expect(decideRelabel('car', [c('van', 0.49)], known, rule)).toEqual({
      move: false,
      reason: 'below_min_score',
    });
    expect(decideRelabel('car', [c('van', 0.5)], known, rule).move).toBe(true);
  });

  it('keeps a near tie with its own class as ambiguous, and moves a clear lead with the own score named', () => {
    expect(decideRelabel('car', [c('van', 0.7), c('car', 0.65)], known, rule)).toEqual({
      move: false,
      reason: 'ambiguous',
    });
    expect(decideRelabel('car', [c('van', 0.8), c('car', 0.6)], known, rule)).toEqual({
      move: true,
      from: 'car',
      to: 'van',
      score: 0.8,
      own_score: 0.6,
    });
  });

  it('never moves to a class the ontology lacks', () => {
    expect(decideRelabel('car', [c('kite', 0.95)], known, rule)).toEqual({
      move: false,
      reason: 'unknown_class',
    });
  });
});

describe('relabel tally', () => {
  it('counts moves by pair and kept objects by reason, and adds pages without losing counts', () => {
    const a = emptyRelabelTally();
    countDecision(a, { move: true, from: 'car', to: 'van', score: 0.9, own_score: null });
    countDecision(a, { move: false, reason: 'agrees' });
    const b = emptyRelabelTally();
    countDecision(b, { move: true, from: 'car', to: 'van', score: 0.7, own_score: null });
    countDecision(b, { move: true, from: 'bus', to: 'truck', score: 0.7, own_score: null });
    b.frames_checked = 2;
    const sum = addRelabelTally(a, b);
    expect(sum.objects_checked).toBe(4);
    expect(sum.objects_relabelled).toBe(3);
    expect(sum.moves).toEqual({ 'car→van': 2, 'bus→truck': 1 });
    expect(sum.kept).toEqual({ agrees: 1 });
    expect(sum.frames_checked).toBe(2);
  });

  it('keeps only the first failures', () => {
    const many = emptyRelabelTally();
    many.failures = Array.from({ length: RELABEL_FAILURES_KEPT }, (_, i) => ({
      frame_id: `f${i}`,
      reason: 'x',
    }));
    const more = { ...emptyRelabelTally(), failures: [{ frame_id: 'late', reason: 'y' }] };
    expect(addRelabelTally(many, more).failures).toHaveLength(RELABEL_FAILURES_KEPT);
    expect(addRelabelTally(many, more).failures.at(-1)!.frame_id).toBe(`f${RELABEL_FAILURES_KEPT - 1}`);
  });
});
