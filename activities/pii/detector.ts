import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import type { AppConfig } from '../../core/config';
import { UnavailableError } from '../../core/errors';
import { nms, type Box, type ScoredBox } from '../../core/geometry';
import {
  packRectangles,
  subMap,
  writePlanar,
  writeResampledPlanar,
  type InputNorm,
  type PackOptions,
  type Placement,
} from '../../core/pii/packing';
import { isPlateShaped, mergeTextLines, toRedactionRegion, type PiiRegion } from '../../core/pii/regions';
import { FACE_RULES, PLATE_RULES, searchCrops, type SearchBox, type SearchCrop } from '../../core/pii/search';
import { decodeTextMap } from '../../core/pii/text-map';
import { decodeYunet, type YunetOutputs } from '../../core/pii/yunet';
import {
  residentClosedSetDetector,
  type ClosedSetDetector,
  type ResidentClosedSetDetector,
} from '../detect/closed-set';
import { decodeFrame, type FrameImage } from '../detect/frame-image';
import { startInferenceThread, type InferenceThread } from '../detect/inference-thread';

/**
 * The PII detectors, on the CPU inside the activity (no GPU slot needed): YuNet for faces,
 * PaddleOCR's DB-net text detector for licence plates and, in the `boxes` search, the closed-set
 * detector for where vehicles and people are (docs/pii.md). Sessions load once per process.
 */
export interface PiiDetection {
  width: number;
  height: number;
  faces: ScoredBox[];
  plates: ScoredBox[];
  regions: PiiRegion[];
  /** The detector's vehicle and person boxes above their score floors (none in the `frame` search). */
  boxes: SearchBox[];
  /** The decoded frame (RGB, 3 channels), reused by the redaction. */
  rgb: Buffer;
  /** Model files, for the audit's `model_versions`. */
  versions: Record<string, string>;
}

/** A model on the PII threads: its session's name there and its tensors. */
interface ThreadModel {
  name: 'face' | 'text';
  input: string;
  outputs: string[];
}

interface PiiModels {
  threads: InferenceThread[];
  face: ThreadModel;
  text: ThreadModel;
  versions: { face: string; text: string };
}

type PiiConfig = Pick<AppConfig, 'models' | 'pii' | 'autolabel'>;

const cache = new Map<string, Promise<PiiModels>>();

/**
 * Threads the PII models run on, each holding both: one per core, at most four. onnxruntime-node
 * runs a model on the calling thread, so on the main thread the two frames in flight took turns
 * on one core while the other idled (measured: the event loop 90 % busy at 136 ms a frame); on
 * threads of their own a frame's models run beside the other frame's decoding and packing.
 */
const PII_THREADS = Math.max(1, Math.min(4, os.availableParallelism()));

async function readModel(file: string, what: string, setting: string): Promise<Buffer> {
  if (!fs.existsSync(file))
    throw new UnavailableError(`${what} model is not there: ${file} does not exist (set ${setting})`);
  return fs.promises.readFile(file);
}

/**
 * Both models opened on every PII thread. One intra-op thread each: the threads and the frames in
 * flight keep the cores busy (docs/pii.md "Cost"); every graph optimisation, which measured some
 * 8 % less CPU than onnxruntime-node's default on DB-net.
 */
async function openOnThreads(faceBytes: Buffer, textBytes: Buffer): Promise<Omit<PiiModels, 'versions'>> {
  const threads = Array.from({ length: PII_THREADS }, () => startInferenceThread('PII'));
  const options = {
    executionProviders: ['cpu'],
    intraOpNumThreads: 1,
    graphOptimizationLevel: 'all' as const,
  };
  try {
    const opened = await Promise.all(
      threads.map(async (t) => ({
        face: await t.open('face', faceBytes, options),
        text: await t.open('text', textBytes, options),
      })),
    );
    const { face, text } = opened[0]!;
    return {
      threads,
      face: { name: 'face', input: face.inputNames[0]!, outputs: face.outputNames },
      text: { name: 'text', input: text.inputNames[0]!, outputs: text.outputNames.slice(0, 1) },
    };
  } catch (err) {
    await Promise.all(threads.map((t) => t.terminate()));
    throw err;
  }
}

function loadPiiModels(config: PiiConfig): Promise<PiiModels> {
  const faceFile = path.resolve(config.models.dir, config.models.faceDetector);
  const int8 = config.pii.textPrecision === 'int8';
  const textFile = int8 ? config.pii.textDetectorInt8 : config.pii.textDetector;
  const key = `${faceFile}|${textFile}`;
  let models = cache.get(key);
  if (!models) {
    models = (async () => {
      const faceBytes = await readModel(
        faceFile,
        'face detector',
        'APP_MODELS__DIR / APP_MODELS__FACE_DETECTOR',
      );
      const textBytes = await readModel(
        textFile,
        int8 ? 'int8 licence-plate text detector' : 'licence-plate text detector',
        int8
          ? 'APP_PII__TEXT_DETECTOR_INT8; `infra/pii-models.sh install` derives it, or set APP_PII__TEXT_PRECISION=fp32'
          : 'APP_PII__TEXT_DETECTOR',
      );
      return {
        ...(await openOnThreads(faceBytes, textBytes)),
        versions: { face: path.basename(faceFile), text: path.basename(textFile) },
      };
    })();
    models.catch(() => cache.delete(key));
    cache.set(key, models);
  }
  return models;
}

