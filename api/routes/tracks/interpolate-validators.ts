import { z } from 'zod';

/** POST /api/objects/{object_id}/keyframe (the spec does not show its body; docs/track-interpolation.md). */
export const KeyframeIn = z.strictObject({
  keyframe: z
    .boolean()
    .default(true)
    .meta({ description: 'true marks the object a keyframe, false unmarks it' }),
  expected_version: z.int().nullable().default(null),
});

/**
 * POST /api/tracks/{track_id}/interpolate: two objects of the track to fill between, or neither
 * for every gap between consecutive objects of the track.
 */
export const InterpolateIn = z
  .strictObject({
    from_object_id: z.uuid().nullable().default(null),
    to_object_id: z.uuid().nullable().default(null),
  })
  .refine((b) => (b.from_object_id === null) === (b.to_object_id === null), {
    message: 'from_object_id and to_object_id come together, or neither',
    path: ['to_object_id'],
  });
