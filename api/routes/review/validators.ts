import { z } from 'zod';
import { REVIEW_ACTIONS } from '../../../core/review/actions';

const reviewFields = {
  attrs: z.record(z.string(), z.unknown()).nullable().default(null),
  class_name: z.string().min(1).max(128).nullable().default(null),
  reviewer: z.string().min(1).max(128).default('anon'),
  state: z.string().max(32).nullable().default(null),
  time_spent_ms: z.int().min(0).max(86_400_000).default(0),
};

export const ReviewIn = z.strictObject({
  action: z.enum(REVIEW_ACTIONS).default('confirm'),
  expected_version: z.int().nullable().default(null),
  ...reviewFields,
});

export const BulkReviewIn = z.strictObject({
  object_ids: z.array(z.uuid()).min(1).max(1000),
  action: z.enum(REVIEW_ACTIONS).default('confirm'),
  expected_versions: z.record(z.string(), z.int()).nullable().default(null),
  ...reviewFields,
});
