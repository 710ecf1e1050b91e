import fs from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { loadClosedSetDetector } from '../activities/detect/closed-set';
import { decodeFrame } from '../activities/detect/frame-image';
import {
  HEAD_FINETUNE_DEFAULTS,
  fineTuneDetectorHead,
  type LabelledImage,
} from '../activities/training/head-finetune';
import { DEFAULT_WEIGHTS, type CandidateObject, type ClassCounts } from '../core/activelearn/score';
import { selectBatch, type CandidateFrame } from '../core/activelearn/select';
import { loadConfig } from '../core/config';
import { EMBEDDING_MODELS, tinyImageDescriptor } from '../core/curation/embedding';
import { COCO_CLASSES } from '../core/detect/coco-ontology';
import { seededRandom, shuffle } from '../core/training/random';
import { vehicleFrames, type VehicleScene } from '../testkit/media/vehicles';

/**
 * Active-learning selection against random selection at equal label budgets (docs/activelearn.md,
 * Benchmark). A labelled pool of real-photograph frames (the e-bike story of docs/training.md: the
 * reviewers label the motorcycle `bicycle`, which the shipped detector calls a motorcycle) is
 * auto-labelled by the shipped detector, as a session would be; the selection scores the pool from
 * those machine labels and the frames' tiny-image embeddings, exactly as POST /api/activelearn/select
 * does (core/activelearn/select.ts), and knows nothing of the truth. At each budget the picked
 * frames' true labels train a challenger with the built-in trainer (fineTuneDetectorHead, the one the
 * training workflow runs), and the challenger's mAP@0.5 on held-out frames is the learning curve.
 * Random is the mean (and range) of RANDOM_SEEDS seeded draws of the same budget, in the same run.
 *
 * The pool is shaped like a drive: 16 near-identical consecutive frames of one scene, then 2 frames
 * each of 8 other scenes (motorcycle size, height, bus size drawn from a seed). Figures only.
 */
const BUDGETS = [1, 2, 4];
const RANDOM_SEEDS = [1, 2, 3];
const EPOCHS = 3;
const WIDTH = 640;

interface PoolFrame {
  id: string;
  image: LabelledImage;
  candidate: CandidateFrame;
}

function scene(random: () => number): VehicleScene {
  return {
    width: WIDTH,
    step: 0.03,
    motorcycleWidth: 0.14 + 0.3 * random(),
    motorcycleLift: 0.25 * random(),
    busHeight: 0.6 + 0.4 * random(),
  };
}

async function labelled(scenes: VehicleScene[], perScene: number, prefix: string): Promise<LabelledImage[]> {
  const out: LabelledImage[] = [];
  for (const [s, opts] of scenes.entries())
    for (const [i, f] of (await vehicleFrames(perScene, opts)).entries())
      out.push({
        id: `${prefix}-${String(s).padStart(2, '0')}-${String(i).padStart(2, '0')}`,
        jpeg: f.jpeg,
        boxes: [
          { bbox: f.truth.bus, classIndex: COCO_CLASSES.indexOf('bus') },
          { bbox: f.truth.motorcycle, classIndex: COCO_CLASSES.indexOf('bicycle') },
        ],
      });
  return out;
}

/** The pool auto-labelled by the shipped detector, with each frame's tiny-image embedding. */
async function autoLabel(images: LabelledImage[]): Promise<{ pool: PoolFrame[]; counts: ClassCounts }> {
  const config = loadConfig(process.env);
  const detector = await loadClosedSetDetector(config);
  const model = EMBEDDING_MODELS['tiny-image-v1'];
  const byClass = new Map<string, number>();
  const pool: PoolFrame[] = [];
  try {
    for (const image of images) {
      const frame = await decodeFrame(image.jpeg);
      const { run } = await detector.detect(frame);
      const objects: CandidateObject[] =
        run.status === 'ran'
          ? run.detections.map((d, i) => ({
              id: `${image.id}-${i}`,
              className: d.className,
              conf: d.score,
              entropy: null,
            }))
          : [];
      for (const o of objects) byClass.set(o.className, (byClass.get(o.className) ?? 0) + 1);
      const embedding = tinyImageDescriptor(await frame.scaled(model.width, model.height), model);
      pool.push({ id: image.id, image, candidate: { id: image.id, objects, embedding } });
    }
  } finally {
    await detector.release();
  }
  return { pool, counts: { total: [...byClass.values()].reduce((a, b) => a + b, 0), byClass } };
}

