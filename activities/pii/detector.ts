import fs from 'node:fs';
import path from 'node:path';
import * as ort from 'onnxruntime-node';
import sharp from 'sharp';
import type { AppConfig } from '../../core/config';
import { UnavailableError } from '../../core/errors';
import { scaleBox, type ScoredBox } from '../../core/geometry';
import { isPlateShaped, mergeTextLines, toRedactionRegion, type PiiRegion } from '../../core/pii/regions';
import { textCrops } from '../../core/pii/cascade';
import { decodeTextMap, textInputSize } from '../../core/pii/text-map';
import { decodeYunet, yunetInputSide, type YunetOutputs } from '../../core/pii/yunet';

/**
 * The PII detectors, on the CPU inside the activity (no GPU slot needed): YuNet for faces and
 * PaddleOCR's DB-net text detector for licence plates. Sessions load once per process.
 */
export interface PiiDetection {
  width: number;
  height: number;
  faces: ScoredBox[];
  plates: ScoredBox[];
  regions: PiiRegion[];
  /** The decoded frame (RGB, 3 channels), reused by the redaction. */
  rgb: Buffer;
}

export interface PiiModels {
  face: ort.InferenceSession;
  text: ort.InferenceSession;
  versions: { face: string; text: string };
}

type PiiConfig = Pick<AppConfig, 'models' | 'pii'>;

const cache = new Map<string, Promise<PiiModels>>();

async function loadSession(file: string, what: string, setting: string): Promise<ort.InferenceSession> {
  if (!fs.existsSync(file))
    throw new UnavailableError(`${what} model is not there: ${file} does not exist (set ${setting})`);
  return ort.InferenceSession.create(file, { executionProviders: ['cpu'], intraOpNumThreads: 1 });
}

export function loadPiiModels(config: PiiConfig): Promise<PiiModels> {
  const faceFile = path.resolve(config.models.dir, config.models.faceDetector);
  const textFile = config.pii.textDetector;
  const key = `${faceFile}|${textFile}`;
  let models = cache.get(key);
  if (!models) {
    models = (async () => ({
      face: await loadSession(faceFile, 'face detector', 'APP_MODELS__DIR / APP_MODELS__FACE_DETECTOR'),
      text: await loadSession(textFile, 'licence-plate text detector', 'APP_PII__TEXT_DETECTOR'),
      versions: { face: path.basename(faceFile), text: path.basename(textFile) },
    }))();
    models.catch(() => cache.delete(key));
    cache.set(key, models);
  }
  return models;
}

/** Planar float32 BGR from packed RGB, with a per-channel (v - mean) / std in BGR order. */
function toBgrPlanar(
  rgb: Buffer,
  width: number,
  height: number,
  mean: readonly number[],
  std: readonly number[],
  scale: number,
): Float32Array {
  const plane = width * height;
  const out = new Float32Array(3 * plane);
  for (let i = 0; i < plane; i++) {
    for (let c = 0; c < 3; c++) out[c * plane + i] = (rgb[i * 3 + (2 - c)]! * scale - mean[c]!) / std[c]!;
  }
  return out;
}

const resizeRaw = (rgb: Buffer, w: number, h: number, toW: number, toH: number): Promise<Buffer> =>
  sharp(rgb, { raw: { width: w, height: h, channels: 3 } })
    .resize(toW, toH, { fit: 'fill' })
    .raw()
    .toBuffer();

/** Longest side a detector sees of a `w`×`h` frame, never upscaling: the scaled size. */
function fitSide(w: number, h: number, maxSide: number): { rw: number; rh: number } {
  const scale = Math.min(1, maxSide / Math.max(w, h));
  return { rw: Math.max(1, Math.round(w * scale)), rh: Math.max(1, Math.round(h * scale)) };
}

async function detectFaces(
  models: PiiModels,
  rgb: Buffer,
  w: number,
  h: number,
  config: PiiConfig,
): Promise<ScoredBox[]> {
  const { rw, rh } = fitSide(w, h, config.pii.faceMaxSide);
  const inW = yunetInputSide(rw);
  const inH = yunetInputSide(rh);
  // Pad right and bottom to multiples of 32 so coordinates need no offset.
  const padded = await sharp(rgb, { raw: { width: w, height: h, channels: 3 } })
    .resize(rw, rh, { fit: 'fill' })
    .extend({ right: inW - rw, bottom: inH - rh, background: { r: 0, g: 0, b: 0 } })
    .raw()
    .toBuffer();
  const input = new ort.Tensor('float32', toBgrPlanar(padded, inW, inH, [0, 0, 0], [1, 1, 1], 1), [
    1,
    3,
    inH,
    inW,
  ]);
  const out = await models.face.run({ [models.face.inputNames[0]!]: input });
  const outputs: YunetOutputs = {};
  for (const [name, tensor] of Object.entries(out)) outputs[name] = tensor.data as Float32Array;
  return decodeYunet(outputs, inW, inH, { minScore: config.pii.faceMinScore }).map((f) => ({
    ...f,
    box: scaleBox(f.box, w / rw, h / rh),
  }));
}

