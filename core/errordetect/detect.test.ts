import { InputError } from '../errors';
import { iou, type Box } from '../geometry/boxes';
import {
  DEFAULT_ERROR_DETECTION_OPTIONS,
  findErrorCandidates,
  type ErrorCandidate,
  type ErrorDetectionFrame,
  type LabelledObject,
  type ModelPrediction,
} from './detect';
import { matchFrame } from './match';

const CAR = 3;
const TRUCK = 8;
const CONE = 30; // a class the model does not know

const label = (object_id: string, class_id: number, bbox: Box): LabelledObject => ({
  object_id,
  class_id,
  bbox,
});
const prediction = (
  prediction_id: string,
  class_id: number,
  conf: number,
  bbox: Box,
  probs?: Record<number, number>,
): ModelPrediction => ({ prediction_id, class_id, conf, bbox, ...(probs ? { probs } : {}) });
const frame = (
  frame_id: string,
  labels: LabelledObject[],
  predictions: ModelPrediction[] = [],
): ErrorDetectionFrame => ({ frame_id, width: 1920, height: 1080, labels, predictions });

/** A box of the given IoU with [0, 0, 100, 100], slid right: IoU = (100 − d) / (100 + d). */
const slid = (target: number): Box => {
  const d = (100 * (1 - target)) / (1 + target);
  return [d, 0, 100 + d, 100];
};
const BOX: Box = [0, 0, 100, 100];

/** Frames that calibrate the thresholds: n cars and n trucks each seen confidently. */
function calibration(n: number): ErrorDetectionFrame[] {
  return Array.from({ length: n }, (_, i) =>
    frame(
      `cal${i}`,
      [label(`c${i}`, CAR, [0, 0, 100, 100]), label(`t${i}`, TRUCK, [500, 0, 700, 150])],
      [
        prediction(`pc${i}`, CAR, 0.9, [2, 0, 100, 100], { [CAR]: 0.9, [TRUCK]: 0.1 }),
        prediction(`pt${i}`, TRUCK, 0.8, [500, 2, 700, 150], { [CAR]: 0.2, [TRUCK]: 0.8 }),
      ],
    ),
  );
}

const ofKind = <K extends ErrorCandidate['kind']>(cs: ErrorCandidate[], kind: K) =>
  cs.filter((c): c is Extract<ErrorCandidate, { kind: K }> => c.kind === kind);

describe('matchFrame', () => {
  it('keeps one tight pair over two loose ones, and drops pairs under the threshold', () => {
    // a–p 0.9; a–q 0.33 and b–p 0.38, which maximising the number of pairs would take instead.
    const labels = [{ bbox: BOX }, { bbox: [50, 0, 150, 100] as Box }];
    const predictions = [{ bbox: slid(0.9) }, { bbox: [-50, 0, 50, 100] as Box }];
    expect(iou(labels[0]!.bbox, predictions[1]!.bbox)).toBeGreaterThan(0.3);
    expect(iou(labels[1]!.bbox, predictions[0]!.bbox)).toBeGreaterThan(0.3);
    const m = matchFrame(labels, predictions, 0.3);
    expect([...m.predictionOfLabel]).toEqual([0, -1]);
    expect([...m.labelOfPrediction]).toEqual([0, -1]);
    expect(m.iouOfLabel[0]).toBeCloseTo(0.9, 9);
  });

  it('pairs nothing when every overlap is under the threshold', () => {
    const m = matchFrame([{ bbox: BOX }], [{ bbox: slid(0.25) }], 0.3);
    expect([...m.predictionOfLabel]).toEqual([-1]);
    expect(m.iouOfLabel[0]).toBe(0);
  });
});

