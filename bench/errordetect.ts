import { performance } from 'node:perf_hooks';
import {
  DEFAULT_ERROR_DETECTION_OPTIONS,
  ERROR_KINDS,
  findErrorCandidates,
  injectLabelErrors,
  matchFrame,
  scoreErrorDetection,
  synthesizeErrorDetectionSet,
  type ErrorCandidate,
  type ErrorDetectionFrame,
  type ErrorKind,
} from '../core/errordetect';
import { iou } from '../core/geometry/boxes';

/**
 * Label-error detection at scale: 20,000 synthetic frames (about 155,000 labels), errors injected
 * at 5% flips, 5% shifts, 5% deletions and 2% duplicates (core/errordetect/inject.ts), found by
 * findErrorCandidates and scored against the injected truth. Beside it, in the same run, a naive
 * detector on the same pairing of labels and predictions: a flip wherever the paired prediction's
 * class differs from the label's (no thresholds, no care for classes the model does not know), a
 * bad box wherever a pair overlaps under 0.75 (any class, any conf), a missing label for every
 * unpaired prediction (any conf, any overlap), a duplicate for any two labels of a class over 0.5.
 * Targets: the recall and precision floors below; detection of 20,000 frames under 5 s.
 */
const FRAMES = 20_000;
const TARGETS: Record<ErrorKind, { recall: number; precision: number }> = {
  label_flip: { recall: 0.7, precision: 0.85 },
  duplicate: { recall: 0.95, precision: 0.95 },
  missing: { recall: 0.7, precision: 0.8 },
  bad_box: { recall: 0.75, precision: 0.75 },
};
const TARGET_SECONDS = 5;

function naiveCandidates(frames: readonly ErrorDetectionFrame[]): ErrorCandidate[] {
  const { matchIou, badBoxMaxIou } = DEFAULT_ERROR_DETECTION_OPTIONS;
  const candidates: ErrorCandidate[] = [];
  for (const frame of frames) {
    const { frame_id, labels, predictions } = frame;
    const match = matchFrame(labels, predictions, matchIou);
    labels.forEach((label, li) => {
      const p = predictions[match.predictionOfLabel[li]!];
      if (!p) return;
      const overlap = match.iouOfLabel[li]!;
      const about = {
        frame_id,
        object_ids: [label.object_id],
        prediction_id: p.prediction_id,
        score: p.conf,
      };
      if (p.class_id !== label.class_id)
        candidates.push({
          ...about,
          kind: 'label_flip',
          proposed: { action: 'relabel', class_id: p.class_id },
          evidence: {
            given_class_id: label.class_id,
            p_given: 0,
            p_confident: p.conf,
            threshold_confident: 0,
            margin: p.conf,
            iou: overlap,
            conf: p.conf,
          },
        });
      if (overlap < badBoxMaxIou)
        candidates.push({
          ...about,
          kind: 'bad_box',
          proposed: { action: 'move', bbox: p.bbox },
          evidence: { iou: overlap, conf: p.conf },
        });
    });
    predictions.forEach((p, pi) => {
      if (match.labelOfPrediction[pi]! >= 0) return;
      candidates.push({
        kind: 'missing',
        frame_id,
        object_ids: [],
        prediction_id: p.prediction_id,
        score: p.conf,
        proposed: { action: 'create', class_id: p.class_id, bbox: p.bbox },
        evidence: { conf: p.conf, max_label_iou: 0 },
      });
    });
    for (let a = 0; a < labels.length; a++)
      for (let b = a + 1; b < labels.length; b++) {
        const overlap = iou(labels[a]!.bbox, labels[b]!.bbox);
        if (labels[a]!.class_id !== labels[b]!.class_id || overlap < 0.5) continue;
        candidates.push({
          kind: 'duplicate',
          frame_id,
          object_ids: [labels[a]!.object_id, labels[b]!.object_id],
          score: overlap,
          proposed: { action: 'delete', object_id: labels[b]!.object_id },
          evidence: { iou: overlap, kept_match_iou: 0, deleted_match_iou: 0 },
        });
      }
  }
  return candidates;
}

const timed = <T>(fn: () => T): [T, number] => {
  const t0 = performance.now();
  const out = fn();
  return [out, (performance.now() - t0) / 1000];
};
const f3 = (x: number | null) => (x === null ? '  —  ' : x.toFixed(3));
const f1 = (r: number | null, p: number | null) => (r && p ? (2 * r * p) / (r + p) : null);

export async function run(): Promise<void> {
  const [set, synthSeconds] = timed(() => synthesizeErrorDetectionSet({ seed: 20_250, frames: FRAMES }));
  const [injection, injectSeconds] = timed(() =>
    injectLabelErrors(set.frames, { seed: 20_251, flipClasses: set.model_class_ids }),
  );
  const [result, detectSeconds] = timed(() => findErrorCandidates(injection.frames));
  const [naive, naiveSeconds] = timed(() => naiveCandidates(injection.frames));
  const score = scoreErrorDetection(result.candidates, injection.truth);
  const baseline = scoreErrorDetection(naive, injection.truth);

  console.log(
    `${FRAMES} frames, ${result.labels} labels, ${result.predictions} predictions, ${result.matched_labels} paired; ` +
      `synthesis ${synthSeconds.toFixed(2)} s, injection ${injectSeconds.toFixed(2)} s`,
  );
  for (const kind of ERROR_KINDS) {
    const s = score[kind];
    const b = baseline[kind];
    const t = TARGETS[kind];
    console.log(
      `${kind.padEnd(11)} injected ${String(s.injected).padStart(5)} flagged ${String(s.flagged).padStart(5)} | ` +
        `recall ${f3(s.recall)} (target ≥ ${t.recall.toFixed(2)}, naive ${f3(b.recall)}) ` +
        `precision ${f3(s.precision)} (target ≥ ${t.precision.toFixed(2)}, naive ${f3(b.precision)} of ${b.flagged}) ` +
        `F1 ${f3(f1(s.recall, s.precision))} (naive ${f3(f1(b.recall, b.precision))}) | ` +
        `right fix ${f3(s.found ? s.fixes_correct / s.found : null)}`,
    );
  }
  console.log(
    `detection ${detectSeconds.toFixed(2)} s (target < ${TARGET_SECONDS} s; naive ${naiveSeconds.toFixed(2)} s), ` +
      `${Math.round(result.labels / detectSeconds)} labels/s`,
  );
}
