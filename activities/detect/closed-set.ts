import { createHash } from 'node:crypto';
import path from 'node:path';
import * as ort from 'onnxruntime-node';
import type { AppConfig } from '../../core/config';
import { mapCocoDetections, COCO_CLASSES } from '../../core/detect/coco-ontology';
import { decodeYolox, letterbox, yoloxAnchorCount, yoloxInput } from '../../core/detect/yolox';
import { UnavailableError } from '../../core/errors';
import type { PathRun } from '../../core/fusion';
import { resizeRgb, type DecodedFrame } from './frame-image';
import { openModel } from './inference-runtime';

/**
 * The closed-set path: the configured YOLOX model (yolox_nano.onnx by default) through
 * onnxruntime-node on the configured device. The model must have YOLOX's tensors — one square
 * float32 input 1×3×S×S and a raw head 1×A×(5 + 80) with A the anchor points of S — or it is
 * refused by name: another detector's output would decode into nonsense.
 */
export interface ClosedSetDetector {
  /** File name and short hash, recorded in provenance. */
  model: string;
  detect(frame: DecodedFrame): Promise<{ run: PathRun; dropped: Record<string, number>; inferenceMs: number }>;
  release(): Promise<void>;
}

type DetectConfig = Pick<AppConfig, 'models' | 'autolabel'>;

const dims = (meta: ort.InferenceSession.ValueMetadata): Array<number | string> => (meta.isTensor ? meta.shape.map((d) => (typeof d === 'number' ? d : String(d))) : []);

export async function loadClosedSetDetector(config: DetectConfig): Promise<ClosedSetDetector> {
  const { session, file, bytes } = await openModel(config.models, 'closedSetDetector');
  const input = session.inputMetadata[0];
  const output = session.outputMetadata[0];
  const [n, c, h, w] = input ? dims(input) : [];
  const size = typeof h === 'number' ? h : NaN;
  const outDims = output ? dims(output) : [];
  const fits = n === 1 && c === 3 && h === w && size > 0 && size % 32 === 0 && outDims.length === 3 && outDims[1] === yoloxAnchorCount(size) && outDims[2] === 5 + COCO_CLASSES.length;
  if (!fits || !input || !output) {
    await session.release();
    throw new UnavailableError(
      `model closedSetDetector (${file}) does not fit the YOLOX decoder: input ${JSON.stringify(input ? dims(input) : null)}, output ${JSON.stringify(outDims)}; expected 1×3×S×S and 1×A×85`,
    );
  }
  const model = `${path.basename(file)}@${createHash('sha256').update(bytes).digest('hex').slice(0, 12)}`;
  return {
    model,
    async detect(frame) {
      const lb = letterbox(frame.width, frame.height, size);
      const scaled = await resizeRgb(frame, lb.scaledWidth, lb.scaledHeight);
      const tensor = new ort.Tensor('float32', yoloxInput(scaled, lb), [1, 3, size, size]);
      const started = performance.now();
      const out = await session.run({ [input.name]: tensor });
      const inferenceMs = performance.now() - started;
      const boxes = decodeYolox(out[output.name]!.data as Float32Array, lb, COCO_CLASSES.length, { minScore: config.autolabel.minScore, nmsIou: config.autolabel.nmsIou });
      const { mapped, dropped } = mapCocoDetections(boxes);
      const detections = mapped.map((d) => ({ box: { x1: d.x1, y1: d.y1, x2: d.x2, y2: d.y2 }, className: d.className, score: d.score, label: d.cocoClass }));
      return { run: { path: 'closed_set', status: 'ran', detections, model }, dropped, inferenceMs };
    },
    release: () => session.release(),
  };
}
