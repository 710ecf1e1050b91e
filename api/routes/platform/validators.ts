import { z } from 'zod';
import type { Box } from '../../../core/geometry';
import { AGREEMENT_IOU_THR } from '../../../core/quality/agreement';

/** Bodies and queries of the platform group's quality routes (docs/quality-measure.md). */

/** Annotations one AgreementIn may carry (the JSON body limit, 5 MB by default, caps it too). */
export const AGREEMENT_MAX_ANNOTATIONS = 20_000;

const finite = z.number().refine(Number.isFinite, 'must be a finite number');

const AgreementAnnotationIn = z.strictObject({
  annotator: z.string().trim().min(1).max(200).meta({ description: 'who drew it: any stable name or id' }),
  frame_id: z.string().trim().min(1).max(200).meta({ description: 'the frame (or image) it is on' }),
  class: z
    .union([z.string().trim().min(1).max(200), z.int()])
    .meta({ description: 'its class: a name or an id, compared as given' }),
  bbox: z
    .array(finite)
    .length(4)
    .refine(
      ([x1, y1, x2, y2]) => x2! >= x1! && y2! >= y1!,
      'must be [x1, y1, x2, y2] with x2 ≥ x1 and y2 ≥ y1',
    )
    .transform((b) => b as unknown as Box)
    .meta({ description: '[x1, y1, x2, y2]' }),
});

export const AgreementIn = z.strictObject({
  annotations: z
    .array(AgreementAnnotationIn)
    .min(2)
    .max(AGREEMENT_MAX_ANNOTATIONS)
    .meta({ description: `at most ${AGREEMENT_MAX_ANNOTATIONS}, from at least two annotators` }),
  iou_thr: z.number().gt(0).max(1).default(AGREEMENT_IOU_THR),
});

export const AuditIn = z.strictObject({
  seed: z
    .int()
    .min(0)
    .max(2 ** 31 - 1)
    .default(12345)
    .meta({ description: 'the draw: the same seed, size and scope give the same sample' }),
  per_class: z.int().min(1).max(2000).default(50).meta({ description: 'objects drawn per class' }),
  session_id: z.uuid().nullish().meta({ description: "only this session's auto-accepts" }),
  classes: z
    .array(z.string().trim().min(1).max(100))
    .min(1)
    .max(200)
    .nullish()
    .meta({ description: 'only these classes (ontology names)' }),
});

export const QueueQuery = z.strictObject({
  session_id: z.uuid().optional().meta({ description: "only this session's queues" }),
});

export const ParityIn = z.strictObject({
  run_id: z.uuid().meta({ description: 'the inference run evaluated' }),
  gold_id: z.uuid().meta({ description: 'the sealed gold set it is evaluated against' }),
  epsilon: z.number().min(0).max(1).nullish().meta({
    description: 'largest |difference| that counts as parity; default config quality.parityEpsilon',
  }),
});
