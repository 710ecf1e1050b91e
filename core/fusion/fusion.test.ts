import { applyVerifierAnswer, entropyBits, fuseDetections, ranPaths, type PathRun } from '.';
import type { Box } from '../geometry';

const box = (x1: number, y1: number, x2: number, y2: number): Box => [x1, y1, x2, y2];

describe('weighted box fusion', () => {
  it('merges what two paths both saw: score-weighted box, full agreement, zero entropy', () => {
    const runs: PathRun[] = [
      {
        path: 'closed_set',
        status: 'ran',
        detections: [{ box: box(0, 0, 100, 100), className: 'car', score: 0.9 }],
      },
      {
        path: 'open_vocab',
        status: 'ran',
        detections: [
          { box: box(10, 0, 110, 100), className: 'car', score: 0.3, mask: [[10, 0, 110, 0, 110, 100]] },
        ],
      },
    ];
    const [car, ...rest] = fuseDetections(runs, { iouThreshold: 0.55 });
    expect(rest).toHaveLength(0);
    expect(car!.box[0]).toBeCloseTo((0 * 0.9 + 10 * 0.3) / 1.2);
    expect(car!.box[2]).toBeCloseTo((100 * 0.9 + 110 * 0.3) / 1.2);
    expect(car!.paths).toEqual(['closed_set', 'open_vocab']);
    expect(car!.agreement).toBe(1);
    expect(car!.entropy).toBe(0);
    expect(car!.conf).toBeCloseTo(0.6);
    expect(car!.rawConfidences).toEqual({
      closed_set: { score: 0.9, class_name: 'car' },
      open_vocab: { score: 0.3, class_name: 'car' },
    });
    expect(car!.mask).toEqual([[10, 0, 110, 0, 110, 100]]);
  });

  it('keeps an object one path alone saw with half agreement and half weight', () => {
    const runs: PathRun[] = [
      {
        path: 'closed_set',
        status: 'ran',
        detections: [{ box: box(0, 0, 100, 100), className: 'car', score: 0.8 }],
      },
      {
        path: 'open_vocab',
        status: 'ran',
        detections: [{ box: box(300, 0, 400, 100), className: 'person', score: 0.6 }],
      },
    ];
    const objs = fuseDetections(runs, { iouThreshold: 0.55 });
    expect(objs).toHaveLength(2);
    for (const o of objs) {
      expect(o.agreement).toBe(0.5);
      expect(o.pathsRan).toEqual(['closed_set', 'open_vocab']);
    }
    expect(objs[0]!.conf).toBeCloseTo(0.4);
  });

  it('measures class disagreement as entropy and picks the heavier class', () => {
    const runs: PathRun[] = [
      {
        path: 'closed_set',
        status: 'ran',
        detections: [{ box: box(0, 0, 100, 100), className: 'car', score: 0.5 }],
      },
      {
        path: 'open_vocab',
        status: 'ran',
        detections: [{ box: box(0, 0, 100, 100), className: 'truck', score: 0.5 }],
      },
    ];
    const [o] = fuseDetections(runs, { iouThreshold: 0.55 });
    expect(o!.entropy).toBeCloseTo(1);
    expect(o!.className).toBe('car'); // tie broken by name, deterministically
    expect(o!.agreement).toBe(1);
    expect(entropyBits({ a: 0.25, b: 0.25, c: 0.25, d: 0.25 })).toBeCloseTo(2);
  });

  it('uses only the paths that ran and invents nothing for a refused one', () => {
    const runs: PathRun[] = [
      {
        path: 'closed_set',
        status: 'ran',
        detections: [{ box: box(0, 0, 100, 100), className: 'car', score: 0.9 }],
      },
      { path: 'open_vocab', status: 'refused', reason: 'not configured' },
    ];
    const [o] = fuseDetections(runs, { iouThreshold: 0.55 });
    expect(o!.pathsRan).toEqual(['closed_set']);
    expect(o!.conf).toBeCloseTo(0.9);
    expect(o!.agreement).toBe(1);
    expect(ranPaths(runs)).toEqual(['closed_set']);
    expect(
      fuseDetections([{ path: 'closed_set', status: 'failed', reason: 'x' }], { iouThreshold: 0.55 }),
    ).toEqual([]);
  });

  it('does not merge two same-class detections of one path', () => {
    const runs: PathRun[] = [
      {
        path: 'closed_set',
        status: 'ran',
        detections: [
          { box: box(0, 0, 100, 100), className: 'car', score: 0.9 },
          { box: box(5, 0, 105, 100), className: 'car', score: 0.5 },
        ],
      },
    ];
    expect(fuseDetections(runs, { iouThreshold: 0.55 })).toHaveLength(2);
  });
});

describe('verifier answers', () => {
  const [base] = fuseDetections(
    [
      {
        path: 'closed_set',
        status: 'ran',
        detections: [{ box: box(0, 0, 10, 10), className: 'car', score: 0.6 }],
      },
    ],
    { iouThreshold: 0.55 },
  );

  it('confirm adds a vote and raises confidence; reject lowers agreement and confidence', () => {
    const confirmed = applyVerifierAnswer(
      base!,
      { verdict: 'confirm', className: 'car', confidence: 0.9, rationale: 'a car' },
      'vlm',
    );
    expect(confirmed.paths).toEqual(['closed_set', 'verifier']);
    expect(confirmed.agreement).toBe(1);
    expect(confirmed.conf).toBeCloseTo(0.75);
    expect(confirmed.verifier).toMatchObject({
      model: 'vlm',
      verdict: 'confirm',
      asked: { class_name: 'car', conf: 0.6 },
    });
    const rejected = applyVerifierAnswer(
      base!,
      { verdict: 'reject', className: null, confidence: 0.9, rationale: null },
      'vlm',
    );
    expect(rejected.agreement).toBe(0.5);
    expect(rejected.conf).toBeCloseTo(0.3);
    expect(rejected.pathsRan).toEqual(['closed_set', 'verifier']);
  });

  it('relabel votes for another class, which shows as entropy', () => {
    const relabelled = applyVerifierAnswer(
      base!,
      { verdict: 'relabel', className: 'truck', confidence: 0.9, rationale: null },
      'vlm',
    );
    expect(relabelled.className).toBe('truck');
    expect(relabelled.entropy).toBeGreaterThan(0.9);
  });
});
