import type { AppConfig } from '../../core/config';
import { rankBoxClasses, type ClassCandidate } from '../../core/detect/classify-box';
import type { Box } from '../../core/geometry';
import { residentClosedSetDetector } from './closed-set';
import { cropFrame, decodeFrame } from './frame-image';

/** Context around the box given to the detector: objects are recognised by their surroundings too. */
const CROP_PAD = 0.25;
/** How much a detection must overlap the drawn box to vote for its class. */
const MIN_IOU = 0.3;

export interface BoxClassifier {
  /** `box` in pixels of `image`; candidates best first, empty when the detector sees nothing there. */
  classify(image: Buffer, box: Box): Promise<{ model: string; candidates: ClassCandidate[] }>;
  close(): Promise<void>;
}

/**
 * Suggests classes for a box a person drew, by running the closed-set detector on the box's
 * region, kept loaded between requests (residentClosedSetDetector: a missing or unfit model refuses
 * by name, UnavailableError, and the next call tries again).
 *
 * It always runs on the CPU, on one thread, whatever APP_MODELS__DEVICE says: the API process
 * never touches the GPU, so no inference happens outside the single GPU slot, and a reviewer's
 * click never waits behind an auto-label session or a training job holding the slot. One crop at
 * the model's 416 px input is a few tens of milliseconds on one core (docs/autolabel.md).
 */
export function createBoxClassifier(config: Pick<AppConfig, 'models' | 'autolabel'>): BoxClassifier {
  const detector = residentClosedSetDetector({
    ...config,
    models: { ...config.models, device: 'cpu', closedSetThreads: 1 },
  });
  return {
    async classify(image, box) {
      const model = await detector.acquire();
      const { crop, left, top } = await cropFrame(await decodeFrame(image), box, CROP_PAD);
      const { run } = await model.detect(crop);
      const inCrop: Box = [box[0] - left, box[1] - top, box[2] - left, box[3] - top];
      // The closed-set path only ever reports 'ran'; a refusal would have thrown while loading.
      const detections = run.status === 'ran' ? run.detections : [];
      return { model: model.model, candidates: rankBoxClasses(inCrop, detections, MIN_IOU) };
    },
    close: () => detector.close(),
  };
}
