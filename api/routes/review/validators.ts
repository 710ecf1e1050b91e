import { z } from 'zod';
import { REVIEW_ACTIONS } from '../../../core/review/actions';
import { BoxIn, KeypointsIn, PolylinesIn } from '../../http/shapes';

const reviewFields = {
  attrs: z.record(z.string(), z.unknown()).nullable().default(null),
  class_name: z.string().min(1).max(128).nullable().default(null),
  reviewer: z.string().min(1).max(128).default('anon'),
  state: z.string().max(32).nullable().default(null),
  time_spent_ms: z.int().min(0).max(86_400_000).default(0),
};

/**
 * Geometry of an `edit` (single review only): a field left out keeps the object's own, and null
 * removes a polyline or the keypoints. Optional without a default, so absent stays unlike null.
 */
const geometryFields = {
  bbox: BoxIn.optional(),
  rot_deg: z.number().optional(),
  polyline: PolylinesIn.nullable().optional(),
  keypoints: KeypointsIn.nullable().optional(),
};

export const ReviewIn = z.strictObject({
  action: z.enum(REVIEW_ACTIONS).default('confirm'),
  expected_version: z.int().nullable().default(null),
  ...reviewFields,
  ...geometryFields,
});

export const BulkReviewIn = z.strictObject({
  object_ids: z.array(z.uuid()).min(1).max(1000),
  action: z.enum(REVIEW_ACTIONS).default('confirm'),
  expected_versions: z.record(z.string(), z.int()).nullable().default(null),
  ...reviewFields,
});
