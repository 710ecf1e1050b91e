import type { z } from 'zod';
import { createMaskStore } from '../../../activities/annotations/masks';
import { reviewObjects } from '../../../activities/annotations/review';
import type { ShapeEdit } from '../../../core/objects/shape-edit';
import { parseObjectState } from '../../../core/objects/states';
import { checkReviewRole, reviewEffect } from '../../../core/review/actions';
import type { AppDeps } from '../../deps';
import { RouteGroup, uuidParams } from '../../http/route-group';
import { actorOf } from '../../http/actor';
import { tellCampaignsOfReview } from '../../http/campaign-signals';
import { BulkReviewIn, ReviewIn } from './validators';

type ReviewBody = Pick<z.infer<typeof ReviewIn>, 'action' | 'state' | 'class_name' | 'attrs'>;

const effectOf = (body: ReviewBody, shape: ShapeEdit | null = null) =>
  reviewEffect({
    action: body.action,
    state: body.state === null ? null : parseObjectState(body.state, 'body.state'),
    className: body.class_name,
    attrs: body.attrs,
    shape,
  });

/** Single and bulk review (docs/annotations.md: actions, their effects, who may use them, concurrency). */
export function createReviewRoutes(deps: AppDeps): RouteGroup {
  const { db } = deps;
  const masks = createMaskStore(deps.storage);
  return new RouteGroup('review')
    .post(
      '/api/objects/{object_id}/review',
      {
        summary:
          'Review one object: confirm/accept, reject, relabel or edit (class, attrs, and the box, polylines or keypoints); source becomes human, version +1. An annotator may only edit, without a state',
        access: 'annotator',
        params: uuidParams('object_id'),
        body: { name: 'ReviewIn', schema: ReviewIn },
        statuses: {
          400: 'state outside the allowed list',
          403: 'an annotator asking for a verdict: an action other than edit, or a state',
          404: 'no such object',
          409: 'expected_version mismatch',
        },
      },
      async ({ params, body, principal, req }) => {
        checkReviewRole(body, principal.role);
        const id = params.object_id;
        const { bbox, rot_deg, polyline, keypoints } = body;
        const result = await reviewObjects(
          db,
          masks,
          {
            objectIds: [id],
            action: body.action,
            effect: effectOf(body, { bbox, rot_deg, polyline, keypoints }),
            expectedVersions: body.expected_version === null ? null : { [id]: body.expected_version },
            reviewer: body.reviewer,
            timeSpentMs: body.time_spent_ms,
            bulk: false,
          },
          actorOf(principal, req),
        );
        await tellCampaignsOfReview(deps, [id]);
        return result.objects[0];
      },
    )
    .post(
      '/api/objects/bulk-review',
      {
        summary:
          'Review up to 1000 objects in one transaction with one batch stamp; any expected_versions mismatch → 409 and nothing applied',
        access: 'reviewer',
        body: { name: 'BulkReviewIn', schema: BulkReviewIn },
        statuses: {
          400: 'state outside the allowed list',
          404: 'an object does not exist',
          409: 'expected_versions mismatch',
        },
      },
      async ({ body, principal, req }) => {
        const result = await reviewObjects(
          db,
          masks,
          {
            objectIds: body.object_ids,
            action: body.action,
            effect: effectOf(body),
            expectedVersions: body.expected_versions,
            reviewer: body.reviewer,
            timeSpentMs: body.time_spent_ms,
            bulk: true,
          },
          actorOf(principal, req),
        );
        await tellCampaignsOfReview(
          deps,
          result.objects.map((o) => o.id),
        );
        return { batch_id: result.batchId, count: result.objects.length, objects: result.objects };
      },
    );
}
