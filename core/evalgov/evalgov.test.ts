import { xoroshiro128plus, unsafeUniformIntDistribution } from 'pure-rand';
import type { Box } from '../geometry';
import { evaluateCoco } from '../metrics/coco';
import { pairedSignificance, wilsonInterval } from '../quality/stats';
import {
  auditEstimate,
  auditScore,
  classCounts,
  cocoInputOf,
  compareRuns,
  evaluateScope,
  frameCounts,
  frameF1,
  hierarchicalRollUp,
  inScope,
  matchRun,
  safetyRecall,
  splitPredicate,
  toCocoBox,
  triageShadow,
  weightedMap,
  type EvalGoldBox,
  type EvalPrediction,
  type ShadowBox,
} from '.';

const FRAMES = ['f0', 'f1', 'f2'];
const frames = FRAMES.map((id) => ({ id, width: 640, height: 480 }));
const box = (x: number, y: number, s = 100): Box => [x, y, x + s, y + s];

/** Class 1: two gold boxes; predictions TP 0.9, FP 0.8, TP 0.7. Class 2: one gold box, missed. */
const gold: EvalGoldBox[] = [
  { frame_id: 'f0', class_id: 1, bbox: box(0, 0) },
  { frame_id: 'f1', class_id: 1, bbox: box(200, 200) },
  { frame_id: 'f2', class_id: 2, bbox: box(300, 300) },
];
const preds: EvalPrediction[] = [
  { frame_id: 'f0', class_id: 1, conf: 0.9, bbox: box(0, 0) },
  { frame_id: 'f0', class_id: 1, conf: 0.8, bbox: box(400, 300) },
  { frame_id: 'f1', class_id: 1, conf: 0.7, bbox: box(200, 200) },
];
/** 101-point AP of TP, FP, TP over 2 gold: precision 1 up to recall .5 (51 points), then 2/3 (50 points). */
const HAND_AP = (51 + 50 * (2 / 3)) / 101;

describe('matching at one threshold', () => {
  it('counts per class and per frame, and reads an operating point as a prefix', () => {
    const m = matchRun(gold, preds, FRAMES, 0.5);
    expect(classCounts(m)).toEqual([
      { class_id: 1, gold: 2, predicted: 3, tp: 2, fp: 1, fn: 0 },
      { class_id: 2, gold: 1, predicted: 0, tp: 0, fp: 0, fn: 1 },
    ]);
    expect(classCounts(m, 0.75)[0]).toEqual({ class_id: 1, gold: 2, predicted: 2, tp: 1, fp: 1, fn: 1 });
    // Re-matching only the confident predictions gives the same counts as the prefix.
    const again = matchRun(
      gold,
      preds.filter((p) => p.conf >= 0.75),
      FRAMES,
      0.5,
    );
    expect(classCounts(again)).toEqual(classCounts(m, 0.75));
    expect(frameCounts(m)).toEqual([
      { gold: 1, predicted: 2, tp: 1, fp: 1, fn: 0 },
      { gold: 1, predicted: 1, tp: 1, fp: 0, fn: 0 },
      { gold: 1, predicted: 0, tp: 0, fp: 0, fn: 1 },
    ]);
    expect(frameF1(m, 0)).toEqual([2 / 3, 1, 0]);
    expect(frameF1(matchRun([], [], ['x'], 0.5), 0.5)).toEqual([1]);
  });

  it('gives the hand-computed AP and leaves classes without weighted gold out of the mean', () => {
    const m = matchRun(gold, preds, FRAMES, 0.5);
    expect(weightedMap(m, [1, 1, 1])).toBeCloseTo((HAND_AP + 0) / 2, 12);
    // Frame 2 not drawn: class 2 has no gold in the resample, so only class 1 counts.
    expect(weightedMap(m, [1, 1, 0])).toBeCloseTo(HAND_AP, 12);
    // Frame 0 twice: TP 0.9 ×2, FP 0.8 ×2, TP 0.7: recall .667 at precision .5, then 1 at .6.
    const ap = weightedMap(m, [2, 1, 0])!;
    const expected = (67 * 1 + 34 * 0.6) / 101;
    expect(ap).toBeCloseTo(expected, 12);
  });

  it('equals COCO AP50 on a random scene without score ties', () => {
    const rng = xoroshiro128plus(7);
    const int = (lo: number, hi: number) => unsafeUniformIntDistribution(lo, hi, rng);
    const ids = Array.from({ length: 20 }, (_, i) => `r${i}`);
    const g: EvalGoldBox[] = [];
    const p: EvalPrediction[] = [];
    let k = 0;
    for (const frame_id of ids)
      for (let j = 0; j < 6; j++) {
        const class_id = int(1, 3);
        const b = box(int(0, 500), int(0, 350), int(20, 120));
        if (int(0, 4) > 0) g.push({ frame_id, class_id, bbox: b });
        if (int(0, 3) > 0) {
          const jitter = int(-30, 30);
          p.push({
            frame_id,
            class_id: int(0, 5) === 0 ? int(1, 3) : class_id,
            conf: 0.01 + (++k * 0.97) / 200,
            bbox: [b[0] + jitter, b[1], b[2] + jitter, b[3]],
          });
        }
      }
    const fr = ids.map((id) => ({ id, width: 640, height: 480 }));
    const coco = evaluateCoco(cocoInputOf(fr, g, p));
    const m = matchRun(g, p, ids, 0.5);
    expect(weightedMap(m, new Float64Array(ids.length).fill(1))).toBeCloseTo(coco.stats[1]!, 12);
  });
});

