import { createHash } from 'node:crypto';
import path from 'node:path';
import * as ort from 'onnxruntime-node';
import type { AppConfig } from '../../core/config';
import { drivableShapes, type DrivableShapes } from '../../core/drivable';
import { UnavailableError } from '../../core/errors';
import type { FrameImage } from '../detect/frame-image';
import { openModel } from '../detect/inference-runtime';

/** The road model's grid (MODELS.md): input `data` 1×512×896×3 BGR 0–255 NHWC, output 1×512×896×4 scores. */
const GRID = { width: 896, height: 512 };
const INPUT = [1, GRID.height, GRID.width, 3];
const OUTPUT = [1, GRID.height, GRID.width, 4];

interface LoadedRoadModel {
  session: ort.InferenceSession;
  input: string;
  output: string;
  modelVersion: string;
}

const sameShape = (shape: readonly unknown[], want: number[]) =>
  shape.length === want.length && shape.every((d, i) => typeof d !== 'number' || d < 0 || d === want[i]);

async function loadRoadModel(models: AppConfig['models']): Promise<LoadedRoadModel> {
  const { session, file, bytes } = await openModel(models, 'roadSegmentation');
  const [input] = session.inputMetadata;
  const [output] = session.outputMetadata;
  const fits =
    input?.isTensor && output?.isTensor && sameShape(input.shape, INPUT) && sameShape(output.shape, OUTPUT);
  if (!fits || !input || !output) {
    await session.release();
    throw new UnavailableError(
      `model roadSegmentation (${file}) does not fit the road decoder: it needs one input ${INPUT.join('×')} and one output ${OUTPUT.join('×')} (set APP_MODELS__ROAD_SEGMENTATION to such a model)`,
    );
  }
  const sha = createHash('sha256').update(bytes).digest('hex').slice(0, 12);
  return { session, input: input.name, output: output.name, modelVersion: `${path.basename(file)}@${sha}` };
}

/** One frame's drivable shapes and the model that made them. */
export interface SegmentedFrame {
  shapes: DrivableShapes;
  modelVersion: string;
}

/**
 * The road model, loaded on first use and kept for the life of the process (the API between
 * requests, the gpu worker between sessions). A missing or misfit model refuses by name and the
 * next call tries again.
 */
export function createRoadSegmenter(models: AppConfig['models']) {
  let loading: Promise<LoadedRoadModel> | undefined;
  const model = () => {
    loading ??= loadRoadModel(models).catch((err: unknown) => {
      loading = undefined;
      throw err;
    });
    return loading;
  };
  return {
    async segment(frame: FrameImage): Promise<SegmentedFrame> {
      const m = await model();
      const rgb = await frame.scaled(GRID.width, GRID.height);
      const data = new Float32Array(GRID.width * GRID.height * 3);
      for (let i = 0; i < GRID.width * GRID.height; i++) {
        data[i * 3] = rgb[i * 3 + 2]!;
        data[i * 3 + 1] = rgb[i * 3 + 1]!;
        data[i * 3 + 2] = rgb[i * 3]!;
      }
      const result = await m.session.run({ [m.input]: new ort.Tensor('float32', data, INPUT) });
      const scores = result[m.output]!.data as Float32Array;
      return { shapes: drivableShapes(scores, GRID, frame), modelVersion: m.modelVersion };
    },
    async release() {
      const m = await loading?.catch(() => undefined);
      loading = undefined;
      await m?.session.release();
    },
  };
}
export type RoadSegmenter = ReturnType<typeof createRoadSegmenter>;
