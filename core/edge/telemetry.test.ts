import { fieldSummary, latencySummary, mergeLatency, type TelemetryReport } from './telemetry';

const SHA = 'a'.repeat(64);
const report = (over: Partial<TelemetryReport>): TelemetryReport => ({
  deviceId: 'd1',
  status: 'ok',
  modelSha256: SHA,
  frames: 10,
  errors: 0,
  latencyMs: { p50: 10, p90: 20, p99: 30, mean: 12 },
  at: new Date('2030-01-01T00:00:00Z'),
  ...over,
});

describe('field telemetry', () => {
  it('summarises per-frame durations with numpy-linear percentiles', () => {
    const samples = Array.from({ length: 11 }, (_, i) => i * 10); // 0..100
    expect(latencySummary(samples)).toEqual({ p50: 50, p90: 90, p99: 99, mean: 50 });
    expect(latencySummary([])).toBeNull();
  });

  it('merges report percentiles weighted by the frames that ran', () => {
    const merged = mergeLatency([
      { weight: 30, latency: { p50: 10, p90: 20, p99: 30, mean: 10 } },
      { weight: 10, latency: { p50: 50, p90: 60, p99: 70, mean: 50 } },
      { weight: 0, latency: { p50: 999, p90: 999, p99: 999, mean: 999 } },
    ]);
    expect(merged).toEqual({ p50: 20, p90: 30, p99: 40, mean: 20 });
    expect(mergeLatency([{ weight: 5, latency: null }])).toBeNull();
  });

  it('counts only frames of the artifact with its registered hash, and names a foreign or refused hash', () => {
    const t = (s: number) => new Date(Date.UTC(2030, 0, 1, 0, 0, s));
    const summary = fieldSummary(
      [
        report({ deviceId: 'd1', frames: 10, errors: 1, at: t(1) }),
        report({ deviceId: 'd1', frames: 10, errors: 0, at: t(2), status: 'run_failed' }),
        report({ deviceId: 'd2', modelSha256: 'b'.repeat(64), frames: 50, at: t(3) }),
        report({ deviceId: 'd3', status: 'verify_failed', modelSha256: 'c'.repeat(64), frames: 0, at: t(4) }),
      ],
      SHA,
    );
    expect(summary).toMatchObject({
      reports: 4,
      frames: 20,
      errors: 1,
      error_rate: 0.05,
      devices_reporting: 1,
    });
    expect(summary.statuses).toEqual({ ok: 2, run_failed: 1, verify_failed: 1 });
    const [d1, d2, d3] = summary.per_device;
    expect(d1).toMatchObject({
      device_id: 'd1',
      frames: 20,
      foreign_sha256: null,
      last_status: 'run_failed',
    });
    expect(d2).toMatchObject({ device_id: 'd2', frames: 0, foreign_sha256: 'b'.repeat(64) });
    expect(d3).toMatchObject({
      device_id: 'd3',
      refused_sha256: 'c'.repeat(64),
      last_status: 'verify_failed',
    });
    expect(d1!.latency_ms).toEqual({ p50: 10, p90: 20, p99: 30, mean: 12 });
  });
});
