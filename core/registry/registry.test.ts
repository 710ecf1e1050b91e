import type { Box } from '../geometry';
import { matchRun, type EvalGoldBox, type EvalPrediction } from '../evalgov';
import {
  COCO_IOU_THRESHOLDS,
  contextSlices,
  deltas,
  judgeChallenger,
  mapDifferenceTest,
  matchAtThresholds,
  missedGold,
  numericLeaves,
  recallReliability,
  safetyFloors,
  summariseCurve,
  type GateEvidence,
} from '.';

const box = (x: number, y: number, s = 100): Box => [x, y, x + s, y + s];
const FRAMES = Array.from({ length: 8 }, (_, i) => `f${i}`);
/** Every frame: a car (class 1) and a motorcycle (class 2). */
const gold: EvalGoldBox[] = FRAMES.flatMap((f) => [
  { frame_id: f, class_id: 1, bbox: box(0, 0) },
  { frame_id: f, class_id: 2, bbox: box(300, 300) },
]);
const perfect: EvalPrediction[] = gold.map((g) => ({ ...g, conf: 0.9 }));
/** Finds every car, never a motorcycle. */
const carsOnly = perfect.filter((p) => p.class_id === 1);
const opts = { alpha: 0.05, nBoot: 500, seed: 7 };

describe('the mAP significance test', () => {
  it('calls a run that finds a class the other misses better, by the mAP difference', () => {
    const t = mapDifferenceTest(
      matchAtThresholds(gold, perfect, FRAMES),
      matchAtThresholds(gold, carsOnly, FRAMES),
      opts,
    );
    // mAP: perfect 1 on both classes; carsOnly 1 on cars, 0 on motorcycles → 0.5.
    expect(t).toMatchObject({
      challenger_map: 1,
      champion_map: 0.5,
      difference: 0.5,
      frames: 8,
      better: true,
    });
    // Every resample holds both classes on every drawn frame: the difference never moves.
    expect(t.lower_bound).toBe(0.5);
    expect(t.statistic).toContain('mAP@[0.50:0.95]');
    expect(COCO_IOU_THRESHOLDS).toHaveLength(10);
  });

  it('never calls an identical run better, nor a worse one', () => {
    const same = mapDifferenceTest(
      matchAtThresholds(gold, perfect, FRAMES),
      matchAtThresholds(gold, perfect, FRAMES),
      opts,
    );
    expect(same).toMatchObject({ difference: 0, lower_bound: 0, better: false });
    const worse = mapDifferenceTest(
      matchAtThresholds(gold, carsOnly, FRAMES),
      matchAtThresholds(gold, perfect, FRAMES),
      opts,
    );
    expect(worse).toMatchObject({ difference: -0.5, better: false });
  });

  it('draws the same resamples from the same seed, and judges a noisy difference by its lower bound', () => {
    // The challenger finds the motorcycle on 5 of 8 frames, the champion on 4: a small, noisy gain.
    const some = (k: number) => [...carsOnly, ...perfect.filter((p) => p.class_id === 2).slice(0, k)];
    const a = mapDifferenceTest(
      matchAtThresholds(gold, some(5), FRAMES),
      matchAtThresholds(gold, some(4), FRAMES),
      opts,
    );
    const b = mapDifferenceTest(
      matchAtThresholds(gold, some(5), FRAMES),
      matchAtThresholds(gold, some(4), FRAMES),
      opts,
    );
    expect(a).toEqual(b);
    expect(a.difference).toBeCloseTo(0.5 * (5 / 8 - 4 / 8), 2);
    expect(a.lower_bound!).toBeLessThanOrEqual(0);
    expect(a.better).toBe(false);
  });

  it('refuses runs matched on different frames', () => {
    expect(() =>
      mapDifferenceTest(
        matchAtThresholds(gold, perfect, FRAMES),
        matchAtThresholds(gold, perfect, FRAMES.slice(1)),
        opts,
      ),
    ).toThrow(/same frames/);
  });
});

