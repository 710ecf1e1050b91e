import { z } from 'zod';

/** POST /api/tracks/{track_id}/merge (the spec does not show its body; docs/track-edits.md). */
export const TrackMergeIn = z.strictObject({
  other_track_id: z.uuid().meta({ description: 'the track whose objects join this one; it is deleted' }),
  keep: z.enum(['this', 'other']).nullable().default(null).meta({
    description:
      'which track’s object stays on a frame both tracks hold (the other is unlinked, not deleted); without it such a frame refuses the merge',
  }),
});

/** POST /api/tracks/{track_id}/split. */
export const TrackSplitIn = z.strictObject({
  at_frame_id: z
    .uuid()
    .meta({ description: 'a frame of the track’s session: objects from it on go to a new track' }),
});

/** POST /api/tracks/{track_id}/smooth. */
export const TrackSmoothIn = z.strictObject({
  window: z
    .int()
    .min(3)
    .max(51)
    .refine((w) => w % 2 === 1, { message: 'window must be odd' })
    .default(5)
    .meta({ description: 'objects averaged over, centred: odd, 3 to 51' }),
  dry_run: z.boolean().default(false),
});
