import {
  BACKGROUND,
  classFigures,
  confusionCells,
  confusionMembers,
  confusionTotals,
  matchFrame,
  type PredictionBox,
  type ReferenceBox,
} from './confusion';
import type { Box } from '../geometry/boxes';

const ref = (id: string, frame: string, cls: number, bbox: Box): ReferenceBox => ({
  object_id: id,
  frame_id: frame,
  class_id: cls,
  bbox,
});
const pred = (id: string, frame: string, cls: number, bbox: Box, conf = 0.9): PredictionBox => ({
  prediction_id: id,
  frame_id: frame,
  class_id: cls,
  conf,
  bbox,
});

describe('matchFrame', () => {
  it('pairs optimally where greedy would strand a reference', () => {
    // p0 overlaps both references, r0 slightly more; p1 overlaps only r0. Greedy (p0 first) takes r0
    // and strands r1; the optimum pairs p0–r1 and p1–r0.
    const refs = [ref('r0', 'f', 1, [0, 0, 10, 10]), ref('r1', 'f', 1, [2, 0, 12, 10])];
    const preds = [pred('p0', 'f', 1, [1, 0, 11, 10]), pred('p1', 'f', 1, [-2, 0, 8, 10])];
    const pairs = matchFrame(refs, preds, 0.5);
    expect(pairs.map(([r, p]) => [r, p])).toEqual([
      [0, 1],
      [1, 0],
    ]);
  });

  it('never pairs under the threshold and breaks IoU ties towards the same class', () => {
    expect(matchFrame([ref('r', 'f', 1, [0, 0, 10, 10])], [pred('p', 'f', 1, [6, 0, 16, 10])], 0.5)).toEqual(
      [],
    );
    // Two identical references of different classes, one prediction: the same-class one wins.
    const refs = [ref('a', 'f', 2, [0, 0, 10, 10]), ref('b', 'f', 1, [0, 0, 10, 10])];
    const pairs = matchFrame(refs, [pred('p', 'f', 1, [0, 0, 10, 10])], 0.5);
    expect(pairs).toEqual([[1, 0, 1]]);
  });
});

describe('confusion matrix', () => {
  const frames = ['f1', 'f2'];
  const refs = [
    ref('car1', 'f1', 3, [0, 0, 100, 100]),
    ref('bus1', 'f1', 6, [200, 0, 300, 100]),
    ref('car2', 'f2', 3, [0, 0, 50, 50]),
    ref('ped', 'f2', 1, [400, 400, 420, 460]),
  ];
  const preds = [
    pred('p-car', 'f1', 3, [2, 2, 100, 100]), // hit
    pred('p-truck', 'f1', 8, [200, 5, 300, 100]), // bus seen as truck
    pred('p-car2', 'f2', 3, [0, 0, 50, 48]), // hit
    pred('p-ghost', 'f2', 3, [600, 600, 700, 700]), // false detection
    pred('p-other', 'f9', 3, [0, 0, 1, 1]), // not a reference frame: ignored
  ];
  const members = confusionMembers(refs, preds, frames, 0.5);
  const cells = confusionCells(members);

  it('puts every box in exactly one cell, with a background row and column', () => {
    expect(cells).toEqual([
      { true_class_id: BACKGROUND, pred_class_id: 3, count: 1 },
      { true_class_id: 1, pred_class_id: BACKGROUND, count: 1 },
      { true_class_id: 3, pred_class_id: 3, count: 2 },
      { true_class_id: 6, pred_class_id: 8, count: 1 },
    ]);
    expect(members).toHaveLength(5);
    const confused = members.find((m) => m.true_class_id === 6)!;
    expect(confused).toMatchObject({ object_id: 'bus1', prediction_id: 'p-truck', bbox: [200, 5, 300, 100] });
    expect(confused.iou).toBeCloseTo(0.95, 6);
    const miss = members.find((m) => m.pred_class_id === BACKGROUND)!;
    expect(miss).toMatchObject({
      object_id: 'ped',
      prediction_id: null,
      bbox: [400, 400, 420, 460],
      iou: null,
    });
    const ghost = members.find((m) => m.true_class_id === BACKGROUND)!;
    expect(ghost).toMatchObject({ object_id: null, prediction_id: 'p-ghost', conf: 0.9 });
  });

  it('does not depend on the input order', () => {
    const again = confusionMembers([...refs].reverse(), [...preds].reverse(), frames, 0.5);
    expect(again).toEqual(members);
  });

  it('derives per-class precision and recall and the totals from the cells', () => {
    const figures = classFigures(cells);
    expect(figures.find((f) => f.class_id === 3)).toMatchObject({
      references: 2,
      predictions: 3,
      true_positives: 2,
      false_detections: 1,
      precision: 2 / 3,
      recall: 1,
    });
    expect(figures.find((f) => f.class_id === 6)).toMatchObject({
      references: 1,
      confused_as_other: 1,
      predictions: 0,
      precision: null,
      recall: 0,
    });
    expect(figures.find((f) => f.class_id === 8)).toMatchObject({
      predictions: 1,
      confused_from_other: 1,
      precision: 0,
      recall: null,
    });
    expect(confusionTotals(cells)).toEqual({
      references: 4,
      predictions: 4,
      matched: 3,
      true_positives: 2,
      class_confusions: 1,
      missed: 1,
      false_detections: 1,
    });
  });
});

describe('a pile of overlapping boxes', () => {
  it('is matched greedily past the optimal-component size, and says so', () => {
    const n = 160;
    const refs = Array.from({ length: n }, (_, i) =>
      ref(`r${i}`, 'f', 1, [i * 0.01, 0, 100 + i * 0.01, 100]),
    );
    const preds = Array.from({ length: n }, (_, i) =>
      pred(`p${i}`, 'f', 1, [i * 0.01, 0, 100 + i * 0.01, 100]),
    );
    const stats = { greedy_components: 0 };
    const members = confusionMembers(refs, preds, ['f'], 0.5, stats);
    expect(stats.greedy_components).toBe(1);
    expect(confusionTotals(confusionCells(members))).toMatchObject({ true_positives: n, missed: 0 });
    // Identical boxes pair with their twins (IoU 1 first).
    expect(members.every((m) => m.object_id!.slice(1) === m.prediction_id!.slice(1))).toBe(true);
  });
});