const detectors = new Map<string, ResidentClosedSetDetector>();

/**
 * The closed-set detector of auto-label (activities/detect/closed-set.ts), kept for the life of the
 * process, on the CPU whatever device auto-label uses (the PII pass takes no GPU slot), unsliced
 * (a vehicle whose plate could be read is tall enough for the whole frame), decoding down to the
 * lower of the PII pass's score floors: a missed box is a plate or face left unredacted, a false
 * one costs only a search.
 */
function boxDetector(config: PiiConfig): ResidentClosedSetDetector {
  const models = { ...config.models, device: 'cpu' as const };
  const minScore = Math.min(config.pii.vehicleMinScore, config.pii.personMinScore);
  const autolabel = { ...config.autolabel, minScore };
  const key = [path.resolve(models.dir, models.closedSetDetector), autolabel.minScore, autolabel.nmsIou].join(
    '|',
  );
  let detector = detectors.get(key);
  if (!detector) {
    detector = residentClosedSetDetector({ models, autolabel });
    detectors.set(key, detector);
  }
  return detector;
}

/**
 * How crops are packed (core/pii/packing.ts): 16 px of empty input between them, which no box of
 * DB-net's or YuNet's spans; inputs of up to 768×416, the size at which the detectors cost least
 * per pixel.
 */
const PACKING: PackOptions = { gap: 16, align: 32, maxWidth: 768, maxHeight: 416 };
const YUNET_NORM: InputNorm = { scale: 1, mean: [0, 0, 0], std: [1, 1, 1] };
const DB_NORM: InputNorm = { scale: 1 / 255, mean: [0.485, 0.456, 0.406], std: [0.229, 0.224, 0.225] };

/**
 * Crops shrunk further than this (the whole frame for faces) are resampled by sharp, whose wide
 * kernels run vectorised; the others — most crops, small, at scales near or above 1 — in one pass
 * of our own into the input, without sharp's per-call cost (core/pii/packing writeResampledPlanar).
 */
const SHARP_BELOW_SCALE = 0.5;

interface PackedInput {
  width: number;
  height: number;
  data: Float32Array;
  /** The crops on this input, each with its place. */
  held: Array<{ crop: SearchCrop; at: Placement }>;
}

/** The crops cut from the frame, scaled, packed on as few inputs as their size allows and normalised. */
async function packCrops(
  rgb: Buffer,
  frame: { width: number; height: number },
  crops: readonly SearchCrop[],
  norm: InputNorm,
): Promise<PackedInput[]> {
  const sizes = crops.map((c) => ({
    width: Math.max(1, Math.round(c.width * c.scale)),
    height: Math.max(1, Math.round(c.height * c.scale)),
  }));
  const { inputs, placements } = packRectangles(sizes, PACKING);
  const packed: PackedInput[] = inputs.map(({ width, height }) => ({
    width,
    height,
    data: new Float32Array(3 * width * height),
    held: [],
  }));
  await Promise.all(
    crops.map(async (crop, i) => {
      const at = placements[i]!;
      const input = packed[at.input]!;
      input.held.push({ crop, at });
      if (crop.scale >= SHARP_BELOW_SCALE) {
        writeResampledPlanar(rgb, frame.width, crop, input.data, input.width, at, norm);
        return;
      }
      const pixels = await sharp(rgb, { raw: { width: frame.width, height: frame.height, channels: 3 } })
        .extract({ left: crop.left, top: crop.top, width: crop.width, height: crop.height })
        .resize(at.width, at.height, { fit: 'fill' })
        .raw()
        .toBuffer();
      writePlanar(pixels, at.width, at.height, input.data, input.width, at, norm);
    }),
  );
  return packed;
}

/** Every packed input through one model, each on the least busy PII thread. */
const runAll = (models: PiiModels, model: ThreadModel, inputs: readonly PackedInput[]) =>
  Promise.all(
    inputs.map(async (input) => {
      const thread = models.threads.reduce((a, b) => (b.pending() < a.pending() ? b : a));
      const feeds = { [model.input]: { data: input.data, dims: [1, 3, input.height, input.width] } };
      return (await thread.run(model.name, feeds, model.outputs)).outputs;
    }),
  );

/** A box found in a crop's place, in frame pixels. */
const toFrame = ([x1, y1, x2, y2]: Box, c: SearchCrop, p: Placement): Box => {
  const sx = c.width / p.width;
  const sy = c.height / p.height;
  return [c.left + x1 * sx, c.top + y1 * sy, c.left + x2 * sx, c.top + y2 * sy];
};

