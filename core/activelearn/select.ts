import {
  explainScore,
  frameRarity,
  frameUncertainty,
  normaliseWeights,
  type CandidateObject,
  type ClassCounts,
  type DiversityPart,
  type ExplainedScore,
  type RarityPart,
  type UncertaintyPart,
  type Weights,
} from './score';

/**
 * Batch selection for active learning (docs/activelearn.md): greedy, one pick at a time, each pick
 * the candidate with the highest score given the picks before it.
 *
 * score = w_u · uncertainty + w_r · rarity + w_d · diversity, with the weights scaled to sum to 1.
 * Uncertainty and rarity belong to the frame alone. Diversity is k-center greedy's criterion
 * (core/curation/kcenter.ts) made relative: the frame's embedding distance to the nearest frame
 * picked so far, over the largest such distance among the candidates still unpicked, so the
 * farthest candidate has diversity 1 and a near-copy of a pick has almost 0. Before the first
 * embedded pick the distances are measured from the candidates' mean, as k-center's first pick is.
 * With w_d = 1 the picks are exactly k-center greedy's.
 *
 * A frame without an embedding stays selectable: its diversity is 0 (it cannot be shown to be far
 * from anything), so it competes on uncertainty and rarity alone, and picking it moves no distance.
 *
 * Deterministic: candidates are taken in frame id order and every tie goes to the smallest id.
 */

export interface CandidateFrame {
  id: string;
  /** The frame's machine-made objects; a frame without any is no candidate and is never picked. */
  objects: readonly CandidateObject[];
  /** Its embedding (every one of the same length), or null when the frame has none. */
  embedding: ArrayLike<number> | null;
}

export interface SelectionPool {
  frames: readonly CandidateFrame[];
  counts: ClassCounts;
  /** The decision threshold the confidence margin is measured from. */
  threshold: number;
  /** Any non-negative weights; they are scaled to sum to 1. */
  weights: Weights;
}

export interface BatchPick extends ExplainedScore {
  rank: number;
  frame_id: string;
}

export interface FrameScore extends ExplainedScore {
  frame_id: string;
}

const { sqrt, max, min } = Math;

function distance(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let sum = 0;
  for (let d = 0; d < a.length; d++) {
    const diff = a[d]! - b[d]!;
    sum += diff * diff;
  }
  return sqrt(sum);
}

interface Scored {
  frame: CandidateFrame;
  uncertainty: UncertaintyPart;
  rarity: RarityPart;
  /** w_u · uncertainty + w_r · rarity: what does not change between picks. */
  fixed: number;
}

/** The pool between picks: who is picked, and each candidate's distance to the nearest pick (or the mean). */
class SelectionState {
  readonly weights: Weights;
  private readonly candidates: Scored[];
  private readonly nearest: Float64Array;
  private readonly picked: Uint8Array;
  private fromPicks = false;

  constructor(pool: SelectionPool) {
    this.weights = normaliseWeights(pool.weights);
    const w = this.weights;
    this.candidates = [...pool.frames]
      .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
      .flatMap((frame) => {
        const uncertainty = frameUncertainty(frame.objects, pool.threshold);
        const rarity = frameRarity(frame.objects, pool.counts);
        if (!uncertainty || !rarity) return [];
        return [
          { frame, uncertainty, rarity, fixed: w.uncertainty * uncertainty.value + w.rarity * rarity.value },
        ];
      });
    for (let i = 1; i < this.candidates.length; i++)
      if (this.candidates[i - 1]!.frame.id === this.candidates[i]!.frame.id)
        throw new RangeError(`frame ${this.candidates[i]!.frame.id} is a candidate twice`);
    const embedded = this.candidates.filter((c) => c.frame.embedding).map((c) => c.frame.embedding!);
    const dims = embedded[0]?.length ?? 0;
    if (embedded.some((e) => e.length !== dims))
      throw new RangeError(`every embedding must have ${dims} dimensions`);
    const mean = new Float64Array(dims);
    for (const e of embedded) for (let d = 0; d < dims; d++) mean[d]! += e[d]! / embedded.length;
    this.nearest = new Float64Array(this.candidates.length);
    this.candidates.forEach((c, i) => {
      this.nearest[i] = c.frame.embedding ? distance(c.frame.embedding, mean) : 0;
    });
    this.picked = new Uint8Array(this.candidates.length);
  }

