import fs from 'node:fs';
import path from 'node:path';
import type { Box } from '../geometry/boxes';
import { evaluateMot, type MotBox } from '../metrics/mot';
import { trackDetectionFixture } from '../metrics/mot/fixtures/detections';
import { DEFAULT_TRACKER_SETTINGS, runByteTrack, TrackerSettings, type TrackerFrame } from './bytetrack';
import { initiate, predict, correct } from './kalman';

const settings = DEFAULT_TRACKER_SETTINGS;
/** Frames of boxes moving right by `step` px a frame; `score(i)` per frame, null for no box. */
const movingBox = (n: number, step: number, score: (i: number) => number | null, y = 100): TrackerFrame[] =>
  Array.from({ length: n }, (_, i) => {
    const s = score(i);
    const box: Box = [10 + step * i, y, 50 + step * i, y + 80];
    return { frame: i, ts_ms: i * 100, detections: s === null ? [] : [{ box, score: s }] };
  });

describe('ByteTrack', () => {
  it('scores on TUD-Campus detections as the committed reference measured it, and writes the committed hypothesis', () => {
    const ours = trackDetectionFixture();
    const file = path.join(__dirname, '../metrics/mot/fixtures/tud-campus.bytetrack.json');
    const committed = (JSON.parse(fs.readFileSync(file, 'utf8')) as { boxes: MotBox[] }).boxes;
    // The reference numbers (reference.json) were computed on the committed file: a change to the
    // tracker must regenerate it (tools/reference/mot_reference.py --generate).
    expect(ours).toEqual(committed);
    const gt = (
      JSON.parse(
        fs.readFileSync(path.join(__dirname, '../metrics/mot/fixtures/tud-campus.gt.json'), 'utf8'),
      ) as {
        boxes: MotBox[];
      }
    ).boxes;
    const scores = evaluateMot(gt, ours);
    expect(scores.clear.mota).toBeGreaterThan(0.85);
    expect(scores.identity.idf1).toBeGreaterThan(0.8);
    expect(scores.hota.hota).toBeGreaterThan(0.7);
  });

  it('keeps one identity through frames where the object scores low (the second association)', () => {
    const frames = movingBox(12, 6, (i) => (i >= 4 && i <= 7 ? 0.3 : 0.9));
    const tracks = runByteTrack(frames, settings);
    expect(tracks).toHaveLength(1);
    expect(tracks[0]!.points.map((p) => p.frame)).toEqual(frames.map((f) => f.frame));
    // Without the second association the low-score frames are lost and the object is found again.
    const highOnly = runByteTrack(frames, { ...settings, low_score: 0.5 });
    expect(highOnly[0]!.points.map((p) => p.frame)).toEqual([0, 1, 2, 3, 8, 9, 10, 11]);
  });

  it('finds a lost object again within max_age, flags a long gap, and ends a track lost for longer', () => {
    const gap = (from: number, to: number) => (i: number) => (i >= from && i < to ? null : 0.9);
    const short = runByteTrack(movingBox(30, 2, gap(5, 10)), settings);
    expect(short).toHaveLength(1);
    expect(short[0]!.switches).toEqual([]);
    const long = runByteTrack(movingBox(40, 1, gap(5, 20)), settings);
    expect(long).toHaveLength(1);
    expect(long[0]!.switches).toEqual([
      expect.objectContaining({ kind: 'long_gap', frame: 20, gap_frames: 16 }),
    ]);
    const ended = runByteTrack(movingBox(60, 0, gap(5, 40)), { ...settings, max_age: 10 });
    expect(ended.map((t) => t.points[0]!.frame)).toEqual([0, 40]);
  });

  it('flags a box that jumps far from the last one of its track', () => {
    const frames = movingBox(10, 4, () => 0.9);
    // Frame 6's box moves 20 px instead of 4 (0.22 of its diagonal): still overlapping the
    // prediction, so the track takes it.
    frames[6]!.detections[0]!.box = [10 + 4 * 5 + 20, 100, 50 + 4 * 5 + 20, 180];
    const [track] = runByteTrack(frames, { ...settings, switch_jump: 0.15 });
    expect(runByteTrack(frames, settings)[0]!.switches).toEqual([]);
    expect(track!.switches.map((s) => [s.kind, s.frame])).toContainEqual(['jump', 6]);
  });

  it('starts tracks only from new_track_score, drops a one-frame track that is not confirmed, and ignores degenerate boxes', () => {
    const weak = runByteTrack(
      movingBox(5, 3, () => 0.55),
      settings,
    );
    expect(weak).toEqual([]);
    // A flash on frame 3 alone (two frames into the sequence, so it needs confirming) is no track.
    const flash = movingBox(6, 3, () => 0.9);
    flash[3]!.detections.push({ box: [400, 400, 440, 480], score: 0.95 });
    flash[2]!.detections.push({ box: [300, 300, 300, 380], score: 0.95 });
    expect(runByteTrack(flash, settings)).toHaveLength(1);
  });

  it('is deterministic and keeps two crossing objects apart', () => {
    const frames: TrackerFrame[] = Array.from({ length: 20 }, (_, i) => ({
      frame: i,
      ts_ms: i * 40,
      detections: [
        { box: [10 + 10 * i, 100, 50 + 10 * i, 180], score: 0.9 },
        { box: [210 - 10 * i, 110, 250 - 10 * i, 190], score: 0.85 },
      ],
    }));
    const a = runByteTrack(frames, settings);
    expect(runByteTrack(frames, settings)).toEqual(a);
    expect(a).toHaveLength(2);
    // Each track keeps its own direction of motion through the crossing (frames 9–11).
    for (const t of a) {
      const xs = t.points.map((p) => p.box[0]);
      const rising = xs[1]! > xs[0]!;
      expect(xs.every((x, k) => k === 0 || x > xs[k - 1]! === rising)).toBe(true);
    }
  });

  it('validates its settings', () => {
    expect(() => TrackerSettings.parse({ high_score: 2 })).toThrow();
    expect(() => TrackerSettings.parse({ unknown: 1 })).toThrow();
    expect(TrackerSettings.parse({}).max_age).toBe(30);
  });
});

describe('Kalman filter', () => {
  it('learns a constant velocity and predicts it', () => {
    let s = initiate([100, 50, 0.5, 80]);
    for (let i = 1; i <= 20; i++) s = correct(predict(s), [100 + 5 * i, 50 - 2 * i, 0.5, 80]);
    const next = predict(s);
    expect(next.mean[0]).toBeCloseTo(205, 0);
    expect(next.mean[1]).toBeCloseTo(8, 0);
    expect(next.mean[4]).toBeCloseTo(5, 0);
    expect(next.mean[5]).toBeCloseTo(-2, 0);
    // Prediction grows the uncertainty; a measurement shrinks it.
    expect(next.covariance[0]![0]!).toBeGreaterThan(s.covariance[0]![0]!);
    expect(correct(next, [205, 8, 0.5, 80]).covariance[0]![0]!).toBeLessThan(next.covariance[0]![0]!);
  });
});
