import { setImmediate as yieldToOthers } from 'node:timers/promises';
import * as ort from 'onnxruntime-node';
import { decodeYolox, letterbox, yoloxInput, type Letterbox } from '../../core/detect/yolox';
import { DomainError, InputError, RefusedError } from '../../core/errors';
import type { Box } from '../../core/geometry';
import {
  exposeTensors,
  readOnnx,
  setInitializerFloats,
  writeOnnx,
  type OnnxModel,
} from '../../core/onnx/graph';
import { Adam, ADAM_DEFAULTS, cosineRate } from '../../core/training/adam';
import {
  anchorBox,
  anchorGrid,
  assignAnchors,
  DEFAULT_ASSIGN,
  type AnchorGrid,
} from '../../core/training/assign';
import {
  NotYoloxDetectorError,
  gatherFeatures,
  headOutput,
  headWeights,
  trainedInitializers,
  yoloxHeadOf,
  type LevelFeatures,
  type YoloxHead,
} from '../../core/training/head';
import {
  anchorPenalty,
  meanLoss,
  zeroGradient,
  type HeadsTrained,
  type Samples,
} from '../../core/training/loss';
import { detectionMetrics, type DetectionMetrics, type EvalImage } from '../../core/training/metrics';
import { sampleWithoutReplacement, seededRandom, shuffle } from '../../core/training/random';
import { decodeFrame } from '../detect/frame-image';

/**
 * The built-in trainer (docs/training-trainer.md): fine-tunes the prediction convolutions of a
 * YOLOX-family ONNX model's head on labelled images. The backbone and neck run once per image in
 * onnxruntime to give the features the head reads; the head's 1×1 convolutions then learn in plain
 * TypeScript (Adam on float32), the new weights are written back into the graph, and the parent and
 * the trained file are both run over the validation images to measure what changed.
 */
export { NotYoloxDetectorError };

/** `shouldStop()` answered true: the job was cancelled between two steps. */
export class TrainingCancelled extends DomainError {}

/** One labelled image of a training or validation split; boxes in image pixels [x1, y1, x2, y2]. */
export interface LabelledImage {
  id: string;
  jpeg: Buffer;
  /** `classIndex`: the index of the class in the parent model's output (COCO-80 for YOLOX). */
  boxes: Array<{ bbox: [number, number, number, number]; classIndex: number }>;
}

export interface HeadFinetuneConfig {
  epochs: number;
  learningRate: number;
  /** Anchor samples per optimisation step. */
  batchSize: number;
  /** Which 1×1 prediction convolutions learn: class scores, objectness, or both. */
  heads: Array<'cls' | 'obj'>;
  /** Pull toward the parent's weights (L2), so classes absent from the data are not forgotten. */
  anchorL2: number;
  seed: number;
  /** Objectness negatives sampled per positive anchor of an image (default 4; used when `obj` learns). */
  negativesPerPositive?: number;
  /** Decoder score floor for the validation metrics (default 0.01, YOLOX's evaluation setting). */
  evalMinScore?: number;
  /** Decoder NMS IoU for the validation metrics (default 0.65, YOLOX's evaluation setting). */
  evalNmsIou?: number;
}

/** Defaults a job that names only its data may start from (docs/training-trainer.md, "Config"). */
export const HEAD_FINETUNE_DEFAULTS: Required<HeadFinetuneConfig> = {
  epochs: 15,
  learningRate: 0.003,
  batchSize: 64,
  heads: ['cls', 'obj'],
  anchorL2: 10,
  seed: 0,
  negativesPerPositive: 4,
  evalMinScore: 0.01,
  evalNmsIou: 0.65,
};

/** What a resumed attempt needs: the epoch reached and the head weights after it. */
export interface TrainingCheckpoint {
  epoch: number;
  /** Initializer name → values. */
  weights: Record<string, number[]>;
  /**
   * Adam's state after that epoch: steps taken and its moments (float32, first then second, in the
   * order of `weights`' keys), base64. Without it a resumed job restarts the moments, and its
   * weights then drift from those of an uninterrupted run.
   */
  optimizer?: { step: number; moments: string };
}

export interface EpochReport {
  epoch: number;
  epochs: number;
  trainLoss: number;
  valLoss: number;
  /** The validation loss of the parent's head, before any step: the curve's starting point (the same in every report). */
  parentValLoss?: number;
  /** Validation metrics after this epoch: mAP@0.5 and AP@0.5 per class index present in the split. */
  metrics: { map50: number; ap50ByClass: Record<string, number> };
  checkpoint: TrainingCheckpoint;
}

