import { z } from 'zod';

/** POST /api/tracks/{track_id}/relabel (the spec does not show its body; docs/track-relabel.md). */
export const TrackRelabelIn = z.strictObject({
  class_name: z
    .string()
    .min(1)
    .max(128)
    .meta({ description: 'the class every machine object of the track moves to' }),
  expected_versions: z.record(z.uuid(), z.int()).nullable().default(null).meta({
    description:
      'every object of the track (human ones included) → the version the caller saw; any object added, gone or changed since → 409 and nothing relabelled',
  }),
  reviewer: z.string().min(1).max(128).default('anon'),
});
