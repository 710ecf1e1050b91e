import { performance } from 'node:perf_hooks';
import { loadClosedSetDetector } from '../activities/detect/closed-set';
import { decodeFrame } from '../activities/detect/frame-image';
import { residentSegmenter } from '../activities/detect/segmentation';
import { loadConfig } from '../core/config';
import type { Box } from '../core/geometry';
import { vehicleFrames } from '../testkit/media/vehicles';

/**
 * What masks cost (docs/masks.md): DeepLab on each person/vehicle box's crop with context, per
 * object, beside the closed-set detection pass of the same frame measured in the same run (the
 * baseline every auto-labelled frame already pays). The issue sets no cost target for masks; the
 * figure says how much a frame's auto-label grows with its number of segmentable objects.
 */
const ROUNDS = 5;

export async function run(): Promise<void> {
  const config = loadConfig(process.env);
  const [frame] = await vehicleFrames(1);
  const image = await decodeFrame(frame!.jpeg);
  const detector = await loadClosedSetDetector(config);
  const segmenter = await residentSegmenter(config).acquire();
  const objects: Array<[string, Box]> = [
    ['bus', frame!.truth.bus],
    ['motorcycle', frame!.truth.motorcycle],
  ];
  try {
    // Warm-up: the first run of each model pays for onnxruntime's allocations.
    await detector.detect(image, 'off');
    await segmenter.segment(image, objects[0]![1], objects[0]![0]);
    let detectMs = 0;
    let maskMs = 0;
    for (let round = 0; round < ROUNDS; round++) {
      let started = performance.now();
      await detector.detect(image, 'off');
      detectMs += performance.now() - started;
      started = performance.now();
      for (const [className, box] of objects) await segmenter.segment(image, box, className);
      maskMs += performance.now() - started;
    }
    const perDetect = detectMs / ROUNDS;
    const perMask = maskMs / (ROUNDS * objects.length);
    console.log(
      `${image.width}×${image.height} frame, ${objects.length} objects (${objects.map(([c]) => c).join(', ')}), ${ROUNDS} rounds, model ${segmenter.model}`,
    );
    console.log(`detection pass (baseline): ${perDetect.toFixed(0)} ms/frame`);
    console.log(
      `mask: ${perMask.toFixed(0)} ms/object (${(perMask / perDetect).toFixed(1)}× the detection pass; target: none set, figure only) — a frame with k segmentable objects costs ≈ ${perDetect.toFixed(0)} + k × ${perMask.toFixed(0)} ms`,
    );
  } finally {
    await detector.release();
  }
}
