import { iou, type Box } from '../geometry';

/**
 * Shadow triage: a challenger (shadow) run against the champion (production) run on the same
 * frames, with no gold. On each frame the two runs' boxes are paired one-to-one regardless of class
 * (greedy by descending IoU, pairs at IoU ≥ iou_thr), and what the pairing leaves is a disagreement:
 *
 * - `only_champion` / `only_challenger`: a confident box (conf ≥ conf_thr) the other run has no box
 *   for; weight: its confidence;
 * - `class`: a pair whose classes differ, at least one side confident; weight: the larger confidence;
 * - `confidence`: a pair of the same class with exactly one side confident (the runs would report
 *   different things at the operating point); weight: the confidence gap.
 *
 * A frame's disagreement score is the sum of its weights; frames are ranked by score, then by how
 * many disagreements they hold, then in the given frame order, for a human to look at first.
 */

export interface ShadowBox {
  id: string;
  frame_id: string;
  class_id: number;
  conf: number;
  bbox: Box;
}

export type DisagreementKind = 'only_champion' | 'only_challenger' | 'class' | 'confidence';

export interface Disagreement {
  kind: DisagreementKind;
  weight: number;
  champion: ShadowBox | null;
  challenger: ShadowBox | null;
  iou: number | null;
}

export interface TriagedFrame {
  frame_id: string;
  score: number;
  disagreements: number;
  by_kind: Record<DisagreementKind, number>;
  /** The frame's disagreements, heaviest first, at most `perFrame`. */
  items: Disagreement[];
}

export interface ShadowTriage {
  frames_compared: number;
  frames_with_disagreement: number;
  /** Share of the compared frames with no disagreement. */
  agreement_rate: number | null;
  by_kind: Record<DisagreementKind, number>;
  frames: TriagedFrame[];
}

export interface ShadowOptions {
  iouThr: number;
  confThr: number;
  /** Frames returned (the ranking is over every frame). */
  limit: number;
  /** Disagreements listed per frame. */
  perFrame: number;
}

const KINDS: DisagreementKind[] = ['only_champion', 'only_challenger', 'class', 'confidence'];
const zeroKinds = (): Record<DisagreementKind, number> => ({
  only_champion: 0,
  only_challenger: 0,
  class: 0,
  confidence: 0,
});

function byFrame(boxes: readonly ShadowBox[]): Map<string, ShadowBox[]> {
  const out = new Map<string, ShadowBox[]>();
  for (const b of boxes) {
    const list = out.get(b.frame_id);
    if (list) list.push(b);
    else out.set(b.frame_id, [b]);
  }
  return out;
}

/** One frame's disagreements. */
export function frameDisagreements(
  champion: readonly ShadowBox[],
  challenger: readonly ShadowBox[],
  opts: Pick<ShadowOptions, 'iouThr' | 'confThr'>,
): Disagreement[] {
  const pairs: Array<{ i: number; j: number; v: number }> = [];
  champion.forEach((a, i) =>
    challenger.forEach((b, j) => {
      const v = iou(a.bbox, b.bbox);
      if (v >= opts.iouThr) pairs.push({ i, j, v });
    }),
  );
  pairs.sort((x, y) => y.v - x.v || x.i - y.i || x.j - y.j);
  const takenA = new Uint8Array(champion.length);
  const takenB = new Uint8Array(challenger.length);
  const out: Disagreement[] = [];
  const confident = (b: ShadowBox) => b.conf >= opts.confThr;
  for (const { i, j, v } of pairs) {
    if (takenA[i] || takenB[j]) continue;
    takenA[i] = 1;
    takenB[j] = 1;
    const a = champion[i]!;
    const b = challenger[j]!;
    if (a.class_id !== b.class_id) {
      if (confident(a) || confident(b))
        out.push({ kind: 'class', weight: Math.max(a.conf, b.conf), champion: a, challenger: b, iou: v });
    } else if (confident(a) !== confident(b)) {
      out.push({ kind: 'confidence', weight: Math.abs(a.conf - b.conf), champion: a, challenger: b, iou: v });
    }
  }
  champion.forEach((a, i) => {
    if (!takenA[i] && confident(a))
      out.push({ kind: 'only_champion', weight: a.conf, champion: a, challenger: null, iou: null });
  });
  challenger.forEach((b, j) => {
    if (!takenB[j] && confident(b))
      out.push({ kind: 'only_challenger', weight: b.conf, champion: null, challenger: b, iou: null });
  });
  return out.sort((x, y) => y.weight - x.weight);
}

/** Ranks `frameIds` by disagreement between the two runs' boxes on them. */
export function triageShadow(
  champion: readonly ShadowBox[],
  challenger: readonly ShadowBox[],
  frameIds: readonly string[],
  opts: ShadowOptions,
): ShadowTriage {
  const a = byFrame(champion);
  const b = byFrame(challenger);
  const totals = zeroKinds();
  const ranked = frameIds.map((frame_id, index) => {
    const found = frameDisagreements(a.get(frame_id) ?? [], b.get(frame_id) ?? [], opts);
    const by_kind = zeroKinds();
    for (const d of found) {
      by_kind[d.kind]++;
      totals[d.kind]++;
    }
    return {
      index,
      frame: {
        frame_id,
        score: found.reduce((s, d) => s + d.weight, 0),
        disagreements: found.length,
        by_kind,
        items: found.slice(0, opts.perFrame),
      },
    };
  });
  ranked.sort(
    (x, y) =>
      y.frame.score - x.frame.score || y.frame.disagreements - x.frame.disagreements || x.index - y.index,
  );
  const withDisagreement = ranked.filter((r) => r.frame.disagreements > 0).length;
  return {
    frames_compared: frameIds.length,
    frames_with_disagreement: withDisagreement,
    agreement_rate: frameIds.length ? (frameIds.length - withDisagreement) / frameIds.length : null,
    by_kind: Object.fromEntries(KINDS.map((k) => [k, totals[k]])) as Record<DisagreementKind, number>,
    frames: ranked
      .slice(0, opts.limit)
      .filter((r) => r.frame.disagreements > 0)
      .map((r) => r.frame),
  };
}
