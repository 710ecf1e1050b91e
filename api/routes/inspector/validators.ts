import { z } from 'zod';
import { booleanParam, limitParam } from '../../http/session-reads';

/** A health row of a writer other than the inspector (an external indexer, a lidar checker...). */
export const HealthRowIn = z.strictObject({
  indexer_version: z
    .string()
    .trim()
    .regex(/^[A-Za-z0-9._-]+@[A-Za-z0-9._-]+$/, 'name@version, e.g. lidar-indexer@3')
    .max(64),
  passed: z.boolean(),
  score: z.number().min(0).max(1),
  checks: z.record(z.string(), z.unknown()).default({}),
});

/** Largest stored layout, serialized. */
export const MAX_LAYOUT_BYTES = 64 * 1024;

export const LayoutIn = z.strictObject({
  name: z.string().trim().min(1).max(100),
  layout: z
    .record(z.string(), z.unknown())
    .refine((l) => JSON.stringify(l).length <= MAX_LAYOUT_BYTES, `at most ${MAX_LAYOUT_BYTES} bytes as JSON`),
});

export const InspectorSessionsQuery = z.strictObject({
  quarantined: booleanParam.optional(),
  vehicle_id: z.string().max(200).optional(),
  limit: limitParam(100, 500),
});

/** `t`: milliseconds from the drive's start; `mode`: which frame answers when none sits exactly at t. */
export const FrameAtQuery = z.strictObject({
  // An empty `t=` is missing, not zero.
  t: z.preprocess((v) => (v === '' ? undefined : v), z.coerce.number()),
  mode: z.enum(['nearest', 'before', 'after']).default('nearest'),
});

export const EventsQuery = z.strictObject({ limit: limitParam(100, 500) });
