import fs from 'node:fs/promises';
import type * as ort from 'onnxruntime-node';
import { Tensor } from 'onnxruntime-node';
import sharp from 'sharp';
import type { AppConfig } from '../../core/config';
import { InputError, UnavailableError } from '../../core/errors';
import { cropRegion, overlapOfSmaller, type Box } from '../../core/geometry';
import {
  decideSign,
  SIGN_CROP_PAD,
  SIGN_FACE_CLASSES,
  SIGN_INPUT_SIDE,
  signTaxonomy,
  signTensor,
  type SignClassInfo,
  type SignVerdict,
} from '../../core/signs/taxonomy';
import { proposeSigns } from '../../core/signs/proposals';
import { openModel } from '../detect/inference-runtime';
import type { FrameImage } from '../detect/frame-image';
import { boxOnFrame, loadFrame } from '../ocr';
import type { Db } from '../db';
import type { ObjectStore } from '../storage/object-store';

/**
 * Traffic-sign recognition with the GTSRB classifier (config `models.signClassifier`): each crop,
 * cut around its box with GTSRB's margin and scaled to 30×30, is classified; the top class is
 * answered only from the confidence floor up (docs/ocr-signs.md).
 */
type SignsConfig = Pick<AppConfig, 'models' | 'signs'>;

interface SignModel {
  session: ort.InferenceSession;
  taxonomy: SignClassInfo[];
  file: string;
}

const cache = new Map<string, Promise<SignModel>>();

/** The label file beside the model: `<name>.labels.json`, a JSON list of the class names. */
async function readLabels(file: string): Promise<string[]> {
  const labelsFile = file.replace(/\.onnx$/, '.labels.json');
  const text = await fs.readFile(labelsFile, 'utf8').catch(() => {
    throw new UnavailableError(`sign classifier labels are not there: ${labelsFile} does not exist`);
  });
  const labels: unknown = JSON.parse(text);
  if (!Array.isArray(labels) || !labels.every((l) => typeof l === 'string'))
    throw new UnavailableError(`sign classifier labels ${labelsFile} are not a JSON list of names`);
  return labels as string[];
}

export function loadSignModel(config: SignsConfig): Promise<SignModel> {
  const key = `${config.models.dir}|${config.models.signClassifier}|${config.models.device}`;
  let model = cache.get(key);
  if (!model) {
    model = (async () => {
      const { session, file } = await openModel(config.models, 'signClassifier');
      const input = session.inputMetadata[0];
      const output = session.outputMetadata[0];
      const fits =
        input?.isTensor &&
        input.shape.slice(1).join('×') === `${SIGN_INPUT_SIDE}×${SIGN_INPUT_SIDE}×3` &&
        output?.isTensor &&
        output.shape.length === 2;
      if (!fits)
        throw new UnavailableError(
          `sign classifier ${file} does not take N×${SIGN_INPUT_SIDE}×${SIGN_INPUT_SIDE}×3 NHWC input with an N×classes output`,
        );
      const labels = await readLabels(file);
      try {
        return { session, file, taxonomy: signTaxonomy(labels) };
      } catch (err) {
        throw new UnavailableError(`sign classifier ${file}: ${(err as Error).message}`);
      }
    })();
    model.catch(() => cache.delete(key));
    cache.set(key, model);
  }
  return model;
}

export async function classifySigns(
  config: SignsConfig,
  image: FrameImage,
  boxes: readonly Box[],
): Promise<SignVerdict[]> {
  if (!boxes.length) return [];
  const model = await loadSignModel(config);
  const pixels = await image.pixels();
  const one = SIGN_INPUT_SIDE * SIGN_INPUT_SIDE * 3;
  const data = new Float32Array(boxes.length * one);
  for (const [i, box] of boxes.entries()) {
    const crop = await sharp(pixels, { raw: { width: image.width, height: image.height, channels: 3 } })
      .extract(cropRegion(box, SIGN_CROP_PAD, image, image))
      .resize(SIGN_INPUT_SIDE, SIGN_INPUT_SIDE, { fit: 'fill' })
      .raw()
      .toBuffer();
    signTensor(crop, data, i * one);
  }
  const input = new Tensor('float32', data, [boxes.length, SIGN_INPUT_SIDE, SIGN_INPUT_SIDE, 3]);
  const out = await model.session.run({ [model.session.inputNames[0]!]: input });
  const probs = out[model.session.outputNames[0]!]!.data as Float32Array;
  const classes = model.taxonomy.length;
  return boxes.map((_, i) => decideSign(probs, i * classes, model.taxonomy, config.signs.confidenceFloor));
}

