import fs from 'node:fs';
import path from 'node:path';
import { initializerFloats, readOnnx } from '../onnx/graph';
import { convWeightNames } from '../onnx/quantize';
import {
  auditClaim,
  checkBudgets,
  compileAvailability,
  findTarget,
  latencyDrift,
  latencyStats,
  latencyWindows,
  measureAvailability,
  paretoFront,
  pruneConvWeights,
  throughputFps,
  type Budgets,
  type HostFacts,
} from '.';

const target = (id: string) => findTarget(id)!;
const host: HostFacts = { arch: 'x64', platform: 'linux', providers: ['cpu'], tools: [] };

describe('latency statistics', () => {
  it('gives nearest-rank percentiles that are observed values, in order', () => {
    const samples = Array.from({ length: 100 }, (_, i) => 100 - i); // 100 … 1, unsorted
    expect(latencyStats(samples)).toEqual({
      runs: 100,
      p50: 50,
      p90: 90,
      p99: 99,
      mean: 50.5,
      min: 1,
      max: 100,
    });
    const few = latencyStats([12, 10, 30]);
    expect([few.p50, few.p90, few.p99]).toEqual([12, 30, 30]);
    expect(throughputFps(20)).toBe(50);
    expect(() => latencyStats([])).toThrow('no latency samples');
  });

  it('cuts a sustained run into time windows and measures the drift first to last', () => {
    const samples = Array.from({ length: 40 }, (_, i) => ({ at: i * 250, ms: i < 20 ? 10 : 15 }));
    const windows = latencyWindows(samples, 10_000, 4);
    expect(windows.map((w) => [w.window, w.runs, w.p50])).toEqual([
      [0, 10, 10],
      [1, 10, 10],
      [2, 10, 15],
      [3, 10, 15],
    ]);
    expect(windows[1]).toMatchObject({ start_s: 2.5, end_s: 5 });
    expect(latencyDrift(windows)).toEqual({ first_p50_ms: 10, last_p50_ms: 15, change_ms: 5, change: 0.5 });
    expect(latencyDrift(windows.slice(0, 1))).toBeNull();
  });
});

describe('benchmark audit', () => {
  const measured = [
    { id: 'slow', latency: { p50: 40, p90: 50 } },
    { id: 'fast', latency: { p50: 30, p90: 35 } },
  ];

  it('flags a claim ten times faster than measured, against the fastest measurement', () => {
    const audit = auditClaim({ p50: 3 }, measured, 0.25);
    expect(audit).toMatchObject({
      verdict: 'not_reproduced',
      stat: 'p50',
      reported_ms: 3,
      measured_ms: 30,
      measured_id: 'fast',
      speedup_claimed: 10,
    });
  });

  it('accepts a claim within the tolerance, and a slower one', () => {
    expect(auditClaim({ p50: 23 }, measured, 0.25).verdict).toBe('reproduced');
    expect(auditClaim({ p50: 22 }, measured, 0.25).verdict).toBe('not_reproduced');
    expect(auditClaim({ p90: 80 }, measured, 0.25)).toMatchObject({ verdict: 'reproduced', stat: 'p90' });
  });

  it('leaves a claim with nothing to check against unverified, never accepted', () => {
    expect(auditClaim({ p50: 3 }, [], 0.25).verdict).toBe('unverified');
    expect(auditClaim({ max: 3 }, measured, 0.25)).toMatchObject({ verdict: 'unverified', stat: null });
  });
});

describe('edge gate', () => {
  const budgets: Budgets = {
    latency_ms: 50,
    latency_stat: 'p90',
    memory_mb: 100,
    size_mb: 4,
    accuracy_loss: 0.02,
  };

  it('passes when every measured figure is within its budget', () => {
    const gate = checkBudgets(budgets, {
      latency: { p50: 20, p90: 40 },
      memoryMb: 60,
      sizeBytes: 2 * 1024 * 1024,
      accuracyLoss: 0.01,
    });
    expect(gate.passed).toBe(true);
    expect(gate.checks.map((c) => [c.budget, c.value, c.passed])).toEqual([
      ['latency', 40, true],
      ['memory', 60, true],
      ['size', 2, true],
      ['accuracy', 0.01, true],
    ]);
  });

  it('fails the budget a figure exceeds, and fails closed on a figure never measured', () => {
    const gate = checkBudgets(budgets, {
      latency: null,
      memoryMb: null,
      sizeBytes: 8 * 1024 * 1024,
      accuracyLoss: 0.05,
    });
    expect(gate.passed).toBe(false);
    expect(gate.checks.map((c) => c.passed)).toEqual([false, false, false, false]);
    expect(gate.checks[0]!.reason).toContain('no measured benchmark');
    expect(gate.checks[2]!.reason).toBe('8 MB > 4 MB');
  });
});

