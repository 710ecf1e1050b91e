import { InputError } from '../errors';
import { iou, type Box } from '../geometry/boxes';
import {
  ERROR_KINDS,
  type ErrorCandidate,
  type ErrorKind,
  type LabelledFrame,
  type LabelledObject,
} from './detect';
import { seededRandom, type SeededRandom } from '../random';

/**
 * A seeded error-injection harness: corrupt clean human labels the ways annotators do, keep a
 * manifest of every corruption, and score a detector's candidates against it.
 *
 * Each label draws once and gets at most one corruption, with the given rates (which may sum to at
 * most 1): a flip to another class, a shift, a deletion, or a duplicate. Flips touch only labels of
 * `flipClasses` and go to another class of it (default: every class among the labels), so a caller
 * measuring a detector can keep flips to classes the model knows. A shift translates the box until
 * its IoU with the original is a uniform draw in `shiftIou` (mirrored off a frame edge it would
 * leave, then clipped; the manifest keeps the IoU it got). A duplicate is a copy of the label,
 * each edge moved by up to DUPLICATE_JITTER of the box's size, appended to the frame's labels with
 * the id `<object_id>~dup`.
 */
export interface InjectionOptions {
  seed: number;
  flip: number;
  shift: number;
  delete: number;
  duplicate: number;
  flipClasses?: readonly number[];
  /** IoU range of a shifted box with its original. */
  shiftIou: readonly [number, number];
}

export const DEFAULT_INJECTION_RATES = { flip: 0.05, shift: 0.05, delete: 0.05, duplicate: 0.02 } as const;
export const DEFAULT_SHIFT_IOU: readonly [number, number] = [0.4, 0.7];
/** Largest move of a duplicate's edge, as a share of the box's width or height. */
export const DUPLICATE_JITTER = 0.015;

export interface InjectedFlip {
  frame_id: string;
  object_id: string;
  from_class_id: number;
  to_class_id: number;
}

export interface InjectedShift {
  frame_id: string;
  object_id: string;
  original_bbox: Box;
  dx: number;
  dy: number;
  /** IoU of the shifted box with the original. */
  iou: number;
}

export interface InjectedDelete {
  frame_id: string;
  object_id: string;
  class_id: number;
  bbox: Box;
}

export interface InjectedDuplicate {
  frame_id: string;
  /** The copy's id (the label added). */
  object_id: string;
  original_id: string;
}

export interface InjectionTruth {
  flips: InjectedFlip[];
  shifts: InjectedShift[];
  deletes: InjectedDelete[];
  duplicates: InjectedDuplicate[];
}

export interface Injection<F extends LabelledFrame> {
  /** The input frames (every other field kept) with corrupted labels. */
  frames: F[];
  truth: InjectionTruth;
}

function resolveInjection(overrides: Partial<InjectionOptions> & { seed: number }): InjectionOptions {
  const options = { ...DEFAULT_INJECTION_RATES, shiftIou: DEFAULT_SHIFT_IOU, ...overrides };
  const fieldErrors: Array<{ field: string; message: string }> = [];
  for (const field of ['flip', 'shift', 'delete', 'duplicate'] as const)
    if (!(options[field] >= 0 && options[field] <= 1))
      fieldErrors.push({ field, message: `must lie in [0, 1], got ${options[field]}` });
  if (options.flip + options.shift + options.delete + options.duplicate > 1)
    fieldErrors.push({ field: 'flip', message: 'the four rates must sum to at most 1' });
  const [lo, hi] = options.shiftIou;
  if (!(lo > 0 && lo <= hi && hi < 1))
    fieldErrors.push({ field: 'shiftIou', message: 'must be 0 < low ≤ high < 1' });
  if (!Number.isInteger(options.seed)) fieldErrors.push({ field: 'seed', message: 'must be an integer' });
  if (fieldErrors.length) throw new InputError('invalid injection options', fieldErrors);
  return options;
}

/**
 * The share s of the box's size to translate along (cos θ, sin θ) for an IoU of `target`: the
 * overlap share is (1 − s|cos θ|)(1 − s|sin θ|) = 2·IoU / (1 + IoU), a quadratic in s.
 */
function shiftShare(target: number, a: number, b: number): number {
  const overlap = (2 * target) / (1 + target);
  if (a * b < 1e-12) return (1 - overlap) / (a + b);
  return (a + b - Math.sqrt((a + b) ** 2 - 4 * a * b * (1 - overlap))) / (2 * a * b);
}

