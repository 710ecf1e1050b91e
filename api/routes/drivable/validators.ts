import { z } from 'zod';

/** Bodies and queries of the drivable routes (docs/drivable.md). */

const coord = z.number().finite().min(0).max(100_000);

/** A ring, flat [x, y, x, y, ...] in frame pixels: at least three points, at most 4,000. */
const Ring = z
  .array(coord)
  .min(6)
  .max(8_000)
  .refine((r) => r.length % 2 === 0, 'a ring is [x, y, x, y, ...]: an even count of numbers');

const CandidateIn = z.strictObject({
  kind: z.enum(['curb', 'lane_marking']),
  points: z
    .array(z.tuple([coord, coord]))
    .min(2)
    .max(1_000),
  score: z.number().min(0).max(1),
});

const shapes = {
  polygons: z.array(Ring).min(1).max(200).meta({ description: 'outer rings of drivable road' }),
  holes: z.array(Ring).max(200).default([]).meta({ description: 'rings inside them that are not drivable' }),
  candidates: z
    .array(CandidateIn)
    .max(200)
    .optional()
    .meta({ description: 'lane-marking and curb polylines' }),
};

/**
 * POST /api/frames/{frame_id}/drivable: without `polygons` the model runs on the frame now; with
 * them, the reviewer's drawing is stored as a human area (the spec names no body).
 */
export const DrivableCreateIn = z
  .strictObject({ ...shapes, polygons: shapes.polygons.optional() })
  .refine((b) => b.polygons !== undefined || (b.holes.length === 0 && b.candidates === undefined), {
    message: 'holes and candidates come with polygons',
    path: ['polygons'],
  });

/** PUT /api/frames/{frame_id}/drivable: the reviewer's polygons and the version they edited. */
export const DrivableEditIn = z.strictObject({
  ...shapes,
  expected_version: z
    .number()
    .int()
    .min(1)
    .max(2 ** 31 - 1),
});

/** POST /api/drivable/backfill (the spec names no body). */
export const DrivableBackfillIn = z.strictObject({
  session_ids: z.array(z.uuid()).min(1).max(1_000),
  replace_model: z
    .boolean()
    .default(false)
    .meta({ description: 'also replace areas the model made before; human-drawn ones never are' }),
});

/**
 * GET /api/drivable/coverage: comma-separated session ids, at most 50 (omit it for every session).
 * The cap keeps even a several-times-too-long list under the HTTP server's 16 KB header limit, so
 * the route refuses it with 422 itself instead of the server answering 431.
 */
export const CoverageQuery = z.strictObject({
  session_ids: z
    .string()
    .max(50 * 37 - 1)
    .optional()
    .transform((s, ctx) => {
      if (s === undefined) return undefined;
      const ids = s.split(',').filter((x) => x.length > 0);
      if (ids.some((id) => !z.uuid().safeParse(id).success)) {
        ctx.addIssue({ code: 'custom', message: 'session_ids must be comma-separated UUIDs' });
        return z.NEVER;
      }
      return ids;
    }),
});
