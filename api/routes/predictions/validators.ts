import { z } from 'zod';
import { IMPORT_MAX_PREDICTIONS, RUN_MAX_FRAMES } from '../../../activities/quality/inference-runs';
import { BoxIn, MaskRingsIn } from '../../http/shapes';

/** Bodies of the prediction-plane routes (the spec shows none; docs/quality.md). */

const modelVersion = z.string().trim().min(1).max(200);
const className = z.string().trim().min(1).max(100);

export const ExternalModelIn = z.strictObject({
  model_version: modelVersion.meta({ description: 'the version string runs of this model carry; unique' }),
  name: z.string().trim().min(1).max(200),
  task: z.enum(['detection', 'segmentation']).default('detection'),
  class_names: z
    .array(className)
    .min(1)
    .max(1000)
    .meta({ description: 'the ontology classes the model predicts; an imported run may use no other' }),
  artifact_uri: z.string().max(2000).nullish(),
  notes: z.string().max(4000).nullish(),
});

const ImportedPredictionIn = z.strictObject({
  frame_id: z.uuid(),
  class_name: className,
  conf: z.number().min(0).max(1),
  bbox: BoxIn,
  probs: z
    .record(className, z.number().min(0).max(1))
    .optional()
    .meta({ description: "the model's score for each class it knows, by class name" }),
  mask_polygons: MaskRingsIn.optional(),
});

const scope = {
  session_id: z.uuid().optional(),
  frame_ids: z.array(z.uuid()).min(1).max(RUN_MAX_FRAMES).optional(),
  gold_id: z.uuid().optional(),
  limit: z.int().min(1).max(RUN_MAX_FRAMES).optional(),
};

export const InferenceRunIn = z.discriminatedUnion('mode', [
  z
    .strictObject({
      mode: z.literal('gpu'),
      ...scope,
      model_version: modelVersion.optional().meta({
        description:
          'a registered model with a model file (docs/promotion.md); omitted: the configured detector',
      }),
    })
    .meta({
      description:
        'run the configured closed-set detector, or a registered model, over the frames on the GPU slot (202)',
    }),
  z
    .strictObject({
      mode: z.literal('import'),
      model_version: modelVersion,
      predictions: z.array(ImportedPredictionIn).min(1).max(IMPORT_MAX_PREDICTIONS),
    })
    .meta({ description: "a registered external model's predictions (201)" }),
  z
    .strictObject({
      mode: z.literal('reconstruct'),
      session_id: z.uuid(),
      model_version: modelVersion.optional(),
    })
    .meta({
      description:
        "the machine's proposals on a session rebuilt from the review history: null confidences, refused AP evaluation (201)",
    }),
]);
