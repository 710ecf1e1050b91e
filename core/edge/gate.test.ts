import { evaluateStageGate, type RolloutGate, type StageEvidence } from './gate';
import type { TelemetryReport } from './telemetry';

const SHA = 'a'.repeat(64);
const devices = [
  { id: 'd1', name: 'cam-1' },
  { id: 'd2', name: 'cam-2' },
];
const gate: RolloutGate = {
  max_p90_ms: 50,
  max_error_rate: 0.1,
  min_frames: 10,
  min_devices_reporting: null,
};
const ok = (deviceId: string, over: Partial<TelemetryReport> = {}): TelemetryReport => ({
  deviceId,
  status: 'ok',
  modelSha256: SHA,
  frames: 10,
  errors: 0,
  latencyMs: { p50: 20, p90: 30, p99: 40, mean: 22 },
  at: new Date(),
  ...over,
});
const judge = (reports: TelemetryReport[], over: Partial<StageEvidence> = {}) =>
  evaluateStageGate({ devices, reports, sha256: SHA, gate, ...over });

describe('stage gate', () => {
  it('passes when every device reported enough frames within the budgets', () => {
    const v = judge([ok('d1'), ok('d2')]);
    expect(v).toMatchObject({
      outcome: 'pass',
      rule: null,
      devices: 2,
      devices_reporting: 2,
      waiting_for: [],
    });
    expect(v.reason).toMatch(/^2 of 2 devices .*\(worst p90 30\.0 ms, worst error rate 0\.00%\)$/);
  });

  it('waits for devices that have not reported min_frames, naming them', () => {
    const v = judge([ok('d1'), ok('d2', { frames: 4 })]);
    expect(v).toMatchObject({
      outcome: 'insufficient',
      rule: 'min_devices_reporting',
      waiting_for: ['cam-2'],
    });
    // a lower quorum is met by one device
    expect(judge([ok('d1')], { gate: { ...gate, min_devices_reporting: 1 } }).outcome).toBe('pass');
    // a quorum above the stage's size means the whole stage
    expect(judge([ok('d1')], { gate: { ...gate, min_devices_reporting: 5 } }).required_reporting).toBe(2);
  });

  it('breaches at once on a refused, unloadable or substituted artifact, before any frame counts', () => {
    const refused = judge([
      ok('d1'),
      ok('d2', { status: 'verify_failed', modelSha256: 'f'.repeat(64), frames: 0 }),
    ]);
    expect(refused).toMatchObject({ outcome: 'breach', rule: 'artifact_verification' });
    expect(refused.reason).toBe(
      'device cam-2 refused the artifact: the file it downloaded hashes to ffffffffffff…, not the registered aaaaaaaaaaaa…',
    );
    expect(judge([ok('d1', { status: 'load_failed', frames: 0 })]).rule).toBe('device_failure');
    expect(judge([ok('d1', { modelSha256: 'e'.repeat(64), frames: 1 })]).rule).toBe('model_hash');
  });

  it('judges latency and error rate per device once it has min_frames', () => {
    const slow = judge([ok('d1'), ok('d2', { latencyMs: { p50: 40, p90: 80, p99: 90, mean: 45 } })]);
    expect(slow).toMatchObject({ outcome: 'breach', rule: 'max_p90_ms' });
    expect(slow.reason).toBe('device cam-2 ran at p90 80.0 ms over 10 frames, above the budget of 50.0 ms');
    const tiny = judge([ok('d1')], { gate: { ...gate, max_p90_ms: 0.0005 } });
    expect(tiny.reason).toBe('device cam-1 ran at p90 30.0 ms over 10 frames, above the budget of 0.0005 ms');
    // too few frames to judge yet
    expect(judge([ok('d2', { frames: 3, latencyMs: { p50: 40, p90: 80, p99: 90, mean: 45 } })]).outcome).toBe(
      'insufficient',
    );
    const failing = judge([ok('d1'), ok('d2', { frames: 20, errors: 3 })]);
    expect(failing).toMatchObject({ outcome: 'breach', rule: 'max_error_rate' });
    expect(failing.reason).toMatch(/failed 3 of 20 frames \(15\.00%\), above the budget of 10\.00%/);
    // no latency budget: only the error rate and quorum count
    const noBudget = { ...gate, max_p90_ms: null };
    expect(
      judge([ok('d1'), ok('d2', { latencyMs: { p50: 1e4, p90: 1e4, p99: 1e4, mean: 1e4 } })], {
        gate: noBudget,
      }).outcome,
    ).toBe('pass');
  });

  it('ignores reports of devices outside the stage', () => {
    const v = judge([ok('d1'), ok('d2'), ok('d9', { status: 'verify_failed', frames: 0 })]);
    expect(v.outcome).toBe('pass');
    expect(v.per_device.map((d) => d.name)).toEqual(['cam-1', 'cam-2']);
  });
});
