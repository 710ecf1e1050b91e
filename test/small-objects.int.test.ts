import {
  loadClosedSetDetector,
  type ClosedSetDetector,
  type ClosedSetResult,
} from '../activities/detect/closed-set';
import { decodeFrame } from '../activities/detect/frame-image';
import { smallObjectFrames, scoreSmallObjects, type SmallObjectFrame } from '../testkit/media/small-objects';
import { vehicleFrames } from '../testkit/media/vehicles';
import { testConfig } from '../testkit/stack';

/**
 * Sliced inference on the real yolox_nano model through the real closed-set path, on wide frames
 * of real photographs with pedestrians and vehicles pasted at 16–40 px tall (docs/small-objects.md).
 */
jest.setTimeout(180_000);

const config = testConfig();
const BANDS: Array<[number, number]> = [
  [16, 20],
  [20, 24],
  [24, 32],
  [32, 48],
];
let detector: ClosedSetDetector;
let frames: SmallObjectFrame[];

const detectionsOf = (r: ClosedSetResult) => (r.run.status === 'ran' ? r.run.detections : []);

beforeAll(async () => {
  [detector, frames] = await Promise.all([
    loadClosedSetDetector(config),
    smallObjectFrames(2, [16, 20, 24, 32, 40]),
  ]);
});
afterAll(() => detector.release());

describe('sliced inference', () => {
  it('finds small objects the whole-frame pass misses, and says so in its slicing record', async () => {
    const unsliced: ClosedSetResult[] = [];
    const sliced: ClosedSetResult[] = [];
    for (const f of frames) {
      const image = await decodeFrame(f.jpeg);
      unsliced.push(await detector.detect(image, 'off'));
      sliced.push(await detector.detect(image));
    }
    const before = scoreSmallObjects(frames, unsliced.map(detectionsOf), BANDS);
    const after = scoreSmallObjects(frames, sliced.map(detectionsOf), BANDS);
    // The auto rule slices the 1242×375 frames: 4 tiles at the model's input size.
    expect(sliced[0]!.slicing).toMatchObject({ mode: 'auto', sliced: true, tileScale: 1 });
    expect(sliced[0]!.slicing!.tiles).toHaveLength(4);
    expect(unsliced[0]!.slicing).toMatchObject({ sliced: false, reason: 'slicing is off' });
    // Measured: nothing at all unsliced; sliced, every pedestrian from 20 px, about half of all objects ≥ 16 px.
    expect(before.recall16).toBe(0);
    expect(after.recall16).toBeGreaterThanOrEqual(0.4);
    expect(after.recall16).toBeGreaterThan(before.recall16);
  });

  it('leaves a 16:9 frame unsliced under auto, with the same detections as with slicing off', async () => {
    const [hd] = await vehicleFrames(1, { width: 1280 });
    const image = await decodeFrame(hd!.jpeg);
    const auto = await detector.detect(image);
    expect(auto.slicing).toMatchObject({ sliced: false });
    expect(auto.slicing!.reason).toMatch(/aspect 1.78 is below 2/);
    expect(auto.run).toEqual((await detector.detect(image, 'off')).run);
    // The job's override slices it all the same.
    expect((await detector.detect(image, 'on')).slicing).toMatchObject({ mode: 'on', sliced: true });
  });
});