  /** The largest distance among unpicked embedded candidates: diversity's yardstick. */
  private yardstick(): number {
    let far = 0;
    for (let i = 0; i < this.candidates.length; i++)
      if (!this.picked[i] && this.candidates[i]!.frame.embedding) far = max(far, this.nearest[i]!);
    return far;
  }

  private diversity(i: number, yardstick: number): DiversityPart {
    if (!this.candidates[i]!.frame.embedding)
      return { value: 0, embedded: false, distance: null, measured_from: null };
    const d = this.nearest[i]!;
    return {
      value: yardstick > 0 ? d / yardstick : 0,
      embedded: true,
      distance: d,
      measured_from: this.fromPicks ? 'picks' : 'mean',
    };
  }

  private explain(i: number, yardstick: number): ExplainedScore {
    const c = this.candidates[i]!;
    return explainScore(this.weights, c.uncertainty, c.rarity, this.diversity(i, yardstick));
  }

  /** Every unpicked candidate's score as things stand, in frame id order. */
  scores(): FrameScore[] {
    const yardstick = this.yardstick();
    const out: FrameScore[] = [];
    for (let i = 0; i < this.candidates.length; i++)
      if (!this.picked[i])
        out.push({ frame_id: this.candidates[i]!.frame.id, ...this.explain(i, yardstick) });
    return out;
  }

  /** The best unpicked candidate (ties: the smallest id, the first in order), or -1 when none is left. */
  best(): number {
    const yardstick = this.yardstick();
    const wd = this.weights.diversity;
    let best = -1;
    let bestScore = -Infinity;
    for (let i = 0; i < this.candidates.length; i++) {
      if (this.picked[i]) continue;
      const c = this.candidates[i]!;
      const score = c.fixed + (c.frame.embedding && yardstick > 0 ? wd * (this.nearest[i]! / yardstick) : 0);
      if (score > bestScore) {
        best = i;
        bestScore = score;
      }
    }
    return best;
  }

  /** Takes candidate i, answering its score as it was taken; distances then run to the nearest pick. */
  take(i: number): FrameScore {
    const taken = { frame_id: this.candidates[i]!.frame.id, ...this.explain(i, this.yardstick()) };
    this.picked[i] = 1;
    const at = this.candidates[i]!.frame.embedding;
    // Without a diversity weight distances change no score: they are not measured.
    if (at && this.weights.diversity > 0) {
      for (let j = 0; j < this.candidates.length; j++) {
        const e = this.candidates[j]!.frame.embedding;
        if (this.picked[j] || !e) continue;
        const d = distance(e, at);
        this.nearest[j] = this.fromPicks ? min(this.nearest[j]!, d) : d;
      }
      this.fromPicks = true;
    }
    return taken;
  }
}

/**
 * The picks one at a time, best first, until every candidate is picked: a caller stops at its
 * budget and may yield to other work between picks (each costs one pass over the candidates).
 */
export function* selectionPicks(pool: SelectionPool): Generator<BatchPick> {
  const state = new SelectionState(pool);
  for (let rank = 1, next = state.best(); next >= 0; rank++, next = state.best())
    yield { rank, ...state.take(next) };
}

/** Up to `budget` picks. */
export function selectBatch(pool: SelectionPool, budget: number): BatchPick[] {
  const picks: BatchPick[] = [];
  if (budget <= 0) return picks;
  for (const pick of selectionPicks(pool)) {
    picks.push(pick);
    if (picks.length >= budget) break;
  }
  return picks;
}

/**
 * Each candidate's score before any pick, best first (ties by frame id): what the first pick of a
 * selection over exactly these frames would see, diversity measured from their mean. Frames
 * without a machine-made object are not in it.
 */
export function scoreFrames(pool: SelectionPool): FrameScore[] {
  return new SelectionState(pool)
    .scores()
    .sort((a, b) => b.score - a.score || (a.frame_id < b.frame_id ? -1 : a.frame_id > b.frame_id ? 1 : 0));
}