function shiftBox(
  box: Box,
  frame: LabelledFrame,
  targetIou: number,
  rng: SeededRandom,
): { bbox: Box; dx: number; dy: number } {
  const [x1, y1, x2, y2] = box;
  const theta = rng.between(0, 2 * Math.PI);
  const s = shiftShare(targetIou, Math.abs(Math.cos(theta)), Math.abs(Math.sin(theta)));
  let dx = s * (x2 - x1) * Math.cos(theta);
  let dy = s * (y2 - y1) * Math.sin(theta);
  if (x1 + dx < 0 || x2 + dx > frame.width) dx = -dx;
  if (y1 + dy < 0 || y2 + dy > frame.height) dy = -dy;
  const bbox: Box = [
    Math.max(0, x1 + dx),
    Math.max(0, y1 + dy),
    Math.min(frame.width, x2 + dx),
    Math.min(frame.height, y2 + dy),
  ];
  return { bbox, dx, dy };
}

function duplicateBox(box: Box, rng: SeededRandom): Box {
  const w = box[2] - box[0];
  const h = box[3] - box[1];
  const jitter = (size: number) => rng.between(-DUPLICATE_JITTER, DUPLICATE_JITTER) * size;
  return [box[0] + jitter(w), box[1] + jitter(h), box[2] + jitter(w), box[3] + jitter(h)];
}

export function injectLabelErrors<F extends LabelledFrame>(
  frames: readonly F[],
  overrides: Partial<InjectionOptions> & { seed: number },
): Injection<F> {
  const options = resolveInjection(overrides);
  const rng = seededRandom(options.seed);
  const flipClasses = [
    ...new Set(options.flipClasses ?? frames.flatMap((f) => f.labels.map((l) => l.class_id))),
  ].sort((a, b) => a - b);
  const flippable = new Set(flipClasses);
  const truth: InjectionTruth = { flips: [], shifts: [], deletes: [], duplicates: [] };

  const corrupted = frames.map((frame) => {
    const labels: LabelledObject[] = [];
    const copies: LabelledObject[] = [];
    const ids = new Set(frame.labels.map((l) => l.object_id));
    for (const label of frame.labels) {
      // u picks the corruption, aux the flip target or the shift IoU.
      const u = rng.next();
      const aux = rng.next();
      const { frame_id } = frame;
      if (u < options.flip) {
        if (!flippable.has(label.class_id) || flipClasses.length < 2) {
          labels.push(label);
          continue;
        }
        const others = flipClasses.filter((c) => c !== label.class_id);
        const to = others[Math.floor(aux * others.length)]!;
        truth.flips.push({
          frame_id,
          object_id: label.object_id,
          from_class_id: label.class_id,
          to_class_id: to,
        });
        labels.push({ ...label, class_id: to });
      } else if (u < options.flip + options.shift) {
        const target = options.shiftIou[0] + aux * (options.shiftIou[1] - options.shiftIou[0]);
        const { bbox, dx, dy } = shiftBox(label.bbox, frame, target, rng);
        truth.shifts.push({
          frame_id,
          object_id: label.object_id,
          original_bbox: label.bbox,
          dx,
          dy,
          iou: iou(bbox, label.bbox),
        });
        labels.push({ ...label, bbox });
      } else if (u < options.flip + options.shift + options.delete) {
        truth.deletes.push({
          frame_id,
          object_id: label.object_id,
          class_id: label.class_id,
          bbox: label.bbox,
        });
      } else if (u < options.flip + options.shift + options.delete + options.duplicate) {
        let copyId = `${label.object_id}~dup`;
        while (ids.has(copyId)) copyId += '~dup';
        ids.add(copyId);
        truth.duplicates.push({ frame_id, object_id: copyId, original_id: label.object_id });
        labels.push(label);
        copies.push({ ...label, object_id: copyId, bbox: duplicateBox(label.bbox, rng) });
      } else {
        labels.push(label);
      }
    }
    return { ...frame, labels: [...labels, ...copies] };
  });
  return { frames: corrupted, truth };
}

/** How one kind of injected error was detected. recall and precision are null on an empty denominator. */
export interface KindDetectionScore {
  injected: number;
  /** Injected errors that some candidate found. */
  found: number;
  recall: number | null;
  /** Candidates of the kind. */
  flagged: number;
  /** Candidates that found an injected error. */
  true_positives: number;
  precision: number | null;
  /** Found errors that a candidate finding them proposes to undo (see scoreErrorDetection). */
  fixes_correct: number;
}