describe('Pareto front', () => {
  it('keeps the points nothing beats on both latency and mAP, fastest first', () => {
    const points = [
      { id: 'a', latency_ms: 10, map50: 0.5 },
      { id: 'b', latency_ms: 12, map50: 0.7 },
      { id: 'c', latency_ms: 12, map50: 0.6 }, // b is as fast and more accurate
      { id: 'd', latency_ms: 20, map50: 0.7 }, // b is faster at the same mAP
      { id: 'e', latency_ms: 25, map50: 0.8 },
    ];
    expect(paretoFront(points).map((p) => p.id)).toEqual(['a', 'b', 'e']);
  });
});

describe('edge targets', () => {
  it('compiles and measures x86-64 CPU artifacts on an x86-64 host', () => {
    expect(compileAvailability(target('cpu-x86_64'), host)).toEqual({ available: true, reason: null });
    expect(measureAvailability(target('cpu-x86_64'), host).available).toBe(true);
  });

  it('compiles ARM64 artifacts here but will not time them on another CPU', () => {
    expect(compileAvailability(target('cpu-arm64'), host).available).toBe(true);
    const measure = measureAvailability(target('cpu-arm64'), host);
    expect(measure.available).toBe(false);
    expect(measure.reason).toContain('this host is x64');
  });

  it('refuses by name a target whose provider or toolchain is absent', () => {
    expect(compileAvailability(target('cuda'), host).reason).toContain(
      "onnxruntime's cuda execution provider",
    );
    expect(compileAvailability(target('jetson-tensorrt'), host).reason).toContain('trtexec on PATH');
    expect(compileAvailability(target('coreml'), host).reason).toContain('darwin host');
    expect(compileAvailability(target('cuda'), { ...host, providers: ['cpu', 'cuda'] }).available).toBe(true);
    // With trtexec there, the engine is still not one this forge builds and checks.
    expect(compileAvailability(target('jetson-tensorrt'), { ...host, tools: ['trtexec'] }).reason).toContain(
      'onnxruntime artifacts only',
    );
  });
});

describe('magnitude pruning', () => {
  const YOLOX = path.resolve(__dirname, '../../../shared/models/yolox_nano.onnx');

  it('zeroes the given share of each convolution, smallest magnitudes first', () => {
    const model = readOnnx(fs.readFileSync(YOLOX));
    const name = convWeightNames(model)[0]!;
    const before = initializerFloats(model, name);
    const report = pruneConvWeights(model, 0.5);
    expect(report.tensors).toBe(113);
    const after = initializerFloats(model, name);
    const zeroed = after.filter((v) => v === 0).length;
    expect(zeroed).toBeGreaterThanOrEqual(Math.floor(before.length / 2));
    const kept = before.filter((_, i) => after[i] !== 0).map(Math.abs);
    const dropped = before.filter((_, i) => after[i] === 0).map(Math.abs);
    expect(Math.min(...kept)).toBeGreaterThanOrEqual(Math.max(...dropped));
    expect(report.zeroed / report.values).toBeCloseTo(0.5, 2);
  });

  it('leaves the weights alone at 0 and refuses a fraction outside [0, 1)', () => {
    const model = readOnnx(fs.readFileSync(YOLOX));
    const name = convWeightNames(model)[0]!;
    const before = initializerFloats(model, name);
    expect(pruneConvWeights(model, 0).zeroed).toBe(0);
    expect(initializerFloats(model, name)).toEqual(before);
    expect(() => pruneConvWeights(model, 1)).toThrow(RangeError);
  });
});
