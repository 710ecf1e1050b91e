import { z } from 'zod';
import { SLICING_MODES } from '../../../core/detect/tiling';

/** Compute targets an auto-label can run on; a cloud target needs a cloud connection, not built yet. */
export const COMPUTE_TARGETS = ['local'] as const;

export const AutolabelStartIn = z.strictObject({
  session_id: z.uuid(),
  compute_target: z.string().min(1).max(32).default('local'),
  limit: z
    .number()
    .int()
    .min(1)
    .max(1_000_000)
    .nullable()
    .default(null)
    .meta({ description: 'at most this many frames, in index order; null: every frame' }),
  only_unlabelled: z.boolean().default(false).meta({ description: 'only frames that carry no object yet' }),
  slicing: z.enum(SLICING_MODES).optional().meta({
    description:
      'sliced inference for small objects (docs/small-objects.md): auto (the rule picks per frame), on, off; absent: the configured mode',
  }),
});
export type AutolabelStartIn = z.infer<typeof AutolabelStartIn>;

/** Body of POST /api/autolabel/redetect-all (not shown by the spec; docs/autolabel.md). */
export const RedetectAllIn = z.strictObject({
  // Required, not defaulted: an empty or forgotten body must not redetect the whole corpus.
  session_ids: z.array(z.uuid()).min(1).max(1000).nullable().meta({
    description:
      'sessions to redetect; null, said explicitly: every session that carries a machine-source object, however many',
  }),
  compute_target: z.string().min(1).max(32).default('local'),
});