export type ErrorDetectionScore = Record<ErrorKind, KindDetectionScore>;

/** A moved box this close to the original undoes a shift. */
export const SHIFT_FIX_IOU = 0.75;
/** A created box this close to a deleted one finds the deletion. */
export const DELETE_FOUND_IOU = 0.5;

interface TruthEntry {
  /** Frame and named label a candidate must share; a deletion is looked for by frame alone. */
  key: string;
  finds: (c: ErrorCandidate) => boolean;
  undoes: (c: ErrorCandidate) => boolean;
}

const entryKey = (frameId: string, objectId = ''): string => `${frameId}\u0000${objectId}`;

function truthEntries(truth: InjectionTruth): Record<ErrorKind, TruthEntry[]> {
  const names = (c: ErrorCandidate, objectId: string) => c.object_ids.includes(objectId);
  return {
    label_flip: truth.flips.map((f) => ({
      key: entryKey(f.frame_id, f.object_id),
      finds: (c) => names(c, f.object_id),
      undoes: (c) => c.proposed.action === 'relabel' && c.proposed.class_id === f.from_class_id,
    })),
    bad_box: truth.shifts.map((s) => ({
      key: entryKey(s.frame_id, s.object_id),
      finds: (c) => names(c, s.object_id),
      undoes: (c) => c.proposed.action === 'move' && iou(c.proposed.bbox, s.original_bbox) >= SHIFT_FIX_IOU,
    })),
    missing: truth.deletes.map((d) => ({
      key: entryKey(d.frame_id),
      finds: (c) => c.proposed.action === 'create' && iou(c.proposed.bbox, d.bbox) >= DELETE_FOUND_IOU,
      undoes: (c) => c.proposed.action === 'create' && c.proposed.class_id === d.class_id,
    })),
    duplicate: truth.duplicates.map((d) => ({
      key: entryKey(d.frame_id, d.object_id),
      finds: (c) => names(c, d.object_id),
      // Deleting either the copy or its original leaves one label where there was one object.
      undoes: (c) =>
        c.proposed.action === 'delete' && [d.object_id, d.original_id].includes(c.proposed.object_id),
    })),
  };
}

/**
 * Candidates against the injected truth, kind by kind: a flip is found by a `label_flip` naming
 * the flipped label (its fix undoes it when it proposes the original class); a shift by a
 * `bad_box` naming the shifted label (undone when the proposed box has IoU ≥ SHIFT_FIX_IOU with the
 * original); a deletion by a `missing` on that frame whose proposed box has IoU ≥ DELETE_FOUND_IOU
 * with the deleted box (undone when it proposes the deleted class); a duplicate by a `duplicate`
 * naming the copy (undone when it deletes the copy or its original). A candidate is a true positive
 * when it finds at least one injected error of its kind, and an error is found when at least one
 * candidate finds it. Precision is the plain ratio: here the truth is known, unlike a control
 * sample's.
 */
export function scoreErrorDetection(
  candidates: readonly ErrorCandidate[],
  truth: InjectionTruth,
): ErrorDetectionScore {
  const entries = truthEntries(truth);
  const score = {} as ErrorDetectionScore;
  for (const kind of ERROR_KINDS) {
    const byKey = new Map<string, TruthEntry[]>();
    for (const e of entries[kind]) byKey.set(e.key, [...(byKey.get(e.key) ?? []), e]);
    const found = new Set<TruthEntry>();
    const undone = new Set<TruthEntry>();
    let flagged = 0;
    let truePositives = 0;
    for (const c of candidates) {
      if (c.kind !== kind) continue;
      flagged++;
      const keys =
        kind === 'missing' ? [entryKey(c.frame_id)] : c.object_ids.map((id) => entryKey(c.frame_id, id));
      const hits = keys.flatMap((key) => byKey.get(key) ?? []).filter((e) => e.finds(c));
      if (hits.length) truePositives++;
      for (const e of hits) {
        found.add(e);
        if (e.undoes(c)) undone.add(e);
      }
    }
    const injected = entries[kind].length;
    score[kind] = {
      injected,
      found: found.size,
      recall: injected ? found.size / injected : null,
      flagged,
      true_positives: truePositives,
      precision: flagged ? truePositives / flagged : null,
      fixes_correct: undone.size,
    };
  }
  return score;
}