describe('evaluateScope', () => {
  it('reports COCO figures from both harnesses, equal, and the counts', () => {
    const e = evaluateScope(frames, gold, preds, { iouThr: 0.5, epsilon: 1e-6 });
    // Exact boxes: every IoU threshold gives the same AP; class 2 is found by nothing.
    expect(e.map).toBeCloseTo((HAND_AP + 0) / 2, 12);
    expect(e.ap50).toBeCloseTo((HAND_AP + 0) / 2, 12);
    expect(e.parity).toMatchObject({ within: true, diverging: [] });
    expect(e.parity.compared).toBeGreaterThan(10);
    expect(e.streaming.AP).toBeCloseTo(e.map!, 12);
    expect(e).toMatchObject({ frames: 3, gold: 3, predicted: 3, tp: 2, fp: 1, fn: 1, recall: 2 / 3 });
    expect(e.classes.map((c) => [c.class_id, c.ap])).toEqual([
      [1, expect.closeTo(HAND_AP, 12)],
      [2, 0],
    ]);
    expect(e.classes[0]!.below_min_sample).toBe(true);
  });

  it('answers nulls for an empty scope', () => {
    const e = evaluateScope([], [], [], { iouThr: 0.5, epsilon: 1e-6 });
    expect(e).toMatchObject({ frames: 0, map: null, recall: null, parity: { within: true, compared: 0 } });
  });

  it('converts boxes to COCO [x, y, w, h] with the box area', () => {
    expect(toCocoBox([10, 20, 40, 60])).toEqual([10, 20, 30, 40]);
    const input = cocoInputOf(frames, gold, preds);
    expect(input.groundTruth[0]).toEqual({
      id: 1,
      image_id: 1,
      category_id: 1,
      bbox: [0, 0, 100, 100],
      area: 10000,
      iscrowd: 0,
    });
    expect(input.categories).toEqual([{ id: 1 }, { id: 2 }]);
  });
});

describe('slices', () => {
  it('splits a predicate into frame, class and unapplied object conditions', () => {
    expect(
      splitPredicate({
        states: ['accepted'],
        classes: ['bus'],
        context: { lighting: 'dark' },
        min_conf: 0.3,
      }),
    ).toEqual({
      frame: { context: { lighting: 'dark' } },
      classes: { classes: ['bus'] },
      not_applied: ['states', 'min_conf'],
    });
    expect(splitPredicate({})).toEqual({ frame: null, classes: null, not_applied: [] });
    expect(inScope(gold, { frameIds: ['f0', 'f2'], classIds: new Set([1]) })).toEqual([gold[0]]);
  });
});