export interface HeadFinetuneResult {
  /** The trained model file. */
  onnx: Uint8Array;
  epochs: number;
  /** Validation metrics of the parent and of the trained model, measured by running both files. */
  metrics: {
    parent: { map50: number; ap50ByClass: Record<string, number> };
    trained: { map50: number; ap50ByClass: Record<string, number> };
    trainImages: number;
    valImages: number;
    trainBoxes: number;
  };
}

export interface HeadFinetuneInput {
  parent: Uint8Array;
  train: LabelledImage[];
  val: LabelledImage[];
  config: HeadFinetuneConfig;
  resumeFrom?: TrainingCheckpoint;
  /** Called after every epoch (persist the curve point and the checkpoint, heartbeat). */
  onEpoch: (report: EpochReport) => Promise<void>;
  /** Checked between steps; true stops training with a cancellation error. */
  shouldStop?: () => boolean;
}

/** Random streams of one job (random.ts): each choice draws from its own. */
const STREAM = { epochOrder: 1, trainNegatives: 2, valNegatives: 3 } as const;

function checkConfig(input: HeadFinetuneInput, classes: number): Required<HeadFinetuneConfig> {
  const config = { ...HEAD_FINETUNE_DEFAULTS, ...input.config };
  const errors: Array<{ field: string; message: string }> = [];
  const need = (ok: boolean, field: string, message: string) => ok || errors.push({ field, message });
  need(Number.isInteger(config.epochs) && config.epochs >= 1, 'epochs', 'must be an integer ≥ 1');
  need(config.learningRate > 0 && Number.isFinite(config.learningRate), 'learningRate', 'must be > 0');
  need(Number.isInteger(config.batchSize) && config.batchSize >= 1, 'batchSize', 'must be an integer ≥ 1');
  need(
    config.heads.length > 0 && config.heads.every((h) => h === 'cls' || h === 'obj'),
    'heads',
    'must name cls, obj or both',
  );
  need(config.anchorL2 >= 0 && Number.isFinite(config.anchorL2), 'anchorL2', 'must be ≥ 0');
  need(Number.isInteger(config.seed), 'seed', 'must be an integer');
  need(config.negativesPerPositive >= 0, 'negativesPerPositive', 'must be ≥ 0');
  need(config.evalMinScore > 0 && config.evalMinScore < 1, 'evalMinScore', 'must be in (0, 1)');
  need(config.evalNmsIou > 0 && config.evalNmsIou <= 1, 'evalNmsIou', 'must be in (0, 1]');
  const ids = new Set<string>();
  for (const [split, images] of [
    ['train', input.train],
    ['val', input.val],
  ] as const) {
    if (!images.some((im) => im.boxes.length))
      errors.push({
        field: split,
        message: `the ${split} split holds no labelled box: nothing to learn or measure`,
      });
    for (const im of images) {
      need(!ids.has(im.id), split, `image id ${im.id} appears twice`);
      ids.add(im.id);
      for (const b of im.boxes)
        need(
          Number.isInteger(b.classIndex) && b.classIndex >= 0 && b.classIndex < classes,
          split,
          `image ${im.id}: class index ${b.classIndex} is not one of the model's ${classes} classes`,
        );
    }
  }
  if (errors.length)
    throw new InputError(
      `training input refused: ${errors.map((e) => `${e.field} ${e.message}`).join('; ')}`,
      errors,
    );
  return config;
}

/** The frame letterboxed into the model's input, as closed-set detection prepares it. */
async function prepare(
  image: LabelledImage,
  inputSize: number,
): Promise<{ lb: Letterbox; data: Float32Array }> {
  const frame = await decodeFrame(image.jpeg).catch((err: Error) => {
    throw new InputError(`image ${image.id} cannot be decoded: ${err.message}`);
  });
  const lb = letterbox(frame.width, frame.height, inputSize);
  return { lb, data: yoloxInput(await frame.scaled(lb.scaledWidth, lb.scaledHeight), lb) };
}

/** Image pixels → input pixels, clipped to the image first. */
function toInput(b: readonly number[], lb: Letterbox): Box {
  const sx = lb.scaledWidth / lb.width;
  const sy = lb.scaledHeight / lb.height;
  const cx = (v: number) => Math.min(lb.width, Math.max(0, v)) * sx + lb.padX;
  const cy = (v: number) => Math.min(lb.height, Math.max(0, v)) * sy + lb.padY;
  return [cx(b[0]!), cy(b[1]!), cx(b[2]!), cy(b[3]!)];
}

interface Extracted {
  lb: Letterbox;
  raw: Float32Array;
  features: LevelFeatures;
}