describe('the safety floors', () => {
  const safety = [
    { class_id: 2, class_name: 'motorcycle' },
    { class_id: 3, class_name: 'pedestrian' },
  ];
  const floors = { apFloor: 0.3, recallFloor: 0.5, confThr: 0.5 };

  it('judges each safety class with gold on AP and recall, and lists the unmeasured ones', () => {
    const counts = [
      { class_id: 1, gold: 8, predicted: 8, tp: 8, fp: 0, fn: 0 },
      { class_id: 2, gold: 8, predicted: 3, tp: 3, fp: 0, fn: 5 },
    ];
    const r = safetyFloors(safety, counts, new Map([[2, 0.2]]), floors);
    expect(r.passed).toBe(false);
    expect(r.unmeasured).toEqual(['pedestrian']);
    expect(r.failing).toHaveLength(1);
    expect(r.failing[0]).toMatchObject({ class_name: 'motorcycle', recall: 3 / 8, under: ['ap', 'recall'] });
    const ok = safetyFloors(safety, [{ ...counts[1]!, tp: 6, fn: 2 }], new Map([[2, 0.6]]), floors);
    expect(ok).toMatchObject({ passed: true, failing: [] });
  });

  it('gives no verdict when no safety class has gold', () => {
    expect(safetyFloors(safety, [], new Map(), floors)).toMatchObject({
      passed: null,
      unmeasured: ['motorcycle', 'pedestrian'],
    });
  });
});

