import fs from 'node:fs/promises';
import * as ort from 'onnxruntime-node';
import sharp from 'sharp';
import type { AppConfig } from '../../core/config';
import { UnavailableError } from '../../core/errors';
import { cropRegion, type Box } from '../../core/geometry';
import { ctcDecode, parseDictionary } from '../../core/ocr/ctc';
import { lineMargin, planarBgr, recInputWidth, regionScale, REC_HEIGHT } from '../../core/ocr/geometry';
import { plateShape } from '../../core/ocr/plate';
import { decodeTextMap, textInputSize } from '../../core/pii/text-map';
import type { FrameImage } from '../detect/frame-image';

/**
 * PaddleOCR's PP-OCRv4 pipeline on the CPU: DB-net finds text lines in a region (upscaled when
 * small), the direction classifier turns upside-down lines, the recognizer reads each line, greedy
 * CTC over its character list. Sessions load once per process.
 */
type OcrConfig = AppConfig['ocr'];

interface OcrModels {
  det: ort.InferenceSession;
  rec: ort.InferenceSession;
  cls: ort.InferenceSession;
  charset: string[];
}

export interface TextLine {
  text: string;
  confidence: number;
  /** [x1, y1, x2, y2] in pixels of the frame. */
  box: Box;
  /** `detected`: a line the detector found; `region`: the detector found none, so the whole region was read. */
  source: 'detected' | 'region';
  rotated: boolean;
  plate: boolean;
  /** The read with separators removed, upper case, when plate-shaped. */
  plate_text: string | null;
}

const cache = new Map<string, Promise<OcrModels>>();

async function session(file: string, what: string, setting: string): Promise<ort.InferenceSession> {
  const bytes = await fs.readFile(file).catch(() => {
    throw new UnavailableError(`OCR ${what} is not there: ${file} does not exist (set ${setting})`);
  });
  return ort.InferenceSession.create(bytes, { executionProviders: ['cpu'], intraOpNumThreads: 1 });
}

export function loadOcrModels(config: OcrConfig): Promise<OcrModels> {
  const key = [config.detector, config.recognizer, config.classifier, config.dictionary].join('|');
  let models = cache.get(key);
  if (!models) {
    models = (async () => {
      const dictionary = await fs.readFile(config.dictionary, 'utf8').catch(() => {
        throw new UnavailableError(
          `OCR character list is not there: ${config.dictionary} does not exist (set APP_OCR__DICTIONARY)`,
        );
      });
      return {
        det: await session(config.detector, 'text detector', 'APP_OCR__DETECTOR'),
        rec: await session(config.recognizer, 'recognizer', 'APP_OCR__RECOGNIZER'),
        cls: await session(config.classifier, 'direction classifier', 'APP_OCR__CLASSIFIER'),
        charset: parseDictionary(dictionary),
      };
    })();
    models.catch(() => cache.delete(key));
    cache.set(key, models);
  }
  return models;
}

const HALF = [0.5, 0.5, 0.5] as const;
const DB_MEAN = [0.485, 0.456, 0.406] as const;
const DB_STD = [0.229, 0.224, 0.225] as const;
const CLS_WIDTH = 192;
const REC_MAX_WIDTH = 320;
/** The classifier's `180` probability from which a line is turned (PaddleOCR's default). */
const CLS_THRESHOLD = 0.9;

const raw = (rgb: Buffer, width: number, height: number) =>
  sharp(rgb, { raw: { width, height, channels: 3 } });

