import { performance } from 'node:perf_hooks';
import { loadClosedSetDetector, type ClosedSetResult } from '../activities/detect/closed-set';
import { decodeFrame } from '../activities/detect/frame-image';
import { loadConfig } from '../core/config';
import { scoreSmallObjects, smallObjectFrames, type SmallObjectScore } from '../testkit/media/small-objects';

/**
 * Sliced inference for small objects (docs/small-objects.md): the real yolox_nano model through the
 * real closed-set path on 1242×375 frames of real photographs with people and vehicles pasted at
 * 16–40 px tall. Prints recall by height band, recall of objects ≥ 16 px and precision beside the
 * issue's target (recall ≥ 0.8 at unchanged precision), and the cost per frame of slicing against
 * the whole-frame pass measured in the same run. Figures only.
 */
const FRAMES = 4;
const HEIGHTS = [16, 20, 24, 32, 40];
const BANDS: Array<[number, number]> = [
  [16, 20],
  [20, 24],
  [24, 32],
  [32, 48],
];
const TARGET_RECALL = 0.8;

const detectionsOf = (r: ClosedSetResult) => (r.run.status === 'ran' ? r.run.detections : []);

function report(name: string, score: SmallObjectScore, msPerFrame: number): void {
  const bands = score.bands.map((b) => `${b.min}–${b.max}px ${b.found}/${b.objects}`).join('  ');
  console.log(
    `${name.padEnd(10)} recall≥16px ${score.recall16.toFixed(2)} (target ≥ ${TARGET_RECALL})  precision ${score.precision.toFixed(2)} over ${score.detections} detections  ${msPerFrame.toFixed(0)} ms/frame  [${bands}]`,
  );
}

export async function run(): Promise<void> {
  const config = loadConfig(process.env);
  const [detector, frames] = await Promise.all([
    loadClosedSetDetector(config),
    smallObjectFrames(FRAMES, HEIGHTS),
  ]);
  try {
    const images = await Promise.all(frames.map((f) => decodeFrame(f.jpeg)));
    await detector.detect(images[0]!, 'off'); // warm-up: the first run pays for onnxruntime's allocations
    const timed = async (mode: 'off' | 'auto') => {
      const results: ClosedSetResult[] = [];
      const started = performance.now();
      for (const image of images) results.push(await detector.detect(image, mode));
      return { results, msPerFrame: (performance.now() - started) / images.length };
    };
    const whole = await timed('off');
    const sliced = await timed('auto');
    const before = scoreSmallObjects(frames, whole.results.map(detectionsOf), BANDS);
    const after = scoreSmallObjects(frames, sliced.results.map(detectionsOf), BANDS);
    console.log(
      `${frames.length} frames of ${frames[0]!.width}×${frames[0]!.height}, ${frames[0]!.objects.length} pasted objects each; tiles per frame: ${sliced.results[0]!.slicing?.tiles?.length ?? 0}`,
    );
    report('whole', before, whole.msPerFrame);
    report('sliced', after, sliced.msPerFrame);
    console.log(
      `slicing costs ${(sliced.msPerFrame / whole.msPerFrame).toFixed(1)}× the whole-frame pass; precision change ${(after.precision - before.precision).toFixed(2)} (target: unchanged)`,
    );
  } finally {
    await detector.release();
  }
}
