import { z } from 'zod';
import { BoxIn } from '../ocr/validators';

/** Body of POST /api/signs/recognize (docs/ocr-signs.md); the spec names none, so the name is ours. */
export const SignRecognizeIn = z.strictObject({
  frame_id: z.uuid(),
  boxes: z.array(BoxIn).min(1).max(1024).optional().meta({
    description: "sign boxes to classify; without them, the frame's objects of sign-face classes are",
  }),
});
