import { InputError } from '../errors';
import { iou, type Box } from '../geometry/boxes';
import type { ErrorCandidate, LabelledFrame } from './detect';
import { DUPLICATE_JITTER, injectLabelErrors, scoreErrorDetection, type InjectionTruth } from './inject';
import { synthesizeErrorDetectionSet } from './synthetic';

const clean = synthesizeErrorDetectionSet({ seed: 3, frames: 400 });
const labelCount = clean.frames.reduce((n, f) => n + f.labels.length, 0);

describe('injectLabelErrors', () => {
  const injection = injectLabelErrors(clean.frames, { seed: 5, flipClasses: clean.model_class_ids });
  const { truth } = injection;
  const labelsOf = (frames: readonly LabelledFrame[]) =>
    new Map(frames.flatMap((f) => f.labels.map((l) => [`${f.frame_id}/${l.object_id}`, l] as const)));
  const before = labelsOf(clean.frames);
  const after = labelsOf(injection.frames);

  it('is seeded: one seed gives one corruption, another seed another', () => {
    expect(injectLabelErrors(clean.frames, { seed: 5, flipClasses: clean.model_class_ids })).toEqual(
      injection,
    );
    expect(
      injectLabelErrors(clean.frames, { seed: 6, flipClasses: clean.model_class_ids }).truth,
    ).not.toEqual(truth);
  });

  it('corrupts about the asked share of labels of each kind', () => {
    // Binomial(n, p) within 4.5 standard deviations; flips only reach the model's classes (90%).
    const near = (count: number, n: number, p: number) =>
      expect(Math.abs(count - n * p)).toBeLessThan(4.5 * Math.sqrt(n * p * (1 - p)));
    near(truth.flips.length, labelCount, 0.05 * 0.9);
    near(truth.shifts.length, labelCount, 0.05);
    near(truth.deletes.length, labelCount, 0.05);
    near(truth.duplicates.length, labelCount, 0.02);
    const changed = truth.flips.length + truth.shifts.length + truth.deletes.length;
    expect(after.size).toBe(labelCount - truth.deletes.length + truth.duplicates.length);
    const untouched = [...before].filter(([key, l]) => after.get(key) === l).length;
    expect(untouched).toBe(labelCount - changed);
  });

  it('flips a label within flipClasses to another of them', () => {
    const known = new Set(clean.model_class_ids);
    for (const f of truth.flips) {
      expect(known.has(f.from_class_id) && known.has(f.to_class_id)).toBe(true);
      expect(f.to_class_id).not.toBe(f.from_class_id);
      expect(before.get(`${f.frame_id}/${f.object_id}`)!.class_id).toBe(f.from_class_id);
      expect(after.get(`${f.frame_id}/${f.object_id}`)!.class_id).toBe(f.to_class_id);
    }
    expect(new Set(truth.flips.map((f) => f.to_class_id)).size).toBe(known.size);
  });

  it('shifts a box to the asked IoU with its original, recording the move', () => {
    for (const s of truth.shifts) {
      const moved = after.get(`${s.frame_id}/${s.object_id}`)!.bbox;
      expect(s.original_bbox).toEqual(before.get(`${s.frame_id}/${s.object_id}`)!.bbox);
      expect(iou(moved, s.original_bbox)).toBeCloseTo(s.iou, 12);
      expect(s.iou).toBeLessThanOrEqual(0.7 + 1e-9);
      expect(Math.hypot(s.dx, s.dy)).toBeGreaterThan(0);
    }
    // Only a box clipped at the frame's edge lands under the range.
    const inRange = truth.shifts.filter((s) => s.iou >= 0.4 - 1e-9).length;
    expect(inRange / truth.shifts.length).toBeGreaterThan(0.95);
  });

  it('deletes a label and keeps its class and box', () => {
    for (const d of truth.deletes) {
      expect(after.has(`${d.frame_id}/${d.object_id}`)).toBe(false);
      expect(before.get(`${d.frame_id}/${d.object_id}`)).toEqual({
        object_id: d.object_id,
        class_id: d.class_id,
        bbox: d.bbox,
      });
    }
  });

  it('appends a near-copy of a label under a new id', () => {
    const worst = (1 - 2 * DUPLICATE_JITTER) ** 2 / (1 + 2 * DUPLICATE_JITTER) ** 2;
    for (const d of truth.duplicates) {
      const copy = after.get(`${d.frame_id}/${d.object_id}`)!;
      const original = after.get(`${d.frame_id}/${d.original_id}`)!;
      expect(copy.class_id).toBe(original.class_id);
      expect(iou(copy.bbox, original.bbox)).toBeGreaterThanOrEqual(worst);
      const frame = injection.frames.find((f) => f.frame_id === d.frame_id)!;
      expect(frame.labels.findIndex((l) => l.object_id === d.object_id)).toBeGreaterThan(
        frame.labels.findIndex((l) => l.object_id === d.original_id),
      );
    }
  });

  it('keeps the rest of each frame and leaves the input as it was', () => {
    const snapshot = JSON.stringify(clean.frames);
    const again = injectLabelErrors(clean.frames, {
      seed: 9,
      flip: 0.3,
      shift: 0.3,
      delete: 0.3,
      duplicate: 0.1,
    });
    expect(JSON.stringify(clean.frames)).toBe(snapshot);
    expect(again.frames.map((f) => f.predictions)).toEqual(clean.frames.map((f) => f.predictions));
  });

  it('corrupts nothing at zero rates, and refuses rates over 1 in all', () => {
    const none = injectLabelErrors(clean.frames, { seed: 1, flip: 0, shift: 0, delete: 0, duplicate: 0 });
    expect(none.frames).toEqual(clean.frames);
    expect(() => injectLabelErrors(clean.frames, { seed: 1, flip: 0.5, shift: 0.5, delete: 0.1 })).toThrow(
      InputError,
    );
    expect(() => injectLabelErrors(clean.frames, { seed: 1.5 })).toThrow(InputError);
  });
});

