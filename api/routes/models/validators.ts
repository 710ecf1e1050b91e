import { z } from 'zod';
import { MODEL_STATES } from '../../../activities/registry/models';
import { limitParam } from '../../http/session-reads';

/** Queries and bodies of the registry routes (the spec shows none; docs/promotion.md). */

export const ModelVersionIn = z
  .string()
  .trim()
  .min(1)
  .max(200)
  .meta({ description: 'a model version string, as runs and the registry carry it' });

export const ModelsQuery = z.strictObject({
  state: z.enum(MODEL_STATES).optional(),
  task: z.string().min(1).max(64).optional(),
  limit: limitParam(100, 500),
  cursor: z.uuid().optional().meta({ description: 'next_cursor of the previous page' }),
});