const DB_MEAN = [0.485, 0.456, 0.406];
const DB_STD = [0.229, 0.224, 0.225];

/** The text detector on `rgb` (w×h) resized to `size`: boxes in `rgb`'s pixels. */
async function runText(
  models: PiiModels,
  rgb: Buffer,
  w: number,
  h: number,
  size: { width: number; height: number },
  thresholds: { binaryThreshold: number; minBoxScore: number },
): Promise<ScoredBox[]> {
  const resized = await resizeRaw(rgb, w, h, size.width, size.height);
  const input = new ort.Tensor(
    'float32',
    toBgrPlanar(resized, size.width, size.height, DB_MEAN, DB_STD, 1 / 255),
    [1, 3, size.height, size.width],
  );
  const out = await models.text.run({ [models.text.inputNames[0]!]: input });
  const map = out[models.text.outputNames[0]!]!;
  const [, , mh, mw] = map.dims as number[];
  return decodeTextMap(map.data as Float32Array, mw!, mh!, thresholds).map((b) => ({
    ...b,
    box: scaleBox(b.box, w / mw!, h / mh!),
  }));
}

/** Text lower than this at the fine scale is upscaled in its crop: DB-net reads text from about this height well. */
const FINE_TEXT_HEIGHT = 16;

/**
 * Text in two passes (core/pii/cascade.ts): the whole frame at `textCoarseSide` finds where text
 * may be, with a lower box score so faint small text still makes a candidate; each candidate's
 * crop then runs at the scale the whole frame would have had at `detectMaxSide` (small text
 * upscaled), with the configured thresholds. The fine pass alone decides what is text. A coarse
 * side of 0 runs the fine pass on the whole frame instead (the single pass of before, slower).
 */
async function detectText(
  models: PiiModels,
  rgb: Buffer,
  w: number,
  h: number,
  config: PiiConfig,
): Promise<ScoredBox[]> {
  const fine = { binaryThreshold: config.pii.textBinaryThreshold, minBoxScore: config.pii.textMinBoxScore };
  if (!config.pii.textCoarseSide)
    return runText(models, rgb, w, h, textInputSize(w, h, config.pii.detectMaxSide), fine);
  const candidates = await runText(models, rgb, w, h, textInputSize(w, h, config.pii.textCoarseSide), {
    binaryThreshold: fine.binaryThreshold / 2,
    minBoxScore: fine.minBoxScore / 2,
  });
  const crops = textCrops(
    candidates.map((c) => c.box),
    w,
    h,
    { fineScale: Math.min(1, config.pii.detectMaxSide / Math.max(w, h)), minTextHeight: FINE_TEXT_HEIGHT },
  );
  const found: ScoredBox[] = [];
  for (const { box, scale } of crops) {
    const [x1, y1, x2, y2] = box;
    const cw = x2 - x1;
    const ch = y2 - y1;
    const crop = await sharp(rgb, { raw: { width: w, height: h, channels: 3 } })
      .extract({ left: x1, top: y1, width: cw, height: ch })
      .raw()
      .toBuffer();
    const size = textInputSize(cw * scale, ch * scale, Infinity);
    for (const b of await runText(models, crop, cw, ch, size, fine))
      found.push({ ...b, box: [b.box[0] + x1, b.box[1] + y1, b.box[2] + x1, b.box[3] + y1] });
  }
  return found;
}

export async function detectPii(
  config: PiiConfig,
  image: Buffer,
): Promise<PiiDetection & { versions: PiiModels['versions'] }> {
  const models = await loadPiiModels(config);
  const { data: rgb, info } = await sharp(image)
    .removeAlpha()
    .toColourspace('srgb')
    .raw()
    .toBuffer({ resolveWithObject: true });
  const { width, height } = info;
  const faces = await detectFaces(models, rgb, width, height, config);
  const plates = mergeTextLines(await detectText(models, rgb, width, height, config)).filter((b) =>
    isPlateShaped(b, width, height),
  );
  const regions = [
    ...faces.map((b) => toRedactionRegion('face', b, width, height)),
    ...plates.map((b) => toRedactionRegion('plate', b, width, height)),
  ];
  return { width, height, faces, plates, regions, rgb, versions: models.versions };
}