describe('scoreErrorDetection', () => {
  const box: Box = [0, 0, 100, 100];
  const truth: InjectionTruth = {
    flips: [{ frame_id: 'f', object_id: 'a', from_class_id: 3, to_class_id: 8 }],
    shifts: [{ frame_id: 'f', object_id: 'b', original_bbox: box, dx: 40, dy: 0, iou: 0.43 }],
    deletes: [{ frame_id: 'f', object_id: 'c', class_id: 1, bbox: [500, 0, 600, 100] }],
    duplicates: [{ frame_id: 'g', object_id: 'd~dup', original_id: 'd' }],
  };
  const base = { frame_id: 'f', score: 0.5 };
  const flip = (object_id: string, class_id: number): ErrorCandidate => ({
    ...base,
    kind: 'label_flip',
    object_ids: [object_id],
    prediction_id: 'p',
    proposed: { action: 'relabel', class_id },
    evidence: {
      given_class_id: 8,
      p_given: 0.1,
      p_confident: 0.8,
      threshold_confident: 0.7,
      margin: 0.7,
      iou: 0.9,
      conf: 0.8,
    },
  });
  const missing = (bbox: Box, class_id = 1): ErrorCandidate => ({
    ...base,
    kind: 'missing',
    object_ids: [],
    prediction_id: 'p',
    proposed: { action: 'create', class_id, bbox },
    evidence: { conf: 0.9, max_label_iou: 0 },
  });
  const badBox = (bbox: Box): ErrorCandidate => ({
    ...base,
    kind: 'bad_box',
    object_ids: ['b'],
    prediction_id: 'p',
    proposed: { action: 'move', bbox },
    evidence: { iou: 0.5, conf: 0.9 },
  });
  const duplicate = (frame_id: string, ids: string[], deleted: string): ErrorCandidate => ({
    frame_id,
    score: 0.9,
    kind: 'duplicate',
    object_ids: ids,
    proposed: { action: 'delete', object_id: deleted },
    evidence: { iou: 0.95, kept_match_iou: 0.9, deleted_match_iou: 0 },
  });

  it('finds a flip by a label_flip on the flipped label, counting the right class as its fix', () => {
    const s = scoreErrorDetection([flip('a', 3), flip('z', 3)], truth).label_flip;
    expect(s).toEqual({
      injected: 1,
      found: 1,
      recall: 1,
      flagged: 2,
      true_positives: 1,
      precision: 0.5,
      fixes_correct: 1,
    });
    expect(scoreErrorDetection([flip('a', 6)], truth).label_flip.fixes_correct).toBe(0);
  });

  it('finds a deletion by a missing whose box has IoU ≥ 0.5 with the deleted box', () => {
    const near = missing([530, 0, 630, 100]); // IoU 70/130 ≈ 0.54
    const far = missing([560, 0, 660, 100]); // IoU 40/160 = 0.25
    expect(scoreErrorDetection([near, far], truth).missing).toMatchObject({
      found: 1,
      flagged: 2,
      true_positives: 1,
      fixes_correct: 1,
    });
    expect(scoreErrorDetection([{ ...near, frame_id: 'g' }], truth).missing.found).toBe(0);
    expect(scoreErrorDetection([missing([530, 0, 630, 100], 3)], truth).missing).toMatchObject({
      found: 1,
      fixes_correct: 0,
    });
  });

  it('finds a shift by a bad_box on the label, its fix right when the box returns close to the original', () => {
    expect(scoreErrorDetection([badBox([5, 0, 105, 100])], truth).bad_box).toMatchObject({
      found: 1,
      fixes_correct: 1,
    });
    expect(scoreErrorDetection([badBox([30, 0, 130, 100])], truth).bad_box).toMatchObject({
      found: 1,
      fixes_correct: 0,
    });
  });

  it('finds a duplicate by a duplicate candidate naming the copy', () => {
    expect(scoreErrorDetection([duplicate('g', ['d', 'd~dup'], 'd')], truth).duplicate).toMatchObject({
      found: 1,
      true_positives: 1,
      fixes_correct: 1,
    });
    expect(scoreErrorDetection([duplicate('g', ['d', 'e'], 'e')], truth).duplicate).toMatchObject({
      found: 0,
      flagged: 1,
    });
  });

  it('does not credit a candidate of one kind with an error of another', () => {
    const s = scoreErrorDetection([{ ...flip('b', 3) }], truth);
    expect(s.label_flip).toMatchObject({ found: 0, true_positives: 0, precision: 0 });
    expect(s.bad_box).toMatchObject({ found: 0, flagged: 0, recall: 0, precision: null });
  });

  it('leaves recall null with nothing injected', () => {
    const s = scoreErrorDetection([], { flips: [], shifts: [], deletes: [], duplicates: [] });
    expect(s.missing).toEqual({
      injected: 0,
      found: 0,
      recall: null,
      flagged: 0,
      true_positives: 0,
      precision: null,
      fixes_correct: 0,
    });
  });
});