describe('hierarchical roll-up', () => {
  it('sums counts (micro) and averages per-class figures over classes with gold (macro)', () => {
    const e = evaluateScope(frames, gold, preds, { iouThr: 0.5, epsilon: 1e-6 });
    const ontology = [
      { id: 1, name: 'car', l0: 'object', l1: 'vehicle' },
      { id: 2, name: 'person', l0: 'object', l1: 'vru' },
    ];
    const r = hierarchicalRollUp(e.classes, ontology);
    expect(r.l0).toHaveLength(1);
    expect(r.l0[0]).toMatchObject({ l0: 'object', classes: 2, gold: 3, tp: 2, fp: 1, fn: 1 });
    expect(r.l0[0]!.micro).toEqual({ precision: 2 / 3, recall: 2 / 3 });
    expect(r.l0[0]!.macro.ap).toBeCloseTo(HAND_AP / 2, 12);
    expect(r.l0[0]!.macro.recall).toBeCloseTo(0.5, 12);
    expect(r.l1.map((g) => [g.l1, g.gold, g.tp])).toEqual([
      ['vehicle', 2, 2],
      ['vru', 1, 0],
    ]);
    // Sums over the l1 groups are the l0 group's.
    expect(r.l1.reduce((s, g) => s + g.fp, 0)).toBe(r.l0[0]!.fp);
    expect(hierarchicalRollUp(e.classes, []).l0[0]!.l0).toBe('unknown');
  });
});

describe('safety recall', () => {
  const ontology = [
    { id: 1, name: 'pedestrian', l0: 'object', l1: 'vru' },
    { id: 2, name: 'motorcycle', l0: 'object', l1: 'two_wheeler' },
    { id: 3, name: 'car', l0: 'object', l1: 'vehicle' },
    { id: 4, name: 'dog', l0: 'object', l1: 'animal' },
  ];
  const counts = [
    { class_id: 1, gold: 10, predicted: 9, tp: 9, fp: 0, fn: 1 },
    { class_id: 2, gold: 4, predicted: 3, tp: 3, fp: 0, fn: 1 },
    { class_id: 3, gold: 5, predicted: 0, tp: 0, fp: 0, fn: 5 },
    { class_id: 4, gold: 0, predicted: 2, tp: 0, fp: 2, fn: 0 },
  ];

  it('judges the safety classes with gold against the first floor found', () => {
    const r = safetyRecall(counts, ontology, {
      default: 0.8,
      by_l1: { two_wheeler: 0.7 },
      by_class: new Map([[1, 0.95]]),
    });
    expect(r.classes.map((c) => [c.class_name, c.recall, c.floor, c.floor_from, c.passed])).toEqual([
      ['pedestrian', 0.9, 0.95, 'class', false],
      ['motorcycle', 0.75, 0.7, 'l1', true],
    ]);
    expect(r).toMatchObject({ passed: false, failing: ['pedestrian'] });
    const w = wilsonInterval(9, 10);
    expect(r.classes[0]!.recall_ci).toEqual({ lo: w.lo, hi: w.hi });
    expect(r.by_l1.find((g) => g.l1 === 'animal')).toEqual({ l1: 'animal', gold: 0, tp: 0, recall: null });
  });

  it('does not pass what it could not measure', () => {
    const r = safetyRecall([counts[2]!], ontology, { default: 0.8, by_l1: {}, by_class: new Map() });
    expect(r.passed).toBeNull();
    expect(r.reason).toMatch(/not measured/);
  });
});

describe('shadow triage', () => {
  const b = (id: string, frame_id: string, class_id: number, conf: number, bbox: Box): ShadowBox => ({
    id,
    frame_id,
    class_id,
    conf,
    bbox,
  });
  it('ranks the frame with the heaviest disagreement first', () => {
    const champion = [
      b('a1', 'f0', 1, 0.9, box(0, 0)),
      b('a2', 'f1', 1, 0.9, box(0, 0)),
      b('a3', 'f1', 1, 0.8, box(300, 300)),
      b('a4', 'f2', 1, 0.9, box(0, 0)),
    ];
    const challenger = [
      b('b1', 'f0', 1, 0.92, box(2, 2)),
      b('b2', 'f1', 2, 0.95, box(0, 0)),
      b('b3', 'f2', 1, 0.3, box(0, 0)),
      b('b4', 'f2', 1, 0.2, box(400, 0)),
    ];
    const t = triageShadow(champion, challenger, FRAMES, {
      iouThr: 0.5,
      confThr: 0.5,
      limit: 10,
      perFrame: 5,
    });
    expect(t.frames.map((f) => f.frame_id)).toEqual(['f1', 'f2']);
    expect(t.frames[0]).toMatchObject({
      score: 0.95 + 0.8,
      by_kind: { class: 1, only_champion: 1, only_challenger: 0, confidence: 0 },
    });
    expect(t.frames[0]!.items[0]).toMatchObject({
      kind: 'class',
      champion: { id: 'a2' },
      challenger: { id: 'b2' },
    });
    expect(t.frames[1]).toMatchObject({ by_kind: { confidence: 1 } });
    expect(t.frames[1]!.score).toBeCloseTo(0.6, 12);
    expect(t).toMatchObject({ frames_compared: 3, frames_with_disagreement: 2, agreement_rate: 1 / 3 });
    expect(
      triageShadow(champion, challenger, FRAMES, { iouThr: 0.5, confThr: 0.5, limit: 1, perFrame: 5 }).frames,
    ).toHaveLength(1);
  });
});

