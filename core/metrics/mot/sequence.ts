import { InputError } from '../../errors';
import { type Box, iou } from '../../geometry/boxes';

/** One box of a track on one frame: the input of every tracking metric. */
export interface MotBox {
  /** Frame index (or any integer that orders the frames). */
  frame: number;
  /** Track identity; unique within its set (ground truth or hypothesis), not across the two. */
  id: string;
  /** [x1, y1, x2, y2] in pixels. */
  box: Box;
}

/** One frame of a sequence: which ground-truth and hypothesis tracks are on it, and their IoUs. */
export interface MotFrame {
  frame: number;
  /** Indices into MotSequence.gtIds / hypIds, in input order. */
  gt: number[];
  hyp: number[];
  /** iou[i][j] between gt[i] and hyp[j]. */
  iou: number[][];
}

export interface MotSequence {
  frames: MotFrame[];
  gtIds: string[];
  hypIds: string[];
  gtBoxes: number;
  hypBoxes: number;
}

function checkBoxes(name: string, boxes: readonly MotBox[]): void {
  const seen = new Set<string>();
  boxes.forEach((b, i) => {
    if (!Number.isInteger(b.frame) || b.box.length !== 4 || !b.box.every(Number.isFinite))
      throw new InputError(`${name}[${i}] is not a box on a frame`, [
        {
          field: `${name}[${i}]`,
          message: 'needs an integer frame and a box [x1, y1, x2, y2] of finite numbers',
        },
      ]);
    const key = `${b.frame}\u0000${b.id}`;
    if (seen.has(key))
      throw new InputError(`${name} has track ${b.id} twice on frame ${b.frame}`, [
        { field: `${name}[${i}]`, message: 'a track has at most one box per frame' },
      ]);
    seen.add(key);
  });
}

/**
 * Frames in ascending order, each with the boxes of both sets on it in input order (the order the
 * references are fed) and their IoUs. Identities are indexed in sorted order, as the references do.
 */
export function buildSequence(gt: readonly MotBox[], hyp: readonly MotBox[]): MotSequence {
  checkBoxes('gt', gt);
  checkBoxes('hyp', hyp);
  const gtIds = [...new Set(gt.map((b) => b.id))].sort();
  const hypIds = [...new Set(hyp.map((b) => b.id))].sort();
  const gtIndex = new Map(gtIds.map((id, i) => [id, i]));
  const hypIndex = new Map(hypIds.map((id, i) => [id, i]));
  const byFrame = new Map<number, { gt: MotBox[]; hyp: MotBox[] }>();
  const at = (f: number) => byFrame.get(f) ?? byFrame.set(f, { gt: [], hyp: [] }).get(f)!;
  for (const b of gt) at(b.frame).gt.push(b);
  for (const b of hyp) at(b.frame).hyp.push(b);
  const frames = [...byFrame.keys()]
    .sort((a, b) => a - b)
    .map((frame): MotFrame => {
      const f = byFrame.get(frame)!;
      return {
        frame,
        gt: f.gt.map((b) => gtIndex.get(b.id)!),
        hyp: f.hyp.map((b) => hypIndex.get(b.id)!),
        iou: f.gt.map((g) => f.hyp.map((h) => iou(g.box, h.box))),
      };
    });
  return { frames, gtIds, hypIds, gtBoxes: gt.length, hypBoxes: hyp.length };
}
