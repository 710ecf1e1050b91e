import { initializerFloats, readOnnx, setInitializerFloats, writeOnnx } from '../core/onnx/graph';

/** COCO's index of motorcycle among YOLOX's 80 class scores. */
export const COCO_MOTORCYCLE = 3;

/**
 * A YOLOX model that can no longer output one COCO class: the bias of that class's score in the
 * class-prediction convolution of each of the three strides pushed down by `by` (logits; −12 puts
 * the score under 1e-5), every other weight untouched. A degraded challenger or champion whose
 * failure is known by construction.
 */
export function withoutCocoClass(model: Uint8Array, cocoIndex: number, by = 12): Uint8Array {
  const m = readOnnx(model);
  for (const stride of [0, 1, 2]) {
    const name = `head.cls_preds.${stride}.bias`;
    const bias = initializerFloats(m, name).slice();
    bias[cocoIndex]! -= by;
    setInitializerFloats(m, name, bias);
  }
  return writeOnnx(m);
}
