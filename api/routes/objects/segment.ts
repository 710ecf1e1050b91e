import { z } from 'zod';
import { residentSegmenter, segmentPrompt } from '../../../activities/detect/segmentation';
import type { Box } from '../../../core/geometry';
import type { AppDeps } from '../../deps';
import { BoxIn } from '../../http/shapes';
import { RouteGroup } from '../../http/route-group';

/** A segmentation prompt: a frame, the class to segment, and exactly one of a box or a point (docs/masks.md). */
export const SegmentIn = z
  .strictObject({
    frame_id: z.uuid(),
    class_name: z.string().min(1).max(128),
    box: BoxIn.nullable().default(null),
    point: z
      .array(z.number())
      .length(2)
      .nullable()
      .default(null)
      .meta({ description: '[x, y] in frame pixels, on the object' }),
  })
  .refine((b) => (b.box === null) !== (b.point === null), {
    message: 'give exactly one of box and point',
  });

/** POST /api/segment (filed under `objects`): a mask for a box or point prompt from the VOC segmentation model. */
export function createSegmentRoutes(deps: AppDeps): RouteGroup {
  // Loaded on the first prompt and kept: a prompt then costs one model run.
  const segmenter = residentSegmenter(deps.config);
  return new RouteGroup('objects').post(
    '/api/segment',
    {
      summary:
        'Mask polygons for a box or a point prompt on a frame, from the VOC segmentation model run on the crop with context and kept inside the box (a point keeps the ring holding it), with the coverage of the box and a quality flag when it covers too little',
      access: 'annotator',
      body: { name: 'SegmentIn', schema: SegmentIn },
      statuses: {
        404: 'no such frame',
        422: 'a class the model does not know, a box or point outside the frame, no object of the class at the point',
        503: 'the segmentation model is not configured or does not fit',
      },
    },
    async ({ body }) =>
      segmentPrompt(deps, segmenter, {
        frameId: body.frame_id,
        className: body.class_name,
        box: body.box as Box | null,
        point: body.point as [number, number] | null,
      }),
  );
}