describe('findErrorCandidates: label_flip (confident learning)', () => {
  const flipped = frame(
    'flip',
    [label('x', CAR, BOX)],
    [prediction('px', TRUCK, 0.85, slid(0.9), { [CAR]: 0.1, [TRUCK]: 0.85 })],
  );

  it('takes per-class thresholds as the mean normalised probability over paired labels of the class', () => {
    const byClass = (frames: ErrorDetectionFrame[]) =>
      Object.fromEntries(findErrorCandidates(frames).class_thresholds.map((t) => [t.class_id, t]));
    // car labels at 0.9/(0.9+0.1), truck labels at 0.8/(0.2+0.8).
    expect(byClass(calibration(5))).toEqual({
      [CAR]: { class_id: CAR, threshold: expect.closeTo(0.9, 12), support: 5 },
      [TRUCK]: { class_id: TRUCK, threshold: expect.closeTo(0.8, 12), support: 5 },
    });
    // A flipped label counts toward the class it was given, as confident learning has it.
    expect(byClass([...calibration(5), flipped])[CAR]).toEqual({
      class_id: CAR,
      threshold: expect.closeTo((5 * 0.9 + 0.1 / 0.95) / 6, 12),
      support: 6,
    });
  });

  it('flags a label whose confident class differs, proposing that class, scored by the margin', () => {
    const result = findErrorCandidates([...calibration(5), flipped]);
    const flips = ofKind(result.candidates, 'label_flip');
    expect(flips).toHaveLength(1);
    const [flip] = flips;
    const pTruck = 0.85 / 0.95;
    const pCar = 0.1 / 0.95;
    expect(flip).toMatchObject({
      frame_id: 'flip',
      object_ids: ['x'],
      prediction_id: 'px',
      proposed: { action: 'relabel', class_id: TRUCK },
      evidence: { given_class_id: CAR, threshold_confident: expect.closeTo(0.8, 12) },
    });
    expect(flip!.evidence.p_confident).toBeCloseTo(pTruck, 12);
    expect(flip!.evidence.p_given).toBeCloseTo(pCar, 12);
    expect(flip!.score).toBeCloseTo(pTruck - pCar, 12);
    expect(flip!.evidence.iou).toBeCloseTo(0.9, 9);
    expect(result.confident_joint).toEqual([
      { given_class_id: CAR, confident_class_id: CAR, count: 5 },
      { given_class_id: CAR, confident_class_id: TRUCK, count: 1 },
      { given_class_id: TRUCK, confident_class_id: TRUCK, count: 5 },
    ]);
  });

  it('does not flag a label whose other class stays under that class threshold', () => {
    // The model leans truck (0.75 normalised) but trucks are labelled at 0.8 on average.
    const unsure = frame(
      'unsure',
      [label('y', CAR, BOX)],
      [prediction('py', TRUCK, 0.6, BOX, { [CAR]: 0.2, [TRUCK]: 0.6 })],
    );
    const result = findErrorCandidates([...calibration(5), unsure]);
    expect(ofKind(result.candidates, 'label_flip')).toEqual([]);
  });

  it('normalises independent sigmoid scores before comparing them with thresholds', () => {
    // 0.9 and 0.9 as sigmoids are 0.5 each once normalised: under both thresholds, no flip.
    const tied = frame(
      'tied',
      [label('z', CAR, BOX)],
      [prediction('pz', TRUCK, 0.9, BOX, { [CAR]: 0.9, [TRUCK]: 0.9 })],
    );
    expect(ofKind(findErrorCandidates([...calibration(5), tied]).candidates, 'label_flip')).toEqual([]);
  });

  it('reads a prediction without probs as conf on its class, the rest spread over the other classes', () => {
    const bare = frame('bare', [label('b', CAR, BOX)], [prediction('pb', TRUCK, 0.9, BOX)]);
    const [flip] = ofKind(findErrorCandidates([...calibration(5), bare]).candidates, 'label_flip');
    expect(flip!.evidence.p_confident).toBeCloseTo(0.9, 12);
    expect(flip!.evidence.p_given).toBeCloseTo(0.1, 12); // two classes known: car gets all the rest
  });

  it('gives a class without enough paired labels no threshold, so nothing is flipped to it', () => {
    const result = findErrorCandidates([...calibration(4), flipped]);
    expect(result.class_thresholds.find((t) => t.class_id === TRUCK)).toEqual({
      class_id: TRUCK,
      threshold: null,
      support: 4,
    });
    expect(ofKind(result.candidates, 'label_flip')).toEqual([]);
    expect(
      ofKind(
        findErrorCandidates([...calibration(4), flipped], { minClassSupport: 4 }).candidates,
        'label_flip',
      ),
    ).toHaveLength(1);
  });

  it('never flips a label of a class the model does not know, however sure the model is', () => {
    const cone = frame(
      'cone',
      [label('k', CONE, BOX)],
      [prediction('pk', CAR, 0.95, BOX, { [CAR]: 0.95, [TRUCK]: 0.01 })],
    );
    const result = findErrorCandidates([...calibration(5), cone]);
    expect(result.candidates.filter((c) => c.object_ids.includes('k'))).toEqual([]);
    expect(result.class_thresholds.map((t) => t.class_id)).toEqual([CAR, TRUCK]);
    // ...yet it is paired, so the car prediction on it is not a missing label.
    expect(ofKind(result.candidates, 'missing')).toEqual([]);
    expect(result.matched_labels).toBe(11);
  });
});

