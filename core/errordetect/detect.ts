import { InputError } from '../errors';
import { iou, nms, type Box } from '../geometry/boxes';
import { matchFrame, type FrameMatch } from './match';

/**
 * Likely label errors in human-labelled frames, found with a model's predictions on the same
 * frames. Four kinds, each with the fix a reviewer would apply:
 *
 * - `label_flip`: confident learning (Northcutt, Jiang and Chuang, "Confident Learning: Estimating
 *   Uncertainty in Dataset Labels", JAIR 2021). Labels are paired with predictions (matchFrame);
 *   for each class j the model knows, t_j is the mean predicted probability of j over paired labels
 *   whose given class is j (classes with fewer than `minClassSupport` such labels get no threshold
 *   and cannot be anyone's confident class). A paired label's confident class is, among the classes
 *   j with p_j ≥ t_j, the one of highest p_j; counting (given, confident) pairs is the confident
 *   joint, and every label off its diagonal is flagged, relabelled to its confident class. Score:
 *   the margin p_confident − p_given, floored at 0.
 * - `duplicate`: two labels of one class on one frame with IoU ≥ `duplicateIou`. The one with less
 *   evidence (a lower IoU with its paired prediction; none counts 0) is proposed for deletion, the
 *   later one on a tie. Score: their IoU.
 * - `missing`: a prediction with conf ≥ `missingMinConf` and IoU < `missingMaxIou` with every label,
 *   proposed as a new label. Several such predictions over one object (IoU ≥ MISSING_DEDUP_IOU)
 *   give one candidate, the most confident. Score: the conf.
 * - `bad_box`: a label paired with a prediction of the same class, conf ≥ `badBoxMinConf`, at an
 *   IoU under `badBoxMaxIou` (and, being paired, at least `matchIou`): moved to the prediction's
 *   box. Score: conf × (1 − IoU) / (1 − matchIou), which is conf at the band's floor.
 *
 * Probabilities. A prediction's `probs` are scores over the classes the model knows; YOLOX's are
 * independent sigmoids that need not sum to 1, so every vector is normalised to sum 1 over the
 * model's classes before thresholds or margins are taken (a class absent from `probs` scores 0).
 * A prediction without `probs` is read as conf on its class and the rest of the mass spread evenly
 * over the model's other classes. The classes the model knows are those its predictions name (a
 * `class_id` or a `probs` key); a label of any other class is still paired (it can block a
 * `missing` and be a `duplicate`) but never flipped, and since `bad_box` needs a prediction of the
 * label's class, duplicates are the only candidates such a label can get.
 *
 * Deterministic: candidates are built in input order (frame, then kind, then label or prediction)
 * and stably sorted by score, highest first.
 */
export const ERROR_KINDS = ['label_flip', 'duplicate', 'missing', 'bad_box'] as const;
export type ErrorKind = (typeof ERROR_KINDS)[number];

export interface LabelledObject {
  object_id: string;
  class_id: number;
  bbox: Box;
}

export interface ModelPrediction {
  prediction_id: string;
  /** The model's class (its argmax), as an ontology class id. */
  class_id: number;
  conf: number;
  bbox: Box;
  /** Class id → score over the classes the model knows; need not sum to 1. */
  probs?: Readonly<Record<number, number>>;
}

export interface LabelledFrame {
  frame_id: string;
  width: number;
  height: number;
  labels: readonly LabelledObject[];
}

export interface ErrorDetectionFrame extends LabelledFrame {
  predictions: readonly ModelPrediction[];
}

export interface ErrorDetectionOptions {
  /** Least IoU at which a label and a prediction are paired (class-agnostic). */
  matchIou: number;
  /** Least IoU between two labels of one class to call them duplicates. */
  duplicateIou: number;
  /** Least conf of a prediction proposed as a missing label. */
  missingMinConf: number;
  /** A missing label's prediction overlaps every label below this IoU (at most `matchIou`). */
  missingMaxIou: number;
  /** Least conf of the prediction a bad box is moved to. */
  badBoxMinConf: number;
  /** A paired label of the prediction's class under this IoU is misaligned (above `matchIou`). */
  badBoxMaxIou: number;
  /** Paired labels of a class needed before its confident-learning threshold is trusted. */
  minClassSupport: number;
}