async function facesOn(
  models: PiiModels,
  rgb: Buffer,
  frame: { width: number; height: number },
  crops: readonly SearchCrop[],
  minScore: number,
): Promise<ScoredBox[]> {
  const inputs = await packCrops(rgb, frame, crops, YUNET_NORM);
  const outs = await runAll(models, models.face, inputs);
  return inputs.flatMap((input, k) => {
    const outputs: YunetOutputs = {};
    for (const [name, t] of Object.entries(outs[k]!)) outputs[name] = t.data;
    // Each face belongs to the crop its centre lies in; the gaps keep it from reaching another.
    return decodeYunet(outputs, input.width, input.height, { minScore }).flatMap((f) => {
      const cx = (f.box[0] + f.box[2]) / 2;
      const cy = (f.box[1] + f.box[3]) / 2;
      const held = input.held.find(
        ({ at }) => cx >= at.x && cx < at.x + at.width && cy >= at.y && cy < at.y + at.height,
      );
      if (!held) return [];
      const { crop, at } = held;
      const inside: Box = [
        Math.max(at.x, f.box[0]) - at.x,
        Math.max(at.y, f.box[1]) - at.y,
        Math.min(at.x + at.width, f.box[2]) - at.x,
        Math.min(at.y + at.height, f.box[3]) - at.y,
      ];
      return [{ score: f.score, box: toFrame(inside, crop, at) }];
    });
  });
}

async function textOn(
  models: PiiModels,
  rgb: Buffer,
  frame: { width: number; height: number },
  crops: readonly SearchCrop[],
  thresholds: { binaryThreshold: number; minBoxScore: number },
): Promise<ScoredBox[]> {
  const inputs = await packCrops(rgb, frame, crops, DB_NORM);
  const outs = await runAll(models, models.text, inputs);
  return inputs.flatMap((input, k) => {
    const map = outs[k]![models.text.outputs[0]!]!;
    const [, , mh, mw] = map.dims;
    if (mw !== input.width || mh !== input.height)
      throw new UnavailableError(
        `licence-plate text detector ${models.versions.text} does not fit DB-net: its map is ${mw}×${mh} for an input of ${input.width}×${input.height}`,
      );
    // Each crop's part of the map is decoded on its own, so no text region runs from one into another.
    return input.held.flatMap(({ crop, at }) =>
      decodeTextMap(subMap(map.data, mw, at), at.width, at.height, thresholds).map((b) => ({
        ...b,
        box: toFrame(b.box, crop, at),
      })),
    );
  });
}

/** The whole frame as a crop, at most `maxSide` on its longer side. */
const wholeFrame = (width: number, height: number, maxSide: number): SearchCrop => ({
  left: 0,
  top: 0,
  width,
  height,
  scale: Math.min(1, maxSide / Math.max(width, height)),
});

/** The detector's vehicle and person boxes above their score floors. */
async function searchBoxes(
  detector: ClosedSetDetector,
  frame: FrameImage,
  pii: PiiConfig['pii'],
): Promise<SearchBox[]> {
  const floor = (className: string): number =>
    PLATE_RULES[className] ? pii.vehicleMinScore : FACE_RULES[className] ? pii.personMinScore : Infinity;
  const { run } = await detector.detect(frame);
  return (run.status === 'ran' ? run.detections : [])
    .filter((d) => d.score >= floor(d.className))
    .map((d) => ({ box: d.box, className: d.className }));
}

export async function detectPii(config: PiiConfig, image: Buffer): Promise<PiiDetection> {
  const { pii } = config;
  const models = await loadPiiModels(config);
  const detector = pii.search === 'boxes' ? await boxDetector(config).acquire() : undefined;
  const frame = await decodeFrame(image);
  const { width, height } = frame;
  // The detector runs on its own thread while the full frame is decoded here.
  const [rgb, boxes] = await Promise.all([
    frame.pixels(),
    detector ? searchBoxes(detector, frame, pii) : Promise.resolve([]),
  ]);
  const whole = wholeFrame(width, height, pii.faceMaxSide);
  const faceCrops = searchCrops(boxes, FACE_RULES, frame, {
    targetPx: pii.faceCropPx,
    maxUpscale: pii.faceMaxUpscale,
    minPx: pii.minRegionPx,
    coveredScale: whole.scale,
  });
  const textCrops =
    pii.search === 'frame'
      ? [wholeFrame(width, height, pii.detectMaxSide)]
      : searchCrops(boxes, PLATE_RULES, frame, {
          targetPx: pii.plateTextPx,
          maxUpscale: pii.plateMaxUpscale,
          minPx: pii.minRegionPx,
        });
  const [found, text] = await Promise.all([
    facesOn(models, rgb, frame, [whole, ...faceCrops], pii.faceMinScore),
    textOn(models, rgb, frame, textCrops, {
      binaryThreshold: pii.textBinaryThreshold,
      minBoxScore: pii.textMinBoxScore,
    }),
  ]);
  // A face seen both on the whole frame and in its person's crop is one face.
  const faces = nms(found, 0.3);
  const plates = mergeTextLines(text).filter((b) => isPlateShaped(b, width, height));
  const regions = [
    ...faces.map((b) => toRedactionRegion('face', b, width, height)),
    ...plates.map((b) => toRedactionRegion('plate', b, width, height)),
  ];
  const versions = { ...models.versions, ...(detector ? { detector: detector.model } : {}) };
  return { width, height, faces, plates, regions, boxes, rgb, versions };
}
