import { z } from 'zod';

/**
 * Geometry fields as the objects group (create, mask) and the review group (edit) take them, so an
 * object's shapes obey the same limits whichever route writes them (docs/annotations.md, Geometry).
 */

/** Size limits that keep one request bounded (docs/annotations.md). */
export const SHAPE_LIMITS = { rings: 64, ringNumbers: 20_000, lines: 64, keypoints: 128 } as const;

/** A flat [x, y, x, y, ...] ring or line. */
const ring = z.array(z.number()).max(SHAPE_LIMITS.ringNumbers);

export const BoxIn = z
  .array(z.number())
  .length(4)
  .meta({ description: '[x1, y1, x2, y2] in frame pixels; with rot_deg, the box before rotation' });

export const MaskRingsIn = z.array(ring).max(SHAPE_LIMITS.rings);

export const PolylinesIn = z.array(ring).max(SHAPE_LIMITS.lines);

export const KeypointsIn = z
  .record(z.string().min(1).max(64), z.array(z.number()).min(2).max(3))
  .refine(
    (k) => Object.keys(k).length <= SHAPE_LIMITS.keypoints,
    `at most ${SHAPE_LIMITS.keypoints} keypoints`,
  );

/** A crop's query: padding around the box (a fraction of its size) and the longest side of the JPEG. */
export const CropQuery = z.strictObject({
  pad: z.coerce.number().min(0).max(2).default(0.15),
  size: z.coerce.number().int().min(16).max(1024).optional(),
});