export async function signTaxonomyOut(config: SignsConfig) {
  const model = await loadSignModel(config);
  return {
    model: config.models.signClassifier,
    confidence_floor: config.signs.confidenceFloor,
    ontology_classes: [...SIGN_FACE_CLASSES],
    classes: model.taxonomy,
  };
}

interface SignsDeps {
  db: Db;
  storage: ObjectStore;
  config: SignsConfig;
}

export type SignProposalMethod = 'sign_objects' | 'colour_shape';

/** Overlap (intersection over the smaller box) from which a proposal repeats a sign object. */
const SAME_SIGN_OVERLAP = 0.5;

type SignCandidate = { object_id: string | null; box: Box; source: 'box' | SignProposalMethod };

/**
 * Signs on a frame: the boxes given, or else candidates proposed by the methods asked for — the
 * frame's objects of sign-face classes (what the detector or an annotator marked as a sign) and
 * colour/shape proposals on the pixels (core/signs/proposals.ts) — each classified. A colour/shape
 * proposal is answered only when recognised: the proposer errs towards recall and the
 * classifier's floor is what says "sign".
 */
export async function recognizeSigns(
  deps: SignsDeps,
  frameId: string,
  given: readonly Box[] | undefined,
  methods: readonly SignProposalMethod[] = ['sign_objects', 'colour_shape'],
) {
  const { image } = await loadFrame(deps, frameId);
  const { maxCrops } = deps.config.signs;
  let candidates: SignCandidate[];
  let proposed = 0;
  if (given) {
    candidates = given.map((b) => ({ object_id: null, box: boxOnFrame(b, image), source: 'box' }));
  } else {
    candidates = methods.includes('sign_objects')
      ? (
          await deps.db.annoObject.findMany({
            where: { frameId, class: { name: { in: [...SIGN_FACE_CLASSES] } } },
            select: { id: true, bbox: true },
            orderBy: { id: 'asc' },
          })
        ).map((o) => ({ object_id: o.id, box: boxOnFrame(o.bbox, image), source: 'sign_objects' }))
      : [];
    if (methods.includes('colour_shape')) {
      const marked = candidates.map((c) => c.box);
      const proposals = proposeSigns(await image.pixels(), image.width, image.height).filter((p) =>
        marked.every((m) => overlapOfSmaller(m, p.box) < SAME_SIGN_OVERLAP),
      );
      proposed = proposals.length;
      // Proposals fill what the crop limit leaves; they never make a request fail.
      for (const p of proposals.slice(0, Math.max(0, maxCrops - candidates.length)))
        candidates.push({ object_id: null, box: p.box, source: 'colour_shape' });
    }
  }
  if (candidates.length > maxCrops)
    throw new InputError(`${candidates.length} sign crops; at most ${maxCrops} per request`);
  const verdicts = await classifySigns(
    deps.config,
    image,
    candidates.map((c) => c.box),
  );
  const signs = candidates
    .map((c, i) => ({ ...c, ...verdicts[i]! }))
    .filter((s) => s.source !== 'colour_shape' || s.status === 'recognized');
  return {
    frame_id: frameId,
    proposals: given ? ['boxes'] : [...methods],
    confidence_floor: deps.config.signs.confidenceFloor,
    colour_shape: { proposed, recognized: signs.filter((s) => s.source === 'colour_shape').length },
    signs,
  };
}
