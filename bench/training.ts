import fs from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import {
  HEAD_FINETUNE_DEFAULTS,
  fineTuneDetectorHead,
  type LabelledImage,
} from '../activities/training/head-finetune';
import { loadConfig } from '../core/config';
import { COCO_CLASSES } from '../core/detect/coco-ontology';
import { seededRandom } from '../core/training/random';
import { vehicleFrames } from '../testkit/media/vehicles';

/**
 * The built-in trainer on a CI-sized job (docs/training-trainer.md): 48 training and 12 validation
 * frames of 960×540 (the bus and the motorcycle relabelled `bicycle`, at seeded sizes and places),
 * 15 epochs of the default config on yolox_nano. Reports the time to the first epoch (decoding and
 * the one feature pass), per epoch (steps and the validation metrics), and for the final
 * measurement (both files run over the validation frames). Goal: the whole job well under a minute
 * on a 2-core CPU. Figures only.
 */
const TRAIN = 48;
const VAL = 12;
const EPOCHS = 15;

async function frames(count: number, stream: number): Promise<LabelledImage[]> {
  const random = seededRandom(2024, stream);
  const out: LabelledImage[] = [];
  // Four frames per scene: the motorcycle rides across a scene of its own size and height.
  for (let scene = 0; out.length < count; scene++) {
    const made = await vehicleFrames(4, {
      width: 960,
      step: 0.03,
      motorcycleWidth: 0.16 + 0.24 * random(),
      motorcycleLift: 0.2 * random(),
      busHeight: 0.7 + 0.3 * random(),
    });
    for (const [i, f] of made.entries())
      out.push({
        id: `${stream}-${scene}-${i}`,
        jpeg: f.jpeg,
        boxes: [
          { bbox: f.truth.bus, classIndex: COCO_CLASSES.indexOf('bus') },
          { bbox: f.truth.motorcycle, classIndex: COCO_CLASSES.indexOf('bicycle') },
        ],
      });
  }
  return out.slice(0, count);
}

export async function run(): Promise<void> {
  const { models } = loadConfig(process.env);
  const parent = fs.readFileSync(path.resolve(models.dir, models.closedSetDetector));
  const [train, val] = [await frames(TRAIN, 1), await frames(VAL, 2)];
  const started = performance.now();
  const epochAt: number[] = [];
  const result = await fineTuneDetectorHead({
    parent,
    train,
    val,
    config: { ...HEAD_FINETUNE_DEFAULTS, epochs: EPOCHS },
    onEpoch: async () => void epochAt.push(performance.now()),
  });
  const done = performance.now();
  const perEpoch = (epochAt.at(-1)! - epochAt[0]!) / (EPOCHS - 1);
  const s = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
  console.log(
    `${TRAIN} train + ${VAL} val frames, ${EPOCHS} epochs, heads ${HEAD_FINETUNE_DEFAULTS.heads.join('+')}`,
  );
  console.log(`  to the first epoch (decode + features + epoch 1): ${s(epochAt[0]! - started)}`);
  console.log(`  per later epoch: ${s(perEpoch)}`);
  console.log(`  final measurement (parent and trained file): ${s(done - epochAt.at(-1)!)}`);
  console.log(`  whole job: ${s(done - started)}`);
  const { parent: before, trained: after } = result.metrics;
  console.log(`  held-out mAP@0.5 parent ${before.map50.toFixed(3)} → trained ${after.map50.toFixed(3)}`);
}