/** The parent with the head's inputs made graph outputs: one run gives the features and the raw head. */
async function featureSession(parent: Uint8Array, head: YoloxHead) {
  const model = readOnnx(parent);
  exposeTensors(
    model,
    head.levels.flatMap((l) => [l.cls.input, l.obj.input]),
  );
  const session = await ort.InferenceSession.create(writeOnnx(model), { executionProviders: ['cpu'] });
  const grid = anchorGrid(head.inputSize, head.strides);
  const extract = async (image: LabelledImage): Promise<Extracted> => {
    const { lb, data } = await prepare(image, head.inputSize);
    const size = head.inputSize;
    const out = await session.run({ [head.inputName]: new ort.Tensor('float32', data, [1, 3, size, size]) });
    const map = (name: string, l: number): Float32Array => {
      const t = out[name]!;
      const cells = (size / head.strides[l]!) ** 2;
      if (t.dims.join('×') !== `1×${head.channels}×${Math.sqrt(cells)}×${Math.sqrt(cells)}`)
        throw new NotYoloxDetectorError(
          `not a YOLOX-family detector: ${name} is ${t.dims.join('×')}, not the features of a stride-${head.strides[l]} grid`,
        );
      return t.data as Float32Array;
    };
    const raw = out[head.outputName]!;
    if (raw.data.length !== grid.count * (5 + head.classes))
      throw new NotYoloxDetectorError(
        `not a YOLOX-family detector: its output is ${raw.dims.join('×')}, not 1×${grid.count}×${5 + head.classes}`,
      );
    return {
      lb,
      raw: raw.data as Float32Array,
      features: {
        cls: head.levels.map((l, i) => map(l.cls.input, i)),
        obj: head.levels.map((l, i) => map(l.obj.input, i)),
      },
    };
  };
  return { grid, extract, release: () => session.release() };
}

/** Packs anchor samples of many images into one Samples. */
function sampleCollector(channels: number) {
  const parts: Array<{ level: number[]; target: number[]; cls: Float32Array; obj: Float32Array }> = [];
  return {
    add(ex: Extracted, grid: AnchorGrid, picks: ReadonlyArray<{ anchor: number; target: number }>): void {
      const cls = new Float32Array(picks.length * channels);
      const obj = new Float32Array(picks.length * channels);
      picks.forEach(({ anchor }, j) => {
        const l = grid.level[anchor]!;
        const cells = (grid.levelStart[l + 1] ?? grid.count) - grid.levelStart[l]!;
        const index = anchor - grid.levelStart[l]!;
        gatherFeatures(ex.features.cls[l]!, cells, index, channels, cls, j * channels);
        gatherFeatures(ex.features.obj[l]!, cells, index, channels, obj, j * channels);
      });
      parts.push({
        level: picks.map((p) => grid.level[p.anchor]!),
        target: picks.map((p) => p.target),
        cls,
        obj,
      });
    },
    samples(): Samples {
      const count = parts.reduce((n, p) => n + p.level.length, 0);
      const out: Samples = {
        channels,
        count,
        level: Uint8Array.from(parts.flatMap((p) => p.level)),
        target: Int16Array.from(parts.flatMap((p) => p.target)),
        clsFeatures: new Float32Array(count * channels),
        objFeatures: new Float32Array(count * channels),
      };
      let at = 0;
      for (const p of parts) {
        out.clsFeatures.set(p.cls, at);
        out.objFeatures.set(p.obj, at);
        at += p.cls.length;
      }
      return out;
    },
  };
}

/**
 * The positives of an image and a seeded sample of its clear negatives (anchors no box wanted as a
 * candidate): `negatives` per positive, and as many for an image without boxes as for one positive.
 */
function picksOf(
  image: LabelledImage,
  ex: Extracted,
  grid: AnchorGrid,
  head: YoloxHead,
  negatives: number,
  random: () => number,
): Array<{ anchor: number; target: number }> {
  const { positives, candidate } = assignAnchors(
    grid,
    image.boxes.map((b) => ({ box: toInput(b.bbox, ex.lb), classIndex: b.classIndex })),
    { ...DEFAULT_ASSIGN, predicted: (a) => anchorBox(ex.raw, grid, head.classes, a) },
  );
  const clear: number[] = [];
  for (let a = 0; a < grid.count; a++) if (!candidate[a]) clear.push(a);
  return [
    ...positives.map((p) => ({ anchor: p.anchor, target: p.classIndex })),
    ...sampleWithoutReplacement(clear, negatives * Math.max(1, positives.length), random).map((anchor) => ({
      anchor,
      target: -1,
    })),
  ];
}

interface ValImage {
  image: LabelledImage;
  lb: Letterbox;
  raw: Float32Array;
  features: LevelFeatures;
}

