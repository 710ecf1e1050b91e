import {
  classDisagreement,
  confidenceMargin,
  DEFAULT_WEIGHTS,
  frameRarity,
  frameUncertainty,
  normaliseWeights,
  type CandidateObject,
  type ClassCounts,
  type Weights,
} from './score';
import { scoreFrames, selectBatch, selectionPicks, type CandidateFrame, type SelectionPool } from './select';

const counts: ClassCounts = {
  total: 1000,
  byClass: new Map([
    ['car', 900],
    ['bus', 95],
    ['dog', 5],
  ]),
};

let objectSeq = 0;
const object = (className: string, conf: number | null, entropy: number | null = null): CandidateObject => ({
  id: `o${String(++objectSeq).padStart(4, '0')}`,
  className,
  conf,
  entropy,
});

const frame = (
  id: string,
  objects: CandidateObject[],
  embedding: number[] | null = null,
): CandidateFrame => ({
  id,
  objects,
  embedding,
});

const pool = (frames: CandidateFrame[], weights: Weights = DEFAULT_WEIGHTS): SelectionPool => ({
  frames,
  counts,
  threshold: 0.8,
  weights,
});

const only = (part: keyof Weights): Weights => ({ uncertainty: 0, rarity: 0, diversity: 0, [part]: 1 });

describe('the parts of a score', () => {
  it('measures the confidence margin from the decision threshold, 0 at either end', () => {
    expect(confidenceMargin(0.8, 0.8)).toBe(1);
    expect(confidenceMargin(1, 0.8)).toBe(0);
    expect(confidenceMargin(0, 0.8)).toBe(0);
    expect(confidenceMargin(0.9, 0.8)).toBeCloseTo(0.5);
    expect(confidenceMargin(0.4, 0.8)).toBeCloseTo(0.5);
    // At 0.5 it is the review queue's 1 − |2·conf − 1|.
    expect(confidenceMargin(0.3, 0.5)).toBeCloseTo(1 - Math.abs(2 * 0.3 - 1));
    expect(confidenceMargin(null, 0.8)).toBe(1);
  });

  it('counts the fusion paths disputing the class, full at one bit', () => {
    expect(classDisagreement(null)).toBe(0);
    expect(classDisagreement(0)).toBe(0);
    expect(classDisagreement(0.5)).toBe(0.5);
    expect(classDisagreement(1.6)).toBe(1);
  });

  it("takes the frame's most uncertain object: the larger of margin and disagreement", () => {
    const sure = object('car', 0.99);
    const disputed = object('car', 0.99, 0.7);
    const u = frameUncertainty([sure, disputed], 0.8)!;
    expect(u.object_id).toBe(disputed.id);
    expect(u.value).toBeCloseTo(0.7);
    expect(u.disagreement).toBeCloseTo(0.7);
    expect(u.margin).toBeCloseTo(0.05);
    expect(frameUncertainty([], 0.8)).toBeNull();
  });

  it("takes the frame's rarest class with its share and band", () => {
    const r = frameRarity([object('car', 0.9), object('dog', 0.9), object('bus', 0.9)], counts)!;
    expect(r).toMatchObject({ class_name: 'dog', share: 0.005, band: 'rare' });
    expect(r.value).toBeCloseTo(Math.log(1 + 1000 / 5) / Math.log(1001));
    expect(frameRarity([object('car', 0.9)], counts)!.band).toBe('common');
    // A class not counted yet counts as seen once: as rare as can be.
    expect(frameRarity([object('kangaroo', 0.9)], counts)!.value).toBeCloseTo(1);
  });

  it('scales weights to sum to 1 and refuses negative or all-zero weights', () => {
    expect(normaliseWeights({ uncertainty: 2, rarity: 1, diversity: 1 })).toEqual({
      uncertainty: 0.5,
      rarity: 0.25,
      diversity: 0.25,
    });
    expect(() => normaliseWeights({ uncertainty: 0, rarity: 0, diversity: 0 })).toThrow(/above 0/);
    expect(() => normaliseWeights({ uncertainty: -1, rarity: 1, diversity: 1 })).toThrow(/≥ 0/);
  });
});