/**
 * Defaults, and why: 0.3 pairs a label with a prediction of the same object even when one of the
 * two boxes is badly drawn, which is the floor of the bad-box band; 0.75 is its ceiling, above a
 * good detector's usual disagreement with a careful annotator (IoU 0.8–0.95); 0.85 for duplicates
 * sits above what two distinct objects reach side by side; a missing label overlaps every label
 * under 0.2, so neighbours in a crowd (0.05–0.3) do not hide one, while a prediction over a label
 * that is only badly drawn is not proposed as a second object; conf 0.5 is the detector's own operating point; 5 labels make a class threshold.
 */
export const DEFAULT_ERROR_DETECTION_OPTIONS: Readonly<ErrorDetectionOptions> = {
  matchIou: 0.3,
  duplicateIou: 0.85,
  missingMinConf: 0.5,
  missingMaxIou: 0.2,
  badBoxMinConf: 0.5,
  badBoxMaxIou: 0.75,
  minClassSupport: 5,
};

/** Missing-label predictions overlapping a more confident one this much are the same object. */
export const MISSING_DEDUP_IOU = 0.5;

interface CandidateBase {
  frame_id: string;
  /** The labels it is about, in frame order; empty for `missing`. */
  object_ids: string[];
  prediction_id?: string;
  /** In [0, 1]; higher is more likely an error. */
  score: number;
}

export interface LabelFlipCandidate extends CandidateBase {
  kind: 'label_flip';
  prediction_id: string;
  proposed: { action: 'relabel'; class_id: number };
  evidence: {
    given_class_id: number;
    /** Normalised probabilities of the given and the confident class. */
    p_given: number;
    p_confident: number;
    threshold_confident: number;
    margin: number;
    iou: number;
    conf: number;
  };
}

export interface DuplicateCandidate extends CandidateBase {
  kind: 'duplicate';
  proposed: { action: 'delete'; object_id: string };
  evidence: { iou: number; kept_match_iou: number; deleted_match_iou: number };
}

export interface MissingCandidate extends CandidateBase {
  kind: 'missing';
  prediction_id: string;
  proposed: { action: 'create'; class_id: number; bbox: Box };
  evidence: { conf: number; max_label_iou: number };
}

export interface BadBoxCandidate extends CandidateBase {
  kind: 'bad_box';
  prediction_id: string;
  proposed: { action: 'move'; bbox: Box };
  evidence: { iou: number; conf: number };
}

export type ErrorCandidate = LabelFlipCandidate | DuplicateCandidate | MissingCandidate | BadBoxCandidate;

/** A class's confident-learning threshold; null below `minClassSupport` paired labels. */
export interface ClassThreshold {
  class_id: number;
  threshold: number | null;
  /** Paired labels of this class. */
  support: number;
}

/** A non-zero cell of the confident joint. */
export interface ConfidentJointCell {
  given_class_id: number;
  confident_class_id: number;
  count: number;
}

export interface ErrorDetectionResult {
  candidates: ErrorCandidate[];
  /** The classes the model knows (named by its predictions), ascending, each with its threshold. */
  class_thresholds: ClassThreshold[];
  confident_joint: ConfidentJointCell[];
  labels: number;
  predictions: number;
  /** Labels paired with a prediction. */
  matched_labels: number;
}

/** cleanlab's slack on p_j ≥ t_j, so a class whose labels all score alike meets its own mean. */
const THRESHOLD_SLACK = 1e-9;

