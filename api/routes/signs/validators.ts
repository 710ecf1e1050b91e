import { z } from 'zod';
import { BoxIn } from '../ocr/validators';

/** Body of POST /api/signs/recognize (docs/ocr-signs.md); the spec names none, so the name is ours. */
export const SignRecognizeIn = z
  .strictObject({
    frame_id: z.uuid(),
    boxes: z.array(BoxIn).min(1).max(1024).optional().meta({
      description: 'sign boxes to classify; without them, candidates are proposed',
    }),
    proposals: z
      .array(z.enum(['sign_objects', 'colour_shape']))
      .min(1)
      .max(2)
      .optional()
      .meta({
        description:
          "how candidates are proposed without boxes: the frame's objects of sign-face classes, colour/shape proposals on the pixels (default: both)",
      }),
  })
  .refine((b) => !(b.boxes && b.proposals), {
    message: 'give boxes or proposals, not both',
    path: ['proposals'],
  });
