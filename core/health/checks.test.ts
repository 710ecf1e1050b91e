import { loadConfig } from '../config';
import {
  exposureFromLuma,
  scoreSessionHealth,
  spreadSample,
  type ExposureStats,
  type HealthInputs,
} from './checks';

const thresholds = loadConfig({}).health;
const ok: ExposureStats = { meanLuma: 120, clippedDark: 0.01, clippedBright: 0.01 };

/** A clean 10-second drive at 3 fps: 31 frames, every one delivered and well exposed. */
const clean = (over: Partial<HealthInputs> = {}): HealthInputs => ({
  targetFps: 3,
  timestampsMs: Array.from({ length: 31 }, (_, i) => (i * 1000) / 3),
  duplicateCount: 0,
  rejectedCount: 0,
  exposure: Array.from({ length: 31 }, () => ok),
  expectedSensors: ['camera_front'],
  presentSensors: ['camera_front'],
  ...over,
});

describe('scoreSessionHealth', () => {
  it('passes a clean drive with a perfect score', () => {
    const r = scoreSessionHealth(clean(), thresholds);
    expect(r.passed).toBe(true);
    expect(r.score).toBe(1);
    expect(Object.values(r.checks).every((c) => c.passed)).toBe(true);
  });

  it('counts dropped duplicates and rejected frames as delivered, so dedup gaps are not a frame-rate fault', () => {
    // Every other frame dropped as a duplicate: accepted frames are 667 ms apart.
    const ts = Array.from({ length: 16 }, (_, i) => (i * 2000) / 3);
    const r = scoreSessionHealth(
      clean({ timestampsMs: ts, duplicateCount: 15, exposure: ts.map(() => ok) }),
      thresholds,
    );
    expect(r.checks.frame_rate.passed).toBe(true);
    expect(r.checks.frame_rate.value).toBe(0);
    expect(r.checks.duplicates.value).toBeCloseTo(15 / 31, 4);
  });

  it('fails the frame-rate check when the source skipped seconds, and lists the gap', () => {
    // 10 s at 3 fps, but seconds 3 to 7 are missing from the source.
    const ts = Array.from({ length: 31 }, (_, i) => (i * 1000) / 3).filter((t) => t <= 3000 || t >= 7000);
    const r = scoreSessionHealth(clean({ timestampsMs: ts, exposure: ts.map(() => ok) }), thresholds);
    const fr = r.checks.frame_rate;
    expect(fr.passed).toBe(false);
    expect(fr.expected_frames).toBe(31);
    expect(fr.delivered_frames).toBe(ts.length);
    expect(fr.value).toBeCloseTo((31 - ts.length) / 31, 4);
    expect(fr.gap_count).toBe(1);
    expect(fr.largest_gap_ms).toBeCloseTo(4000, 3);
    expect(r.passed).toBe(false);
  });

  it('fails monotonicity on a repeated or backwards timestamp and names the step', () => {
    const ts = clean().timestampsMs.slice();
    ts[10] = ts[9]!; // repeated
    ts[20] = ts[18]!; // backwards
    const r = scoreSessionHealth(clean({ timestampsMs: ts }), thresholds);
    expect(r.checks.monotonicity.passed).toBe(false);
    // Step 10 repeats frame 9's time; step 20 goes back to frame 18's; step 21 moves forward again.
    expect(r.checks.monotonicity.value).toBe(2);
    expect(r.checks.monotonicity.first_violations).toEqual([10, 20]);
  });

  it('judges duplicate and rejected ratios against their thresholds', () => {
    const r = scoreSessionHealth(clean({ duplicateCount: 100, rejectedCount: 20 }), thresholds);
    // 31 accepted + 100 + 20 = 151 extracted.
    expect(r.checks.duplicates.value).toBeCloseTo(100 / 151, 4);
    expect(r.checks.duplicates.passed).toBe(false);
    expect(r.checks.rejected.value).toBeCloseTo(20 / 151, 4);
    expect(r.checks.rejected.passed).toBe(true);
  });

  it('fails exposure when too many frames are dark or blown, and tells which', () => {
    const exposure = clean().exposure.map((e, i) =>
      i < 5
        ? { meanLuma: 8, clippedDark: 0.9, clippedBright: 0 }
        : i < 9
          ? { meanLuma: 240, clippedDark: 0, clippedBright: 0.7 }
          : e,
    );
    const r = scoreSessionHealth(clean({ exposure }), thresholds);
    expect(r.checks.exposure.passed).toBe(false);
    expect(r.checks.exposure.value).toBeCloseTo(9 / 31, 4);
    expect(r.checks.exposure.detail).toMatch(/9 of 31 .*5 too dark, 4 too bright/);
  });

  it('names the declared streams that are missing', () => {
    const r = scoreSessionHealth(
      clean({ expectedSensors: ['camera_front', 'imu', 'gnss'], presentSensors: ['camera_front', 'lidar'] }),
      thresholds,
    );
    expect(r.checks.sensors.passed).toBe(false);
    expect(r.checks.sensors.missing).toEqual(['imu', 'gnss']);
    expect(r.checks.sensors.score).toBeCloseTo(1 / 3, 4);
  });

  it('fails a session without frames instead of dividing by zero', () => {
    const r = scoreSessionHealth(clean({ timestampsMs: [], exposure: [] }), thresholds);
    expect(r.passed).toBe(false);
    expect(r.checks.frame_rate.detail).toMatch(/no frames/);
    expect(Number.isFinite(r.score)).toBe(true);
  });

  it('follows configured thresholds', () => {
    const strict = loadConfig({ APP_HEALTH__MAX_DUPLICATE_RATIO: '0.05' }).health;
    expect(scoreSessionHealth(clean({ duplicateCount: 3 }), thresholds).checks.duplicates.passed).toBe(true);
    expect(scoreSessionHealth(clean({ duplicateCount: 3 }), strict).checks.duplicates.passed).toBe(false);
  });
});

describe('exposureFromLuma', () => {
  it('measures mean luma and clipped shares', () => {
    const px = new Uint8Array([0, 0, 255, 128, 128, 128, 128, 128, 3, 251]);
    const e = exposureFromLuma(px);
    expect(e.meanLuma).toBeCloseTo((255 + 128 * 5 + 3 + 251) / 10, 3);
    expect(e.clippedDark).toBeCloseTo(0.3, 4);
    expect(e.clippedBright).toBeCloseTo(0.2, 4);
  });
});

describe('spreadSample', () => {
  it('takes every frame when there are few, an even spread otherwise', () => {
    expect(spreadSample(3, 10)).toEqual([0, 1, 2]);
    const s = spreadSample(1000, 4);
    expect(s).toEqual([125, 375, 625, 875]);
  });
});