function resolveOptions(overrides: Partial<ErrorDetectionOptions>): ErrorDetectionOptions {
  const options = { ...DEFAULT_ERROR_DETECTION_OPTIONS, ...overrides };
  const fieldErrors: Array<{ field: string; message: string }> = [];
  for (const field of [
    'matchIou',
    'duplicateIou',
    'missingMinConf',
    'missingMaxIou',
    'badBoxMinConf',
    'badBoxMaxIou',
  ] as const) {
    const v = options[field];
    if (!(v >= 0 && v <= 1)) fieldErrors.push({ field, message: `must lie in [0, 1], got ${v}` });
  }
  if (!(options.matchIou > 0)) fieldErrors.push({ field: 'matchIou', message: 'must be above 0' });
  if (options.missingMaxIou > options.matchIou)
    fieldErrors.push({ field: 'missingMaxIou', message: 'must not exceed matchIou' });
  if (!(options.badBoxMaxIou > options.matchIou))
    fieldErrors.push({ field: 'badBoxMaxIou', message: 'must exceed matchIou' });
  if (!(Number.isInteger(options.minClassSupport) && options.minClassSupport >= 1))
    fieldErrors.push({ field: 'minClassSupport', message: 'must be an integer of at least 1' });
  if (fieldErrors.length) throw new InputError('invalid error-detection options', fieldErrors);
  return options;
}

/** Candidates name frames, labels and predictions by id, so each must be unique where it is. */
function checkInput(frames: readonly ErrorDetectionFrame[]): void {
  const frameIds = new Set<string>();
  for (const f of frames) {
    for (const p of f.predictions) {
      if (!(p.conf >= 0 && p.conf <= 1))
        throw new InputError(`prediction ${p.prediction_id} has conf ${p.conf} outside [0, 1]`);
      if (p.probs && !Object.values(p.probs).every((v) => v >= 0 && Number.isFinite(v)))
        throw new InputError(
          `prediction ${p.prediction_id} has a class score that is negative or not a number`,
        );
    }
    if (frameIds.has(f.frame_id)) throw new InputError(`frame ${f.frame_id} appears twice`);
    frameIds.add(f.frame_id);
    if (new Set(f.labels.map((l) => l.object_id)).size !== f.labels.length)
      throw new InputError(`frame ${f.frame_id} repeats an object_id`);
    if (new Set(f.predictions.map((p) => p.prediction_id)).size !== f.predictions.length)
      throw new InputError(`frame ${f.frame_id} repeats a prediction_id`);
  }
}

/** The classes the model knows, ascending: every class a prediction names. */
function modelClasses(frames: readonly ErrorDetectionFrame[]): number[] {
  const known = new Set<number>();
  for (const f of frames)
    for (const p of f.predictions) {
      known.add(p.class_id);
      if (p.probs) for (const key of Object.keys(p.probs)) known.add(Number(key));
    }
  return [...known].sort((a, b) => a - b);
}

/** A prediction's probabilities over the model's classes (by index), summing to 1. */
function classDistribution(p: ModelPrediction, indexOf: ReadonlyMap<number, number>): Float64Array {
  const k = indexOf.size;
  const dist = new Float64Array(k);
  if (p.probs) {
    let sum = 0;
    for (const [key, score] of Object.entries(p.probs)) {
      dist[indexOf.get(Number(key))!]! += score;
      sum += score;
    }
    if (sum > 0) {
      for (let j = 0; j < k; j++) dist[j]! /= sum;
      return dist;
    }
  }
  const own = indexOf.get(p.class_id)!;
  if (k === 1) {
    dist[own] = 1;
    return dist;
  }
  dist.fill((1 - p.conf) / (k - 1));
  dist[own] = p.conf;
  return dist;
}

interface PairedLabel {
  frame: ErrorDetectionFrame;
  label: LabelledObject;
  prediction: ModelPrediction;
  iou: number;
  dist: Float64Array;
}