async function detectLines(
  models: OcrModels,
  config: OcrConfig,
  frame: FrameImage,
  box: Box,
): Promise<Box[]> {
  const region = cropRegion(box, 0, frame, frame);
  const scale = regionScale(region.width, region.height, config.targetSide, config.maxUpscale);
  const size = textInputSize(region.width * scale, region.height * scale, Number.MAX_SAFE_INTEGER);
  const pixels = await raw(await frame.pixels(), frame.width, frame.height)
    .extract(region)
    .resize(size.width, size.height, { fit: 'fill' })
    .raw()
    .toBuffer();
  const input = new ort.Tensor('float32', planarBgr(pixels, size.width, size.height, DB_MEAN, DB_STD), [
    1,
    3,
    size.height,
    size.width,
  ]);
  const out = await models.det.run({ [models.det.inputNames[0]!]: input });
  const map = out[models.det.outputNames[0]!]!;
  const [, , mh, mw] = map.dims as number[];
  const sx = region.width / mw!;
  const sy = region.height / mh!;
  return decodeTextMap(map.data as Float32Array, mw!, mh!, {
    binaryThreshold: config.binaryThreshold,
    minBoxScore: config.minBoxScore,
  }).map(({ box: [x1, y1, x2, y2] }) => [
    region.left + x1 * sx,
    region.top + y1 * sy,
    region.left + x2 * sx,
    region.top + y2 * sy,
  ]);
}

/** Each line cut from the frame at `height`, as wide as its aspect asks up to `maxWidth`, turned when asked. */
async function lineCrops(
  frame: FrameImage,
  boxes: readonly Box[],
  maxWidth: number,
  turned: readonly boolean[],
): Promise<Array<{ rgb: Buffer; width: number }>> {
  const pixels = await frame.pixels();
  return Promise.all(
    boxes.map(async (b, i) => {
      const region = cropRegion(lineMargin(b), 0, frame, frame);
      const width = recInputWidth(region.width, region.height, maxWidth);
      const rgb = await raw(pixels, frame.width, frame.height)
        .extract(region)
        .rotate(turned[i] ? 180 : 0)
        .resize(width, REC_HEIGHT, { fit: 'fill' })
        .raw()
        .toBuffer();
      return { rgb, width };
    }),
  );
}

/** A batch of lines, each normalised to [-1, 1] and zero-padded on the right to the widest. */
function lineBatch(crops: ReadonlyArray<{ rgb: Buffer; width: number }>, width: number): ort.Tensor {
  const one = 3 * REC_HEIGHT * width;
  const data = new Float32Array(crops.length * one);
  crops.forEach((c, i) => planarBgr(c.rgb, c.width, REC_HEIGHT, HALF, HALF, data.subarray(i * one), width));
  return new ort.Tensor('float32', data, [crops.length, 3, REC_HEIGHT, width]);
}

async function upsideDown(models: OcrModels, frame: FrameImage, boxes: readonly Box[]): Promise<boolean[]> {
  const crops = await lineCrops(frame, boxes, CLS_WIDTH, []);
  const out = await models.cls.run({ [models.cls.inputNames[0]!]: lineBatch(crops, CLS_WIDTH) });
  const probs = out[models.cls.outputNames[0]!]!.data as Float32Array;
  return boxes.map((_, i) => probs[i * 2 + 1]! >= CLS_THRESHOLD);
}

/** Text lines in a box of the frame: detected lines, or the whole box read as one line when none is found. */
export async function readRegion(config: OcrConfig, frame: FrameImage, box: Box): Promise<TextLine[]> {
  const models = await loadOcrModels(config);
  const detected = await detectLines(models, config, frame, box);
  const source = detected.length ? 'detected' : 'region';
  const boxes = detected.length ? detected : [box];
  const turned = await upsideDown(models, frame, boxes);
  const crops = await lineCrops(frame, boxes, REC_MAX_WIDTH, turned);
  const width = Math.max(...crops.map((c) => c.width));
  const out = await models.rec.run({ [models.rec.inputNames[0]!]: lineBatch(crops, width) });
  const probs = out[models.rec.outputNames[0]!]!;
  const [, steps, classes] = probs.dims as number[];
  const lines: TextLine[] = [];
  boxes.forEach((b, i) => {
    const read = ctcDecode(
      probs.data as Float32Array,
      steps!,
      classes!,
      models.charset,
      i * steps! * classes!,
    );
    if (!read.text || read.confidence < config.minConfidence) return;
    const rounded = b.map((v) => Math.round(v * 10) / 10) as Box;
    const plate = plateShape(read.text, b);
    lines.push({
      text: read.text,
      confidence: read.confidence,
      box: rounded,
      source,
      rotated: turned[i]!,
      plate: plate.plate,
      plate_text: plate.plate ? plate.normalized : null,
    });
  });
  return lines;
}