describe('findErrorCandidates: duplicate', () => {
  it('flags two labels of one class overlapping at the threshold, deleting the later when neither is paired', () => {
    const copy: Box = [1, 1, 101, 101];
    const result = findErrorCandidates([frame('d', [label('a', CAR, BOX), label('b', CAR, copy)])]);
    const [dup, ...rest] = ofKind(result.candidates, 'duplicate');
    expect(rest).toEqual([]);
    expect(dup).toMatchObject({
      frame_id: 'd',
      object_ids: ['a', 'b'],
      proposed: { action: 'delete', object_id: 'b' },
    });
    expect(dup!.score).toBeCloseTo(iou(BOX, copy), 12);
  });

  it('deletes the one with less evidence: the label its prediction did not pair with', () => {
    const result = findErrorCandidates([
      frame('d', [label('a', CAR, [2, 2, 102, 102]), label('b', CAR, BOX)], [prediction('p', CAR, 0.9, BOX)]),
    ]);
    const [dup] = ofKind(result.candidates, 'duplicate');
    expect(dup!.proposed).toEqual({ action: 'delete', object_id: 'a' });
    expect(dup!.evidence).toMatchObject({ kept_match_iou: 1, deleted_match_iou: 0 });
  });

  it('leaves labels of different classes, or overlapping under the threshold, alone', () => {
    const near = slid(0.8);
    const result = findErrorCandidates([
      frame('d', [label('a', CAR, BOX), label('b', TRUCK, [1, 1, 101, 101]), label('c', CAR, near)]),
    ]);
    expect(ofKind(result.candidates, 'duplicate')).toEqual([]);
    expect(
      ofKind(
        findErrorCandidates([frame('d', [label('a', CAR, BOX), label('c', CAR, near)])], {
          duplicateIou: 0.79,
        }).candidates,
        'duplicate',
      ),
    ).toHaveLength(1);
  });

  it('finds duplicates of classes the model does not know', () => {
    const result = findErrorCandidates([frame('d', [label('a', CONE, BOX), label('b', CONE, BOX)])]);
    expect(ofKind(result.candidates, 'duplicate')).toHaveLength(1);
  });
});

describe('findErrorCandidates: missing', () => {
  const far: Box = [1000, 500, 1100, 600];

  it('proposes a confident prediction that overlaps no label as a new label', () => {
    const result = findErrorCandidates([
      frame('m', [label('a', CAR, BOX)], [prediction('p', TRUCK, 0.8, far)]),
    ]);
    expect(ofKind(result.candidates, 'missing')).toEqual([
      {
        kind: 'missing',
        frame_id: 'm',
        object_ids: [],
        prediction_id: 'p',
        score: 0.8,
        proposed: { action: 'create', class_id: TRUCK, bbox: far },
        evidence: { conf: 0.8, max_label_iou: 0 },
      },
    ]);
  });

  it('ignores predictions under the conf threshold or overlapping a label', () => {
    const result = findErrorCandidates([
      frame(
        'm',
        [label('a', CAR, BOX)],
        [prediction('low', CAR, 0.4, far), prediction('over', CAR, 0.9, slid(0.22))],
      ),
    ]);
    expect(ofKind(result.candidates, 'missing')).toEqual([]);
    // A looser threshold lets the overlapping one through.
    const loose = findErrorCandidates(
      [frame('m', [label('a', CAR, BOX)], [prediction('over', CAR, 0.9, slid(0.22))])],
      { missingMaxIou: 0.25 },
    );
    expect(ofKind(loose.candidates, 'missing').map((c) => c.prediction_id)).toEqual(['over']);
  });

  it('proposes one label for several predictions on one unlabelled object, the most confident', () => {
    const result = findErrorCandidates([
      frame(
        'm',
        [],
        [prediction('car', CAR, 0.7, far), prediction('truck', TRUCK, 0.9, [1005, 500, 1100, 600])],
      ),
    ]);
    expect(ofKind(result.candidates, 'missing').map((c) => c.prediction_id)).toEqual(['truck']);
  });
});

