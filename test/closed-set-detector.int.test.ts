import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  loadClosedSetDetector,
  residentClosedSetDetector,
  type ClosedSetDetector,
  type ClosedSetResult,
} from '../activities/detect/closed-set';
import { decodeFrame } from '../activities/detect/frame-image';
import { UnavailableError } from '../core/errors';
import { vehicleFrames, type VehicleFrame } from '../testkit/media/vehicles';
import { testConfig } from '../testkit/stack';

/**
 * The closed-set detector's inference thread and the resident model the gpu worker keeps between
 * sessions, on the real yolox_nano model (no stack needed).
 */
jest.setTimeout(60_000);

const config = testConfig();
let frames: VehicleFrame[];

/** Detections rounded to 0.01 px and 0.001 in score: another thread count may sum in another order. */
const boxes = (r: ClosedSetResult) =>
  r.run.status === 'ran'
    ? r.run.detections.map((d) => [
        d.className,
        ...d.box.map((v) => Math.round(v * 100) / 100),
        Math.round(d.score * 1000) / 1000,
      ])
    : [];

beforeAll(async () => {
  frames = await vehicleFrames(3, { width: 1280, step: 0.05 });
});

describe('the inference thread', () => {
  let detector: ClosedSetDetector;
  beforeAll(async () => {
    detector = await loadClosedSetDetector(config);
  });
  afterAll(() => detector.release());

  it('runs inputs handed over together one after the other, each with its own answer', async () => {
    const one = [];
    for (const f of frames) one.push(await detector.detect(await decodeFrame(f.jpeg)));
    const inputs = await Promise.all(frames.map(async (f) => detector.prepare(await decodeFrame(f.jpeg))));
    const asked = performance.now();
    const together = await Promise.all(inputs.map((input) => detector.infer(input)));
    const roundTrip = performance.now() - asked;
    expect(together.map(boxes)).toEqual(one.map(boxes));
    expect(together.every((r) => boxes(r).some(([cls]) => cls === 'bus'))).toBe(true);
    // Each answer times the model's own run, not its wait in the queue: together they fit in the round trip.
    for (const r of together) expect(r.inferenceMs).toBeGreaterThan(0);
    expect(together.reduce((s, r) => s + r.inferenceMs, 0)).toBeLessThanOrEqual(roundTrip);
  });

  it('runs with the thread count set in config and finds the same objects', async () => {
    const single = await loadClosedSetDetector({
      ...config,
      models: { ...config.models, closedSetThreads: 1 },
    });
    try {
      const image = await decodeFrame(frames[0]!.jpeg);
      expect(boxes(await single.detect(image))).toEqual(boxes(await detector.detect(image)));
    } finally {
      await single.release();
    }
  });
});

describe('the resident model', () => {
  it('loads once and serves every caller until its thread dies, then loads afresh', async () => {
    const resident = residentClosedSetDetector(config);
    try {
      const [a, b] = await Promise.all([resident.acquire(), resident.acquire()]);
      expect(a).toBe(b);
      expect(await resident.acquire()).toBe(a);
      await a.release(); // as if the thread had crashed
      expect(a.alive()).toBe(false);
      await expect(a.infer(await a.prepare(await decodeFrame(frames[0]!.jpeg)))).rejects.toThrow(/exited/);
      const c = await resident.acquire();
      expect(c).not.toBe(a);
      expect(c.alive()).toBe(true);
      expect(boxes(await c.detect(await decodeFrame(frames[0]!.jpeg))).length).toBeGreaterThan(0);
    } finally {
      await resident.close();
    }
  });

  it('refuses by name while the model is missing and loads it once it is there', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'resident-model-'));
    const resident = residentClosedSetDetector({ ...config, models: { ...config.models, dir } });
    try {
      const refused = await resident.acquire().catch((err: unknown) => err);
      expect(refused).toBeInstanceOf(UnavailableError);
      expect((refused as Error).message).toMatch(/closedSetDetector.*yolox_nano\.onnx/);
      fs.copyFileSync(
        path.join(config.models.dir, config.models.closedSetDetector),
        path.join(dir, config.models.closedSetDetector),
      );
      const loaded = await resident.acquire();
      expect(loaded.model).toMatch(/^yolox_nano\.onnx@[0-9a-f]{12}$/);
    } finally {
      await resident.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