function decodeOpts(config: Required<HeadFinetuneConfig>) {
  return { minScore: config.evalMinScore, nmsIou: config.evalNmsIou };
}

const floatsBase64 = (a: Float32Array): string =>
  Buffer.from(a.buffer, a.byteOffset, a.byteLength).toString('base64');

function floatsFromBase64(s: string): Float32Array {
  const bytes = Buffer.from(s, 'base64');
  const copy = new Uint8Array(bytes); // aligned
  return new Float32Array(copy.buffer, 0, copy.byteLength / 4);
}

/** The learning parameters and Adam over them, from the parent or a checkpoint. */
function parametersOf(
  model: OnnxModel,
  head: YoloxHead,
  heads: HeadsTrained,
  config: Required<HeadFinetuneConfig>,
  resumeFrom: TrainingCheckpoint | undefined,
) {
  const parentLevels = headWeights(model, head);
  const levels = headWeights(model, head);
  const named = trainedInitializers(head, levels, heads);
  const parentNamed = trainedInitializers(head, parentLevels, heads);
  const adam = new Adam(
    [...named.values()].map((v) => v.length),
    { ...ADAM_DEFAULTS, learningRate: config.learningRate },
  );
  if (resumeFrom) {
    const misfit = (why: string) =>
      new InputError(`the checkpoint does not fit this job: ${why}`, [{ field: 'resumeFrom', message: why }]);
    if (!(Number.isInteger(resumeFrom.epoch) && resumeFrom.epoch >= 0 && resumeFrom.epoch <= config.epochs))
      throw misfit(`epoch ${resumeFrom.epoch} is outside 0…${config.epochs}`);
    const names = Object.keys(resumeFrom.weights).sort().join(',');
    if (names !== [...named.keys()].sort().join(','))
      throw misfit(`it holds ${names || 'no weights'}; this job trains ${[...named.keys()].join(',')}`);
    for (const [name, values] of named) {
      const saved = resumeFrom.weights[name]!;
      if (saved.length !== values.length)
        throw misfit(`${name} holds ${saved.length} values, not ${values.length}`);
      values.set(saved);
    }
    if (resumeFrom.optimizer) {
      try {
        adam.restore({
          step: resumeFrom.optimizer.step,
          moments: floatsFromBase64(resumeFrom.optimizer.moments),
        });
      } catch (err) {
        throw misfit((err as Error).message);
      }
    }
  }
  const checkpoint = (epoch: number): TrainingCheckpoint => {
    const state = adam.state();
    return {
      epoch,
      weights: Object.fromEntries([...named].map(([name, v]) => [name, Array.from(v)])),
      optimizer: { step: state.step, moments: floatsBase64(state.moments) },
    };
  };
  return {
    parentLevels,
    levels,
    values: [...named.values()],
    parents: [...parentNamed.values()],
    adam,
    checkpoint,
  };
}

/** An image as the evaluator sees it: its size from the letterbox, its boxes as labelled. */
const evalImage = (image: LabelledImage, lb: Letterbox): EvalImage => ({
  id: image.id,
  width: lb.width,
  height: lb.height,
  boxes: image.boxes,
});

/** Runs a model file over the validation images with the real decoder and evaluator. */
async function measureFile(
  bytes: Uint8Array,
  head: YoloxHead,
  images: readonly LabelledImage[],
  config: Required<HeadFinetuneConfig>,
  stop: () => void,
): Promise<DetectionMetrics> {
  const session = await ort.InferenceSession.create(bytes, { executionProviders: ['cpu'] });
  try {
    const seen: EvalImage[] = [];
    const detections = [];
    for (const image of images) {
      stop();
      const { lb, data } = await prepare(image, head.inputSize);
      const size = head.inputSize;
      const out = await session.run({
        [head.inputName]: new ort.Tensor('float32', data, [1, 3, size, size]),
      });
      seen.push(evalImage(image, lb));
      detections.push(
        decodeYolox(out[head.outputName]!.data as Float32Array, lb, head.classes, decodeOpts(config)),
      );
    }
    return detectionMetrics(seen, detections);
  } finally {
    await session.release();
  }
}

/**
 * Runs the backbone once per image — it never runs again during the epochs — and keeps what the
 * epochs need: each image's anchor samples and, for validation, the parent's raw head and the
 * feature maps the metrics after each epoch recompute the head from.
 */