export function findErrorCandidates(
  frames: readonly ErrorDetectionFrame[],
  overrides: Partial<ErrorDetectionOptions> = {},
): ErrorDetectionResult {
  const options = resolveOptions(overrides);
  checkInput(frames);
  const classes = modelClasses(frames);
  const indexOf = new Map(classes.map((c, i) => [c, i]));
  const matches = frames.map((f) => matchFrame(f.labels, f.predictions, options.matchIou));

  const paired: PairedLabel[] = [];
  frames.forEach((frame, fi) => {
    const match = matches[fi]!;
    frame.labels.forEach((label, li) => {
      const pi = match.predictionOfLabel[li]!;
      if (pi < 0) return;
      const prediction = frame.predictions[pi]!;
      paired.push({
        frame,
        label,
        prediction,
        iou: match.iouOfLabel[li]!,
        dist: classDistribution(prediction, indexOf),
      });
    });
  });

  const { thresholds, flips, joint } = confidentLearning(paired, classes, indexOf, options.minClassSupport);
  const flipsByFrame = new Map<string, LabelFlipCandidate[]>();
  for (const flip of flips) {
    const list = flipsByFrame.get(flip.frame_id);
    if (list) list.push(flip);
    else flipsByFrame.set(flip.frame_id, [flip]);
  }

  const candidates: ErrorCandidate[] = [];
  frames.forEach((frame, fi) => {
    candidates.push(...(flipsByFrame.get(frame.frame_id) ?? []));
    candidates.push(...duplicates(frame, matches[fi]!, options));
    candidates.push(...missingLabels(frame, options));
    candidates.push(...badBoxes(frame, matches[fi]!, options));
  });
  candidates.sort((a, b) => b.score - a.score);

  return {
    candidates,
    class_thresholds: classes.map((class_id, j) => ({
      class_id,
      threshold: thresholds[j]!.threshold,
      support: thresholds[j]!.support,
    })),
    confident_joint: joint,
    labels: frames.reduce((n, f) => n + f.labels.length, 0),
    predictions: frames.reduce((n, f) => n + f.predictions.length, 0),
    matched_labels: paired.length,
  };
}

function confidentLearning(
  paired: readonly PairedLabel[],
  classes: readonly number[],
  indexOf: ReadonlyMap<number, number>,
  minClassSupport: number,
): {
  thresholds: Array<{ threshold: number | null; support: number }>;
  flips: LabelFlipCandidate[];
  joint: ConfidentJointCell[];
} {
  const k = classes.length;
  const sums = new Float64Array(k);
  const support = new Int32Array(k);
  // Labels of a class the model does not know take no part: no threshold, no flip.
  const known = paired.filter((p) => indexOf.has(p.label.class_id));
  for (const p of known) {
    const i = indexOf.get(p.label.class_id)!;
    sums[i]! += p.dist[i]!;
    support[i]!++;
  }
  const thresholds = classes.map((_, j) => ({
    threshold: support[j]! >= minClassSupport ? sums[j]! / support[j]! : null,
    support: support[j]!,
  }));

  const joint = new Map<string, ConfidentJointCell>();
  const flips: LabelFlipCandidate[] = [];
  for (const p of known) {
    const given = indexOf.get(p.label.class_id)!;
    let confident = -1;
    for (let j = 0; j < k; j++) {
      const t = thresholds[j]!.threshold;
      if (t === null || p.dist[j]! < t - THRESHOLD_SLACK) continue;
      if (confident < 0 || p.dist[j]! > p.dist[confident]!) confident = j;
    }
    if (confident < 0) continue;
    const key = `${given}:${confident}`;
    const cell = joint.get(key);
    if (cell) cell.count++;
    else
      joint.set(key, { given_class_id: classes[given]!, confident_class_id: classes[confident]!, count: 1 });
    if (confident === given) continue;
    const margin = p.dist[confident]! - p.dist[given]!;
    flips.push({
      kind: 'label_flip',
      frame_id: p.frame.frame_id,
      object_ids: [p.label.object_id],
      prediction_id: p.prediction.prediction_id,
      score: Math.max(0, margin),
      proposed: { action: 'relabel', class_id: classes[confident]! },
      evidence: {
        given_class_id: classes[given]!,
        p_given: p.dist[given]!,
        p_confident: p.dist[confident]!,
        threshold_confident: thresholds[confident]!.threshold!,
        margin,
        iou: p.iou,
        conf: p.prediction.conf,
      },
    });
  }
  const cells = [...joint.values()].sort(
    (a, b) => a.given_class_id - b.given_class_id || a.confident_class_id - b.confident_class_id,
  );
  return { thresholds, flips, joint: cells };
}

