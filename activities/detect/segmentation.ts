import fs from 'node:fs/promises';
import path from 'node:path';
import sharp from 'sharp';
import type * as ort from 'onnxruntime-node';
import { Tensor } from 'onnxruntime-node';
import type { AppConfig } from '../../core/config';
import { InputError, NotFoundError, RefusedError, UnavailableError } from '../../core/errors';
import type { Box } from '../../core/geometry';
import {
  contextRegion,
  insideRings,
  isSegmentable,
  objectMask,
  pointWindow,
  SEGMENTABLE,
  segmentedMask,
  type SegmentedMask,
} from '../../core/segmentation';
import type { Db } from '../db';
import { objectLocation, readObject } from '../inspector/frame-objects';
import type { ObjectStore } from '../storage/object-store';
import { decodeFrame, type FrameImage } from './frame-image';
import { openModel } from './inference-runtime';

/**
 * The VOC segmentation model (config `models.vocSegmentation`, DeepLab v3 by default) on a box's
 * crop with context: input 1×S×S×3 RGB scaled to [−1, 1], output 1×S×S×C logits, class names from
 * the `.labels.json` beside the file. Loaded on first use and kept; a missing model or one whose
 * tensors or labels do not fit refuses by name.
 */
export interface Segmenter {
  /** File name, recorded in provenance. */
  model: string;
  segment(frame: FrameImage, box: Box, className: string): Promise<SegmentedMask>;
}

const dimsOf = (meta: ort.InferenceSession.ValueMetadata | undefined) => (meta?.isTensor ? meta.shape : []);

async function loadSegmenter(models: AppConfig['models']): Promise<Segmenter> {
  const { session, file } = await openModel(models, 'vocSegmentation');
  const [n, size, w, c] = dimsOf(session.inputMetadata[0]);
  const [, oh, ow, classes] = dimsOf(session.outputMetadata[0]);
  if (n !== 1 || typeof size !== 'number' || size !== w || c !== 3 || oh !== size || ow !== size)
    throw new UnavailableError(
      `model vocSegmentation (${file}) does not fit the segmentation decoder: expected input 1×S×S×3 and output 1×S×S×C`,
    );
  const labelsFile = file.replace(/\.onnx$/, '.labels.json');
  const labels = JSON.parse(
    await fs.readFile(labelsFile, 'utf8').catch(() => {
      throw new UnavailableError(`model vocSegmentation has no class list: ${labelsFile} does not exist`);
    }),
  ) as string[];
  if (!Array.isArray(labels) || labels.length !== classes)
    throw new UnavailableError(`${labelsFile} does not list the model's ${String(classes)} classes`);
  const indexOf = (voc: string) => {
    const i = labels.indexOf(voc);
    if (i < 0) throw new UnavailableError(`model vocSegmentation has no class ${voc} (${labelsFile})`);
    return i;
  };
  const wanted = new Map(Object.entries(SEGMENTABLE).map(([name, voc]) => [name, voc.map(indexOf)]));
  const input = session.inputNames[0]!;
  const output = session.outputNames[0]!;
  return {
    model: path.basename(file),
    async segment(frame, box, className) {
      const classIds = wanted.get(className);
      if (!classIds) throw new RefusedError(refusal(className));
      const region = contextRegion(box, frame);
      const rgb = await sharp(await frame.pixels(), {
        raw: { width: frame.width, height: frame.height, channels: 3 },
      })
        .extract(region)
        .resize(size, size, { fit: 'fill' })
        .raw()
        .toBuffer();
      const data = Float32Array.from(rgb, (v) => v / 127.5 - 1);
      const out = await session.run({ [input]: new Tensor('float32', data, [1, size, size, 3]) });
      const logits = out[output]!.data as Float32Array;
      const grid = { width: size, height: size, classes: classes as number };
      return segmentedMask(objectMask(logits, grid, classIds, region, box), region, box);
    },
  };
}

export const refusal = (className: string): string =>
  `the segmentation model knows no class ${JSON.stringify(className)}: it segments ${Object.keys(SEGMENTABLE).join(', ')}`;

/**
 * The segmenter, loaded on first use and kept for the life of the process; a failed load (the
 * model missing) is tried again on the next call.
 */
export function residentSegmenter(config: Pick<AppConfig, 'models'>): { acquire(): Promise<Segmenter> } {
  let loading: Promise<Segmenter> | undefined;
  return {
    acquire() {
      const current = (loading ??= loadSegmenter(config.models));
      current.catch(() => {
        if (loading === current) loading = undefined;
      });
      return current;
    },
  };
}

/** A prompt on a stored frame: a box, or a point on the object; the class to segment. */
export interface SegmentPrompt {
  frameId: string;
  className: string;
  box: Box | null;
  point: [number, number] | null;
}

export interface SegmentAnswer {
  model: string;
  class_name: string;
  /** The box the mask is kept inside: the prompt's, or the window around the point. */
  box: Box;
  polygons: number[][];
  coverage: number;
  quality_flags: string[];
}

/**
 * The mask for a prompt (POST /api/segment). A point keeps only the ring that holds it; a class
 * the model does not know is refused before any read, a frame that is not there is not found.
 */
export async function segmentPrompt(
  deps: { db: Db; storage: ObjectStore },
  segmenter: { acquire(): Promise<Segmenter> },
  prompt: SegmentPrompt,
): Promise<SegmentAnswer> {
  if (!isSegmentable(prompt.className)) throw new RefusedError(refusal(prompt.className));
  const row = await deps.db.frame.findUnique({ where: { id: prompt.frameId } });
  if (!row) throw new NotFoundError(`no frame ${prompt.frameId}`);
  const image = await decodeFrame(
    await readObject(deps.storage, objectLocation(deps.storage, row.uri, 'frames')),
  );
  const inFrame = (x: number, y: number) => x >= 0 && y >= 0 && x <= image.width && y <= image.height;
  let box: Box;
  if (prompt.box) {
    const [x1, y1, x2, y2] = prompt.box;
    if (!(x2 - x1 >= 1 && y2 - y1 >= 1) || !inFrame(x1, y1) || !inFrame(x2, y2))
      throw new InputError(
        `box ${JSON.stringify(prompt.box)} is not a box inside the ${image.width}×${image.height} frame`,
      );
    box = prompt.box;
  } else {
    const [x, y] = prompt.point!;
    if (!inFrame(x, y))
      throw new InputError(`point [${x}, ${y}] is outside the ${image.width}×${image.height} frame`);
    box = pointWindow([x, y], image);
  }
  const model = await segmenter.acquire();
  const mask = await model.segment(image, box, prompt.className);
  const polygons = prompt.point
    ? mask.polygons.filter((r) => insideRings([r], prompt.point![0], prompt.point![1]))
    : mask.polygons;
  if (prompt.point && !polygons.length)
    throw new RefusedError(
      `the segmentation model finds no ${prompt.className} at [${prompt.point.join(', ')}]`,
    );
  return {
    model: model.model,
    class_name: prompt.className,
    box,
    polygons,
    coverage: mask.coverage,
    quality_flags: mask.qualityFlags,
  };
}