async function extractAll(
  input: HeadFinetuneInput,
  head: YoloxHead,
  heads: HeadsTrained,
  config: Required<HeadFinetuneConfig>,
  stop: () => void,
) {
  const features = await featureSession(input.parent, head);
  const { grid } = features;
  const negatives = heads.obj ? config.negativesPerPositive : 0;
  const val: ValImage[] = [];
  const collect = async (images: readonly LabelledImage[], stream: number, keep: boolean) => {
    const samples = sampleCollector(head.channels);
    for (const [i, image] of images.entries()) {
      stop();
      const ex = await features.extract(image);
      samples.add(ex, grid, picksOf(image, ex, grid, head, negatives, seededRandom(config.seed, stream, i)));
      if (keep)
        val.push({
          image,
          lb: ex.lb,
          raw: ex.raw,
          features: heads.obj ? ex.features : { ...ex.features, obj: [] },
        });
    }
    return samples.samples();
  };
  try {
    const trainSet = await collect(input.train, STREAM.trainNegatives, false);
    const valSet = await collect(input.val, STREAM.valNegatives, true);
    return { grid, trainSet, valSet, val };
  } finally {
    await features.release();
  }
}

export async function fineTuneDetectorHead(input: HeadFinetuneInput): Promise<HeadFinetuneResult> {
  const stop = (): void => {
    if (input.shouldStop?.()) throw new TrainingCancelled('training cancelled');
  };
  let model: OnnxModel;
  try {
    model = readOnnx(input.parent);
  } catch (err) {
    throw new NotYoloxDetectorError(`not a YOLOX-family detector: ${(err as Error).message}`);
  }
  const head = yoloxHeadOf(model);
  const config = checkConfig(input, head.classes);
  const heads: HeadsTrained = { cls: config.heads.includes('cls'), obj: config.heads.includes('obj') };

  const { grid, trainSet, valSet, val } = await extractAll(input, head, heads, config, stop);
  const params = parametersOf(model, head, heads, config, input.resumeFrom);
  const { parentLevels, levels, values, parents, adam } = params;
  const grads = levels.map(zeroGradient);
  const gradList = [...trainedInitializers(head, grads, heads).values()];
  const order = Array.from({ length: trainSet.count }, (_, i) => i);
  const valImages = val.map((v) => evalImage(v.image, v.lb));
  const parentValLoss = meanLoss(parentLevels, valSet, heads);

  for (let epoch = input.resumeFrom?.epoch ?? 0; epoch < config.epochs; epoch++) {
    // The epoch's order comes from its own stream, so a resumed job replays the same epochs.
    shuffle(
      order.sort((a, b) => a - b),
      seededRandom(config.seed, STREAM.epochOrder, epoch),
    );
    let lossSum = 0;
    for (let b = 0; b < order.length; b += config.batchSize) {
      stop();
      const batch = order.slice(b, b + config.batchSize);
      for (const g of gradList) g.fill(0);
      lossSum += meanLoss(levels, trainSet, heads, batch, grads) * batch.length;
      values.forEach((v, j) => anchorPenalty(v, parents[j]!, config.anchorL2, gradList[j]));
      adam.step(
        values,
        gradList,
        cosineRate(config.learningRate, (epoch + b / order.length) / config.epochs),
      );
      // A step is milliseconds: yielding after each keeps heartbeats and cancellation flowing.
      await yieldToOthers();
    }
    const detections = val.map((v) =>
      decodeYolox(
        headOutput(v.raw, v.features, levels, grid, heads, config.evalMinScore),
        v.lb,
        head.classes,
        decodeOpts(config),
      ),
    );
    await input.onEpoch({
      epoch: epoch + 1,
      epochs: config.epochs,
      trainLoss: order.length ? lossSum / order.length : 0,
      valLoss: meanLoss(levels, valSet, heads),
      parentValLoss,
      metrics: detectionMetrics(valImages, detections),
      checkpoint: params.checkpoint(epoch + 1),
    });
  }

  const named = trainedInitializers(head, levels, heads);
  for (const [name, v] of named) setInitializerFloats(model, name, v);
  const changed = values.some((v, j) => v.some((x, i) => x !== parents[j]![i]));
  if (!changed)
    throw new RefusedError(
      `training left the head's weights exactly as the parent's (learning rate ${config.learningRate}, ${config.epochs} epochs): no new model to store`,
    );
  const onnx = writeOnnx(model);
  // Honest figures: both files run end to end over the validation images, not the cached features.
  const parent = await measureFile(input.parent, head, input.val, config, stop);
  const trained = await measureFile(onnx, head, input.val, config, stop);
  return {
    onnx,
    epochs: config.epochs,
    metrics: {
      parent,
      trained,
      trainImages: input.train.length,
      valImages: input.val.length,
      trainBoxes: input.train.reduce((n, im) => n + im.boxes.length, 0),
    },
  };
}
