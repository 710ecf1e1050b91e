import type { z } from 'zod';
import { reviewObjects } from '../../../activities/annotations/review';
import { parseObjectState } from '../../../core/objects/states';
import { reviewEffect } from '../../../core/review/actions';
import type { AppDeps } from '../../deps';
import { RouteGroup, uuidParams } from '../../http/route-group';
import { actorOf } from '../../http/actor';
import { BulkReviewIn, ReviewIn } from './validators';

type ReviewBody = Pick<z.infer<typeof ReviewIn>, 'action' | 'state' | 'class_name' | 'attrs'>;

const effectOf = (body: ReviewBody) =>
  reviewEffect({
    action: body.action,
    state: body.state === null ? null : parseObjectState(body.state, 'body.state'),
    className: body.class_name,
    attrs: body.attrs,
  });

/** Single and bulk review (docs/annotations.md: actions, their effects, concurrency). */
export function createReviewRoutes(deps: AppDeps): RouteGroup {
  const { db } = deps;
  return new RouteGroup('review')
    .post(
      '/api/objects/{object_id}/review',
      {
        summary:
          'Review one object: confirm/accept, reject, relabel or edit; source becomes human, version +1',
        access: 'reviewer',
        params: uuidParams('object_id'),
        body: { name: 'ReviewIn', schema: ReviewIn },
        statuses: {
          400: 'state outside the allowed list',
          404: 'no such object',
          409: 'expected_version mismatch',
        },
      },
      async ({ params, body, principal, req }) => {
        const id = params.object_id;
        const result = await reviewObjects(
          db,
          {
            objectIds: [id],
            action: body.action,
            effect: effectOf(body),
            expectedVersions: body.expected_version === null ? null : { [id]: body.expected_version },
            reviewer: body.reviewer,
            timeSpentMs: body.time_spent_ms,
            bulk: false,
          },
          actorOf(principal, req),
        );
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
        return { batch_id: result.batchId, count: result.objects.length, objects: result.objects };
      },
    );
}
