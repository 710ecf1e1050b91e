import fs from 'node:fs';
import path from 'node:path';
import * as ort from 'onnxruntime-node';
import sharp from 'sharp';
import type { AppConfig } from '../../core/config';
import { UnavailableError } from '../../core/errors';
import { nms, type Box, type ScoredBox } from '../../core/geometry';
import {
  packRectangles,
  subMap,
  writePlanar,
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

interface PiiModels {
  face: ort.InferenceSession;
  text: ort.InferenceSession;
  versions: { face: string; text: string };
}

type PiiConfig = Pick<AppConfig, 'models' | 'pii' | 'autolabel'>;

const cache = new Map<string, Promise<PiiModels>>();

async function loadSession(file: string, what: string, setting: string): Promise<ort.InferenceSession> {
  if (!fs.existsSync(file))
    throw new UnavailableError(`${what} model is not there: ${file} does not exist (set ${setting})`);
  // One thread each: two frames in flight keep the cores busy (docs/pii.md "Cost"); every graph
  // optimisation, which measured some 8 % less CPU than onnxruntime-node's default on DB-net.
  return ort.InferenceSession.create(file, {
    executionProviders: ['cpu'],
    intraOpNumThreads: 1,
    graphOptimizationLevel: 'all',
  });
}

function loadPiiModels(config: PiiConfig): Promise<PiiModels> {
  const faceFile = path.resolve(config.models.dir, config.models.faceDetector);
  const int8 = config.pii.textPrecision === 'int8';
  const textFile = int8 ? config.pii.textDetectorInt8 : config.pii.textDetector;
  const key = `${faceFile}|${textFile}`;
  let models = cache.get(key);
  if (!models) {
    models = (async () => ({
      face: await loadSession(faceFile, 'face detector', 'APP_MODELS__DIR / APP_MODELS__FACE_DETECTOR'),
      text: await loadSession(
        textFile,
        int8 ? 'int8 licence-plate text detector' : 'licence-plate text detector',
        int8
          ? 'APP_PII__TEXT_DETECTOR_INT8; `infra/pii-models.sh install` derives it, or set APP_PII__TEXT_PRECISION=fp32'
          : 'APP_PII__TEXT_DETECTOR',
      ),
      versions: { face: path.basename(faceFile), text: path.basename(textFile) },
    }))();
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

/**
 * A session over every packed input at once: onnxruntime-node runs each call on a thread of its
 * own, so a frame alone on an idle machine uses every core.
 */
const runAll = (session: ort.InferenceSession, inputs: readonly PackedInput[]) =>
  Promise.all(
    inputs.map((input) =>
      session.run({
        [session.inputNames[0]!]: new ort.Tensor('float32', input.data, [1, 3, input.height, input.width]),
      }),
    ),
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
  const outs = await runAll(models.face, inputs);
  return inputs.flatMap((input, k) => {
    const outputs: YunetOutputs = {};
    for (const [name, t] of Object.entries(outs[k]!)) outputs[name] = t.data as Float32Array;
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
  const outs = await runAll(models.text, inputs);
  return inputs.flatMap((input, k) => {
    const map = outs[k]![models.text.outputNames[0]!]!;
    const [, , mh, mw] = map.dims as number[];
    if (mw !== input.width || mh !== input.height)
      throw new UnavailableError(
        `licence-plate text detector ${models.versions.text} does not fit DB-net: its map is ${mw}×${mh} for an input of ${input.width}×${input.height}`,
      );
    // Each crop's part of the map is decoded on its own, so no text region runs from one into another.
    return input.held.flatMap(({ crop, at }) =>
      decodeTextMap(subMap(map.data as Float32Array, mw, at), at.width, at.height, thresholds).map((b) => ({
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