describe('blind audit estimate', () => {
  it('equals the Wilson interval of the verdicts so far, per class and per source', () => {
    const items = [
      ...Array.from({ length: 7 }, () => ({
        class_id: 1,
        source: 'auto_accept',
        verdict: 'correct' as const,
      })),
      ...Array.from({ length: 3 }, () => ({ class_id: 1, source: 'human', verdict: 'incorrect' as const })),
      { class_id: 2, source: 'human', verdict: 'correct' as const },
      { class_id: 2, source: 'human', verdict: null },
    ];
    const e = auditEstimate(items);
    const w = wilsonInterval(8, 11);
    expect(e.overall).toMatchObject({ items: 12, labeled: 11, remaining: 1, correct: 8, precision: 8 / 11 });
    expect(e.overall.interval).toEqual({ lo: w.lo, hi: w.hi });
    expect(e.by_class.map((c) => [c.class_id, c.labeled, c.correct])).toEqual([
      [1, 10, 7],
      [2, 1, 1],
    ]);
    const s = auditScore(items);
    expect(s.by_source.map((c) => [c.source, c.precision])).toEqual([
      ['auto_accept', 1],
      ['human', 1 / 4],
    ]);
    expect(auditEstimate([{ class_id: 1, source: 'x', verdict: null }]).overall).toMatchObject({
      precision: null,
      interval: null,
      remaining: 1,
    });
  });
});

describe('paired comparison of two runs', () => {
  const ids = Array.from({ length: 30 }, (_, i) => `s${i}`);
  const g: EvalGoldBox[] = ids.flatMap((frame_id) => [
    { frame_id, class_id: 1, bbox: box(0, 0) },
    { frame_id, class_id: 1, bbox: box(300, 200) },
  ]);
  // A finds both boxes everywhere; B misses the second box on two frames out of three.
  const a: EvalPrediction[] = g.map((x, i) => ({ ...x, conf: 0.9 - i * 0.001 }));
  const bPreds: EvalPrediction[] = g
    .filter((_, k) => k % 2 === 0 || Math.floor(k / 2) % 3 === 0)
    .map((x, i) => ({ ...x, conf: 0.9 - i * 0.001 }));
  const opts = { confThr: 0.5, alpha: 0.05, nBoot: 500, seed: 12345, nPerm: 2000 };

  it('finds the better run, deterministically per seed', () => {
    const ma = matchRun(g, a, ids, 0.5);
    const mb = matchRun(g, bPreds, ids, 0.5);
    const r = compareRuns(ma, mb, opts);
    expect(r.map_a).toBe(1);
    expect(r.map_difference.estimate).toBeCloseTo(r.map_a! - r.map_b!, 12);
    expect(r.verdict).toEqual({ better_by_map: 'a', better_by_frame_f1: 'a' });
    expect(r.paired).toEqual(pairedSignificance(frameF1(ma, 0.5), frameF1(mb, 0.5), { ...opts }));
    expect(compareRuns(ma, mb, opts)).toEqual(r);
    const other = compareRuns(ma, mb, { ...opts, seed: 99 });
    const bounds = (c: typeof r) => [
      c.map_difference.lo,
      c.map_difference.hi,
      c.paired.mean_difference.lo,
      c.paired.mean_difference.hi,
    ];
    expect(bounds(other)).not.toEqual(bounds(r));
    expect(compareRuns(mb, ma, opts).verdict).toEqual({ better_by_map: 'b', better_by_frame_f1: 'b' });
    expect(compareRuns(ma, ma, opts).verdict).toEqual({ better_by_map: null, better_by_frame_f1: null });
  });
});
