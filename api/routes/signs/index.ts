import { recognizeSigns, signTaxonomyOut } from '../../../activities/signs';
import type { AppDeps } from '../../deps';
import { RouteGroup } from '../../http/route-group';
import { SignRecognizeIn } from './validators';

const UNAVAILABLE =
  'the sign classifier or its label file is not there or does not fit (named in the detail)';

/** The `signs` group: GTSRB traffic-sign recognition mapped onto the ontology (docs/ocr-signs.md). */
export function createSignsRoutes(deps: AppDeps): RouteGroup {
  return new RouteGroup('signs')
    .post(
      '/api/signs/recognize',
      {
        summary:
          "Classify traffic signs on a frame: the boxes given, or candidates proposed from the frame's sign objects and by colour/shape; each answer is a GTSRB class mapped to the ontology's traffic_sign, or `unknown` below the confidence floor; nothing is stored",
        access: 'annotator',
        body: { name: 'SignRecognizeIn', schema: SignRecognizeIn },
        statuses: {
          404: 'no such frame, or its image is not stored',
          422: 'a box leaves too little of the frame, or more crops than signs.maxCrops',
          503: UNAVAILABLE,
        },
      },
      ({ body }) => recognizeSigns(deps, body.frame_id, body.boxes, body.proposals),
    )
    .get(
      '/api/signs/taxonomy',
      {
        summary:
          'The sign classifier’s 43 GTSRB classes with their category and ontology class, the sign-face ontology classes and the confidence floor',
        access: 'annotator',
        statuses: { 503: UNAVAILABLE },
      },
      () => signTaxonomyOut(deps.config),
    );
}