describe('findErrorCandidates: bad_box', () => {
  it('moves a label to its same-class prediction when they overlap in the misaligned band', () => {
    const result = findErrorCandidates([
      frame('b', [label('a', CAR, BOX)], [prediction('p', CAR, 0.9, slid(0.5))]),
    ]);
    const [bad, ...rest] = ofKind(result.candidates, 'bad_box');
    expect(rest).toEqual([]);
    expect(bad).toMatchObject({
      frame_id: 'b',
      object_ids: ['a'],
      prediction_id: 'p',
      proposed: { action: 'move', bbox: slid(0.5) },
    });
    expect(bad!.evidence.iou).toBeCloseTo(0.5, 9);
    expect(bad!.score).toBeCloseTo((0.9 * 0.5) / 0.7, 9);
  });

  it('scores the band floor at the conf and falls with the IoU', () => {
    const at = (target: number) =>
      ofKind(
        findErrorCandidates([frame('b', [label('a', CAR, BOX)], [prediction('p', CAR, 0.8, slid(target))])])
          .candidates,
        'bad_box',
      )[0]!.score;
    expect(at(0.3 + 1e-9)).toBeCloseTo(0.8, 6);
    expect(at(0.4)).toBeGreaterThan(at(0.6));
  });

  it('leaves well-aligned boxes, other-class predictions and unconfident predictions alone', () => {
    const cases = [
      prediction('aligned', CAR, 0.9, slid(0.8)),
      prediction('other', TRUCK, 0.9, slid(0.5)),
      prediction('unsure', CAR, 0.4, slid(0.5)),
    ];
    for (const p of cases)
      expect(
        ofKind(findErrorCandidates([frame('b', [label('a', CAR, BOX)], [p])]).candidates, 'bad_box'),
      ).toEqual([]);
  });
});

describe('findErrorCandidates: the result', () => {
  const frames = [
    ...calibration(6),
    frame(
      'mixed',
      [label('a', CAR, BOX), label('b', CAR, [1, 1, 101, 101]), label('c', TRUCK, [400, 0, 500, 100])],
      [
        prediction('pa', CAR, 0.9, slid(0.9), { [CAR]: 0.9, [TRUCK]: 0.1 }),
        prediction('pc', CAR, 0.9, [440, 0, 540, 100], { [CAR]: 0.9, [TRUCK]: 0.05 }),
        prediction('new', TRUCK, 0.6, [900, 0, 1000, 100], { [CAR]: 0.1, [TRUCK]: 0.6 }),
      ],
    ),
  ];

  it('sorts candidates by score, highest first, each score in [0, 1]', () => {
    const { candidates } = findErrorCandidates(frames);
    expect(new Set(candidates.map((c) => c.kind))).toEqual(new Set(['label_flip', 'duplicate', 'missing']));
    for (let i = 1; i < candidates.length; i++)
      expect(candidates[i - 1]!.score).toBeGreaterThanOrEqual(candidates[i]!.score);
    for (const c of candidates) expect(c.score >= 0 && c.score <= 1).toBe(true);
  });

  it('is deterministic, and does not depend on where a frame sits among frames of other scores', () => {
    const once = findErrorCandidates(frames);
    expect(findErrorCandidates(frames)).toEqual(once);
    const reversed = findErrorCandidates([...frames].reverse());
    expect(new Set(reversed.candidates.map((c) => JSON.stringify(c)))).toEqual(
      new Set(once.candidates.map((c) => JSON.stringify(c))),
    );
    expect(reversed.class_thresholds).toEqual(once.class_thresholds);
  });

  it('counts labels, predictions and paired labels', () => {
    const r = findErrorCandidates(frames);
    expect({ labels: r.labels, predictions: r.predictions, matched_labels: r.matched_labels }).toEqual({
      labels: 15,
      predictions: 15,
      matched_labels: 14,
    });
  });

  it('documents its defaults', () => {
    expect(DEFAULT_ERROR_DETECTION_OPTIONS).toEqual({
      matchIou: 0.3,
      duplicateIou: 0.85,
      missingMinConf: 0.5,
      missingMaxIou: 0.2,
      badBoxMinConf: 0.5,
      badBoxMaxIou: 0.75,
      minClassSupport: 5,
    });
  });

  it('refuses options that contradict each other and ids that repeat', () => {
    expect(() => findErrorCandidates([], { missingMaxIou: 0.4 })).toThrow(InputError);
    expect(() => findErrorCandidates([], { badBoxMaxIou: 0.2 })).toThrow(InputError);
    expect(() => findErrorCandidates([], { duplicateIou: 1.5 })).toThrow(InputError);
    expect(() => findErrorCandidates([], { minClassSupport: 0 })).toThrow(InputError);
    expect(() => findErrorCandidates([frame('f', [label('a', CAR, BOX), label('a', CAR, BOX)])])).toThrow(
      /repeats an object_id/,
    );
    expect(() => findErrorCandidates([frame('f', []), frame('f', [])])).toThrow(/appears twice/);
    expect(() => findErrorCandidates([frame('f', [], [prediction('p', CAR, 1.2, BOX)])])).toThrow(
      /outside \[0, 1\]/,
    );
    const nan = prediction('p', CAR, 0.9, BOX, { [CAR]: Number.NaN });
    expect(() => findErrorCandidates([frame('f', [], [nan])])).toThrow(/class score/);
  });
});
