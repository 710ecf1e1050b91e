import { ocrRegion, ocrVehicles } from '../../../activities/ocr';
import type { AppDeps } from '../../deps';
import { RouteGroup } from '../../http/route-group';
import { OcrRegionIn, OcrRunIn } from './validators';

const UNAVAILABLE = 'an OCR model or its character list is not there (named in the detail)';

/**
 * The `ocr` group: text in a region or over a frame's vehicle boxes with PaddleOCR's PP-OCRv4
 * models (docs/ocr-signs.md). Both read one frame, bounded work, so they answer in the request.
 */
export function createOcrRoutes(deps: AppDeps): RouteGroup {
  return new RouteGroup('ocr')
    .post(
      '/api/ocr/region',
      {
        summary:
          "Text lines in a box of a frame's original image (upscaled when small): each with its box, confidence and whether it is plate-shaped; nothing is stored",
        access: 'reviewer',
        body: { name: 'OcrRegionIn', schema: OcrRegionIn },
        statuses: {
          404: 'no such frame, or its image is not stored',
          422: 'the box leaves too little of the frame',
          503: UNAVAILABLE,
        },
      },
      ({ body }) => ocrRegion(deps, body.frame_id, body.box),
    )
    .post(
      '/api/ocr/run',
      {
        summary:
          'Text on each vehicle of a frame (its objects of vehicle and two-wheeler classes, the largest first, at most ocr.maxVehicles): lines with confidences, plate-shaped reads marked and listed per vehicle; nothing is stored',
        access: 'reviewer',
        body: { name: 'OcrRunIn', schema: OcrRunIn },
        statuses: {
          404: 'no such frame, or its image is not stored',
          503: UNAVAILABLE,
        },
      },
      ({ body }) => ocrVehicles(deps, body.frame_id),
    );
}