/** The untrained parent's figure: every run measures it on the same held-out frames. */
let parentMap50: number | undefined;

async function challengerMap50(
  parent: Buffer,
  train: LabelledImage[],
  val: LabelledImage[],
): Promise<number> {
  const result = await fineTuneDetectorHead({
    parent,
    train,
    val,
    config: { ...HEAD_FINETUNE_DEFAULTS, epochs: EPOCHS },
    onEpoch: async () => undefined,
  });
  parentMap50 = result.metrics.parent.map50;
  return result.metrics.trained.map50;
}

export async function run(): Promise<void> {
  const started = performance.now();
  const { models } = loadConfig(process.env);
  const parent = fs.readFileSync(path.resolve(models.dir, models.closedSetDetector));
  const random = seededRandom(2025, 0);
  const poolImages = [
    ...(await labelled([{ ...scene(random), step: 0.004 }], 16, 'drive')),
    ...(await labelled(
      Array.from({ length: 8 }, () => scene(random)),
      2,
      'scene',
    )),
  ];
  const val = await labelled(
    Array.from({ length: 6 }, () => scene(random)),
    2,
    'val',
  );
  const { pool, counts } = await autoLabel(poolImages);
  const candidates = pool.filter((p) => p.candidate.objects.length > 0);
  const imageOf = new Map(pool.map((p) => [p.id, p.image]));
  console.log(
    `pool ${pool.length} frames (${candidates.length} with machine objects: ${[...counts.byClass].map(([c, n]) => `${c} ${n}`).join(', ')}), held-out ${val.length}; challenger: head-finetune, ${EPOCHS} epochs`,
  );
  console.log(
    `weights ${JSON.stringify(DEFAULT_WEIGHTS)}, threshold 0.8; random: mean of seeds ${RANDOM_SEEDS.join(', ')}`,
  );
  console.log(
    '  budget | selection mAP@0.5 | random mAP@0.5 mean [min, max] | selection picks from the 16-frame drive / random mean',
  );
  for (const budget of BUDGETS) {
    const picks = selectBatch(
      { frames: candidates.map((p) => p.candidate), counts, threshold: 0.8, weights: DEFAULT_WEIGHTS },
      budget,
    ).map((p) => p.frame_id);
    const selected = await challengerMap50(
      parent,
      picks.map((id) => imageOf.get(id)!),
      val,
    );
    const randomRuns: number[] = [];
    const randomDrive: number[] = [];
    for (const seed of RANDOM_SEEDS) {
      const drawn = shuffle([...pool], seededRandom(seed, budget)).slice(0, budget);
      randomDrive.push(drawn.filter((p) => p.id.startsWith('drive')).length);
      randomRuns.push(
        await challengerMap50(
          parent,
          drawn.map((p) => p.image),
          val,
        ),
      );
    }
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    console.log(
      `  ${String(budget).padStart(6)} | ${selected.toFixed(3).padStart(17)} | ${mean(randomRuns).toFixed(3)} [${Math.min(...randomRuns).toFixed(3)}, ${Math.max(...randomRuns).toFixed(3)}]`.padEnd(
        68,
      ) + ` | ${picks.filter((id) => id.startsWith('drive')).length} / ${mean(randomDrive).toFixed(1)}`,
    );
  }
  console.log(
    `  parent (the champion, untrained) mAP@0.5 on the held-out frames: ${parentMap50?.toFixed(3)}`,
  );
  console.log(`  whole bench: ${((performance.now() - started) / 1000).toFixed(1)} s`);
}