describe('batch selection', () => {
  const uncertainCommon = frame('f-a', [object('car', 0.8)]);
  const confidentRare = frame('f-b', [object('dog', 0.99)]);
  const uncertainRare = frame('f-c', [object('dog', 0.75)]);
  const confidentCommon = frame('f-d', [object('car', 0.99)]);
  const four = [confidentCommon, uncertainCommon, confidentRare, uncertainRare];

  it('ranks an uncertain rare-class frame above a confident common one, and explains each score', () => {
    const picks = selectBatch(pool(four, { uncertainty: 1, rarity: 1, diversity: 0 }), 4);
    expect(picks.map((p) => p.frame_id)).toEqual(['f-c', 'f-a', 'f-b', 'f-d']);
    for (const p of picks) {
      const { uncertainty, rarity, diversity } = p.parts;
      expect(uncertainty.weight + rarity.weight + diversity.weight).toBeCloseTo(1);
      expect(uncertainty.contribution).toBeCloseTo(uncertainty.weight * uncertainty.value);
      expect(p.score).toBeCloseTo(uncertainty.contribution + rarity.contribution + diversity.contribution);
    }
    expect(picks[0]!.parts.rarity.class_name).toBe('dog');
    expect(picks.map((p) => p.rank)).toEqual([1, 2, 3, 4]);
  });

  it('follows the weights: uncertainty alone and rarity alone pick differently', () => {
    const two = [uncertainCommon, confidentRare];
    expect(selectBatch(pool(two, only('uncertainty')), 1)[0]!.frame_id).toBe('f-a');
    expect(selectBatch(pool(two, only('rarity')), 1)[0]!.frame_id).toBe('f-b');
    // A part with weight 0 contributes nothing, whatever its value.
    const [pick] = selectBatch(pool(two, only('rarity')), 1);
    expect(pick!.parts.uncertainty.value).toBeGreaterThan(0);
    expect(pick!.parts.uncertainty.contribution).toBe(0);
  });

  it('respects the budget and never picks a frame twice', () => {
    expect(selectBatch(pool(four), 2)).toHaveLength(2);
    expect(selectBatch(pool(four), 0)).toEqual([]);
    const all = selectBatch(pool(four), 10);
    expect(all).toHaveLength(4);
    expect(new Set(all.map((p) => p.frame_id)).size).toBe(4);
  });

  it('never picks a frame without a machine-made object', () => {
    const picks = selectBatch(pool([frame('f-empty', []), uncertainCommon]), 5);
    expect(picks.map((p) => p.frame_id)).toEqual(['f-a']);
  });

  it('breaks ties by frame id and does not depend on the order frames come in', () => {
    const twins = ['f-3', 'f-1', 'f-2'].map((id) => frame(id, [object('car', 0.6)], [0, 0]));
    const forward = selectBatch(pool(twins), 3).map((p) => p.frame_id);
    const backward = selectBatch(pool([...twins].reverse()), 3).map((p) => p.frame_id);
    expect(forward).toEqual(['f-1', 'f-2', 'f-3']);
    expect(backward).toEqual(forward);
  });

  it('is deterministic: the same pool gives the same picks and scores', () => {
    const frames = Array.from({ length: 40 }, (_, i) =>
      frame(
        `f-${String(i).padStart(2, '0')}`,
        [object(['car', 'bus', 'dog'][i % 3]!, ((i * 37) % 100) / 100, (i % 5) / 5)],
        [Math.cos(i), Math.sin(i * 1.7), (i % 7) / 7],
      ),
    );
    expect(selectBatch(pool(frames), 15)).toEqual(selectBatch(pool(frames), 15));
  });

  it('spreads the picks over the embedding space instead of taking near-copies of one scene', () => {
    // Two scenes: five near-copies around (0, 0), slightly more uncertain, and five around (1, 0).
    const near = Array.from({ length: 5 }, (_, i) => frame(`a-${i}`, [object('car', 0.78)], [0.01 * i, 0]));
    const far = Array.from({ length: 5 }, (_, i) => frame(`b-${i}`, [object('car', 0.7)], [1 + 0.01 * i, 0]));
    const withoutDiversity = selectBatch(
      pool([...near, ...far], { uncertainty: 1, rarity: 0, diversity: 0 }),
      2,
    );
    expect(withoutDiversity.map((p) => p.frame_id[0])).toEqual(['a', 'a']);
    const withDiversity = selectBatch(pool([...near, ...far]), 2);
    expect(withDiversity.map((p) => p.frame_id[0]).sort()).toEqual(['a', 'b']);
    // The second pick's distance is measured to the first, and it is the farthest candidate.
    expect(withDiversity[1]!.parts.diversity).toMatchObject({ measured_from: 'picks', value: 1 });
  });

  it('with diversity alone is k-center greedy: first farthest from the mean, then farthest from every pick', () => {
    const line = [0, 1, 2, 10, 4].map((x, i) => frame(`p-${'abcde'[i]}`, [object('car', 0.9)], [x]));
    const picks = selectBatch(pool(line, only('diversity')), 3);
    expect(picks.map((p) => p.frame_id)).toEqual(['p-d', 'p-a', 'p-e']);
    expect(picks[0]!.parts.diversity).toMatchObject({ measured_from: 'mean' });
    expect(picks[0]!.parts.diversity.distance).toBeCloseTo(6.6);
    expect(picks[2]!.parts.diversity.distance).toBe(4);
  });

  it('keeps a frame without an embedding selectable, on uncertainty and rarity alone', () => {
    const unembedded = frame('f-x', [object('dog', 0.8)]);
    const embedded = [
      frame('f-1', [object('car', 0.99)], [0, 0]),
      frame('f-2', [object('car', 0.99)], [1, 1]),
    ];
    const picks = selectBatch(pool([...embedded, unembedded]), 3);
    expect(picks[0]!.frame_id).toBe('f-x');
    expect(picks[0]!.parts.diversity).toEqual({
      value: 0,
      embedded: false,
      distance: null,
      measured_from: null,
      weight: 0.2,
      contribution: 0,
    });
    // Picking it measured nothing: the next distances are still from the mean.
    expect(picks[1]!.parts.diversity.measured_from).toBe('mean');
  });

  it('scores frames as the first pick sees them, best first', () => {
    const scores = scoreFrames(pool(four));
    const [first] = selectBatch(pool(four), 1);
    expect(scores[0]).toEqual({ frame_id: first!.frame_id, score: first!.score, parts: first!.parts });
    expect(scores.map((s) => s.score)).toEqual([...scores.map((s) => s.score)].sort((a, b) => b - a));
  });

  it('yields picks lazily, so a caller can stop at its budget', () => {
    const picks = selectionPicks(pool(four));
    expect(picks.next().value).toMatchObject({ rank: 1 });
    expect(picks.next().value).toMatchObject({ rank: 2 });
  });

  it('refuses embeddings of different lengths', () => {
    expect(() =>
      selectBatch(pool([frame('a', [object('car', 0.5)], [0]), frame('b', [object('car', 0.5)], [0, 1])]), 1),
    ).toThrow(/dimensions/);
  });
});
