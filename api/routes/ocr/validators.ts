import { z } from 'zod';

/** Bodies of the ocr routes (docs/ocr-signs.md); the spec names none, so the names are ours. */

export const BoxIn = z
  .tuple([z.number().finite(), z.number().finite(), z.number().finite(), z.number().finite()])
  .refine(([x1, y1, x2, y2]) => x2 > x1 && y2 > y1, {
    message: 'box must be [x1, y1, x2, y2] with x2 > x1 and y2 > y1',
  })
  .meta({ description: '[x1, y1, x2, y2] in pixels of the frame' });

export const OcrRegionIn = z.strictObject({
  frame_id: z.uuid(),
  box: BoxIn,
});

export const OcrRunIn = z.strictObject({
  frame_id: z.uuid(),
});
