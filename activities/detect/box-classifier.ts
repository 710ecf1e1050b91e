import type { AppConfig } from '../../core/config';
import { rankBoxClasses, type ClassCandidate } from '../../core/detect/classify-box';
import type { Box } from '../../core/geometry';
import { residentClosedSetDetector, type ResidentClosedSetDetector } from './closed-set';
import { cropFrame, decodeFrame } from './frame-image';

/** Context around the box given to the detector: objects are recognised by their surroundings too. */
const CROP_PAD = 0.25;
/** How much a detection must overlap the drawn box to vote for its class. */
const MIN_IOU = 0.3;

export interface BoxClassifier {
  /** `box` in pixels of `image`; candidates best first, empty when the detector sees nothing there. */
  classify(image: Buffer, box: Box): Promise<{ model: string; candidates: ClassCandidate[] }>;
  /** Several boxes of one frame, the image decoded once; candidates per box, in the boxes' order. */
  classifyBoxes(
    image: Buffer,
    boxes: readonly Box[],
  ): Promise<{ model: string; candidates: ClassCandidate[][] }>;
  close(): Promise<void>;
}

/**
 * Classes for boxes on a frame, by running the closed-set detector on each box's region (with
 * context around it) and ranking the detections that overlap the box. `detector` is kept loaded
 * between calls (residentClosedSetDetector: a missing or unfit model refuses by name,
 * UnavailableError, and the next call tries again); `close` releases it only when it is ours.
 */
export function boxClassifierOn(detector: ResidentClosedSetDetector, owned: boolean): BoxClassifier {
  const classifyBoxes: BoxClassifier['classifyBoxes'] = async (image, boxes) => {
    const model = await detector.acquire();
    const frame = await decodeFrame(image);
    const candidates: ClassCandidate[][] = [];
    for (const box of boxes) {
      const { crop, left, top } = await cropFrame(frame, box, CROP_PAD);
      const { run } = await model.detect(crop);
      const inCrop: Box = [box[0] - left, box[1] - top, box[2] - left, box[3] - top];
      // The closed-set path only ever reports 'ran'; a refusal would have thrown while loading.
      const detections = run.status === 'ran' ? run.detections : [];
      candidates.push(rankBoxClasses(inCrop, detections, MIN_IOU));
    }
    return { model: model.model, candidates };
  };
  return {
    classifyBoxes,
    async classify(image, box) {
      const { model, candidates } = await classifyBoxes(image, [box]);
      return { model, candidates: candidates[0]! };
    },
    close: () => (owned ? detector.close() : Promise.resolve()),
  };
}

/**
 * The API's classifier for a box a person drew. It always runs on the CPU, on one thread,
 * whatever APP_MODELS__DEVICE says: the API process never touches the GPU, so no inference
 * happens outside the single GPU slot, and a reviewer's click never waits behind an auto-label
 * session or a training job holding the slot. One crop at the model's 416 px input is a few tens
 * of milliseconds on one core (docs/autolabel.md).
 */
export function createBoxClassifier(config: Pick<AppConfig, 'models' | 'autolabel'>): BoxClassifier {
  const detector = residentClosedSetDetector({
    ...config,
    models: { ...config.models, device: 'cpu', closedSetThreads: 1 },
  });
  return boxClassifierOn(detector, true);
}