describe('the gate decision', () => {
  const significance = mapDifferenceTest(
    matchAtThresholds(gold, perfect, FRAMES),
    matchAtThresholds(gold, carsOnly, FRAMES),
    opts,
  );
  const safe = safetyFloors([], [], new Map(), { apFloor: 0.3, recallFloor: 0.5, confThr: 0.5 });
  const evidence: GateEvidence = {
    challenger: 'b',
    champion: 'a',
    harness: [
      { scope: 'all', side: 'challenger', within: true, epsilon: 1e-6, max_abs_delta: 0, diverging: [] },
    ],
    safety: safe,
    significance,
  };

  it('promotes a challenger that passes every rule', () => {
    expect(judgeChallenger(evidence)).toEqual({ outcome: 'promoted', rule: null, reasons: [] });
  });

  it('names the first failing rule and gives a reason for each', () => {
    const worse = mapDifferenceTest(
      matchAtThresholds(gold, carsOnly, FRAMES),
      matchAtThresholds(gold, perfect, FRAMES),
      opts,
    );
    const unsafe = safetyFloors(
      [{ class_id: 2, class_name: 'motorcycle' }],
      [{ class_id: 2, gold: 8, predicted: 0, tp: 0, fp: 0, fn: 8 }],
      new Map([[2, 0]]),
      { apFloor: 0.3, recallFloor: 0.5, confThr: 0.5 },
    );
    const d = judgeChallenger({ ...evidence, safety: unsafe, significance: worse });
    expect(d.outcome).toBe('refused');
    expect(d.rule).toBe('safety_floor');
    expect(d.reasons.map((r) => r.rule)).toEqual(['safety_floor', 'not_better']);
    expect(d.reasons[0]!.reason).toMatch(
      /motorcycle: AP50 0\.0000 under the floor 0\.3 and recall 0\.0000 \(0\/8/,
    );
    expect(d.reasons[1]!.reason).toMatch(/b does not beat a/);
    const diverging = judgeChallenger({
      ...evidence,
      harness: [
        {
          scope: 'lighting=dark',
          side: 'champion',
          within: false,
          epsilon: 1e-6,
          max_abs_delta: 0.01,
          diverging: ['AP50'],
        },
      ],
    });
    expect(diverging.rule).toBe('harness_divergence');
    expect(diverging.reasons[0]!.reason).toMatch(/champion lighting=dark .*AP50/);
  });
});

describe('context slices', () => {
  it('slices a dimension only where its frames differ, and skips frames without the value', () => {
    const slices = contextSlices([
      { id: 'a', lighting: 'normal', weather: null },
      { id: 'b', lighting: 'dark', weather: 'rain' },
      { id: 'c', lighting: 'normal', weather: null },
    ]);
    expect(slices).toEqual([
      { name: 'lighting=dark', dimension: 'lighting', value: 'dark', frameIds: ['b'] },
      { name: 'lighting=normal', dimension: 'lighting', value: 'normal', frameIds: ['a', 'c'] },
    ]);
  });
});

describe('false negatives and recall reliability', () => {
  const objects = gold.map((g, i) => ({ ...g, object_id: `o${i}` }));

  it('names the gold objects no confident prediction matches', () => {
    const preds = [
      ...carsOnly,
      { frame_id: 'f0', class_id: 2, conf: 0.9, bbox: box(300, 300) },
      { frame_id: 'f1', class_id: 2, conf: 0.2, bbox: box(300, 300) },
      { frame_id: 'f2', class_id: 1, conf: 0.9, bbox: box(300, 300) },
    ];
    const missed = missedGold(objects, preds, { iouThr: 0.5, confThr: 0.5 });
    expect(missed.map((m) => m.object_id)).toEqual(['o3', 'o5', 'o7', 'o9', 'o11', 'o13', 'o15']);
    expect(missedGold(objects, preds, { iouThr: 0.5, confThr: 0 }).map((m) => m.object_id)).not.toContain(
      'o3',
    );
  });

  it('gives recall per class with a bootstrap interval and says when the sample is too small', () => {
    const some = [...carsOnly, ...perfect.filter((p) => p.class_id === 2).slice(0, 4)];
    const r = recallReliability(matchRun(gold, some, FRAMES, 0.5), {
      confThr: 0.5,
      alpha: 0.05,
      nBoot: 400,
      seed: 3,
      minSample: 25,
      maxWidth: 0.2,
    });
    expect(r.map((c) => [c.class_id, c.gold, c.tp, c.recall])).toEqual([
      [1, 8, 8, 1],
      [2, 8, 4, 0.5],
    ]);
    expect(r[0]).toMatchObject({ lo: 1, hi: 1, width: 0, enough_sample: false, reliable: false });
    expect(r[1]!.lo!).toBeLessThan(0.5);
    expect(r[1]!.hi!).toBeGreaterThan(0.5);
    expect(r[1]!.reason).toMatch(/fewer than 25/);
    const big = recallReliability(matchRun(gold, some, FRAMES, 0.5), {
      confThr: 0.5,
      alpha: 0.05,
      nBoot: 400,
      seed: 3,
      minSample: 8,
      maxWidth: 0.2,
    });
    expect(big[0]).toMatchObject({ enough_sample: true, reliable: true, reason: null });
    expect(big[1]).toMatchObject({ enough_sample: true, reliable: false });
    expect(big[1]!.reason).toMatch(/wide, more than 0.2/);
  });
});

describe('run comparison helpers', () => {
  it('flattens numbers, takes deltas on shared keys and summarises a curve', () => {
    const a = numericLeaves({ lr: 0.01, heads: ['cls'], trained: { map50: 0.4, name: 'x' } });
    expect(a).toEqual({ lr: 0.01, 'trained.map50': 0.4 });
    expect(deltas(a, { lr: 0.02, 'trained.map50': 0.5, extra: 1 })).toEqual({
      lr: 0.01,
      'trained.map50': expect.closeTo(0.1, 12),
    });
    const s = summariseCurve([
      { epoch: 2, trainLoss: 0.5, valLoss: 0.7, metrics: { map50: 0.3 } },
      { epoch: 1, trainLoss: 0.9, valLoss: 0.6, metrics: { map50: 0.4 } },
      { epoch: 3, trainLoss: 0.4, valLoss: null, metrics: { map50: 0.35 } },
    ]);
    expect(s).toEqual({
      epochs: 3,
      first_train_loss: 0.9,
      last_train_loss: 0.4,
      min_val_loss: 0.6,
      min_val_loss_epoch: 1,
      last_val_loss: null,
      metrics: { map50: { best: 0.4, best_epoch: 1, last: 0.35 } },
    });
  });
});