function duplicates(
  frame: ErrorDetectionFrame,
  match: FrameMatch,
  options: ErrorDetectionOptions,
): DuplicateCandidate[] {
  const found: DuplicateCandidate[] = [];
  const { labels } = frame;
  for (let a = 0; a < labels.length; a++)
    for (let b = a + 1; b < labels.length; b++) {
      if (labels[a]!.class_id !== labels[b]!.class_id) continue;
      const overlap = iou(labels[a]!.bbox, labels[b]!.bbox);
      if (overlap < options.duplicateIou) continue;
      const [kept, deleted] = match.iouOfLabel[a]! >= match.iouOfLabel[b]! ? [a, b] : [b, a];
      found.push({
        kind: 'duplicate',
        frame_id: frame.frame_id,
        object_ids: [labels[a]!.object_id, labels[b]!.object_id],
        score: overlap,
        proposed: { action: 'delete', object_id: labels[deleted]!.object_id },
        evidence: {
          iou: overlap,
          kept_match_iou: match.iouOfLabel[kept]!,
          deleted_match_iou: match.iouOfLabel[deleted]!,
        },
      });
    }
  return found;
}

function missingLabels(frame: ErrorDetectionFrame, options: ErrorDetectionOptions): MissingCandidate[] {
  const unlabelled = frame.predictions.flatMap((prediction) => {
    if (prediction.conf < options.missingMinConf) return [];
    const maxLabelIou = frame.labels.reduce((m, l) => Math.max(m, iou(l.bbox, prediction.bbox)), 0);
    if (maxLabelIou >= options.missingMaxIou) return [];
    return [{ box: prediction.bbox, score: prediction.conf, prediction, maxLabelIou }];
  });
  // nms sorts by score; put the survivors back in prediction order so ties stay in input order.
  const kept = new Set(nms(unlabelled, MISSING_DEDUP_IOU));
  return unlabelled
    .filter((u) => kept.has(u))
    .map(({ prediction, maxLabelIou }) => ({
      kind: 'missing',
      frame_id: frame.frame_id,
      object_ids: [],
      prediction_id: prediction.prediction_id,
      score: prediction.conf,
      proposed: { action: 'create', class_id: prediction.class_id, bbox: prediction.bbox },
      evidence: { conf: prediction.conf, max_label_iou: maxLabelIou },
    }));
}

function badBoxes(
  frame: ErrorDetectionFrame,
  match: FrameMatch,
  options: ErrorDetectionOptions,
): BadBoxCandidate[] {
  return frame.labels.flatMap((label, li): BadBoxCandidate[] => {
    const pi = match.predictionOfLabel[li]!;
    if (pi < 0) return [];
    const prediction = frame.predictions[pi]!;
    const overlap = match.iouOfLabel[li]!;
    if (prediction.class_id !== label.class_id || prediction.conf < options.badBoxMinConf) return [];
    if (overlap >= options.badBoxMaxIou) return [];
    return [
      {
        kind: 'bad_box',
        frame_id: frame.frame_id,
        object_ids: [label.object_id],
        prediction_id: prediction.prediction_id,
        score: (prediction.conf * (1 - overlap)) / (1 - options.matchIou),
        proposed: { action: 'move', bbox: prediction.bbox },
        evidence: { iou: overlap, conf: prediction.conf },
      },
    ];
  });
}
