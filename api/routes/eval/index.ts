import { z } from 'zod';
import { latestOperation, listOperations } from '../../../activities/quality/operations';
import type { AppDeps } from '../../deps';
import { RouteGroup } from '../../http/route-group';
import { limitParam } from '../../http/session-reads';

const opType = z
  .string()
  .regex(/^[a-z][a-z0-9_]{0,63}$/, 'an operation type: lower-case letters, digits, underscores')
  .meta({ description: 'gold_measure, agreement, bootstrap, significance, parity, inference_run…' });

const OperationsQuery = z.strictObject({
  op_type: opType.optional(),
  subject_id: z
    .string()
    .min(1)
    .max(200)
    .optional()
    .meta({ description: 'a gold set, run, model version… the operation measured' }),
  limit: limitParam(50, 500),
  cursor: z.uuid().optional().meta({ description: 'next_cursor of the previous page' }),
});

/** The `eval` group: the log of every evaluation the quality plane ran (docs/quality.md). */
export function createEvalRoutes(deps: AppDeps): RouteGroup {
  const { db } = deps;
  return new RouteGroup('eval')
    .get(
      '/api/eval/operations',
      {
        summary:
          'Evaluations run, newest first, with their parameters and results; filter by op_type and subject_id',
        access: 'annotator',
        query: OperationsQuery,
      },
      async ({ query }) => listOperations(db, query),
    )
    .get(
      '/api/eval/operations/{op_type}/latest',
      {
        summary: 'The latest evaluation of a kind (optionally of one subject)',
        access: 'annotator',
        params: z.object({ op_type: opType }),
        query: z.strictObject({ subject_id: z.string().min(1).max(200).optional() }),
        statuses: { 404: 'none of that kind has run' },
      },
      async ({ params, query }) => latestOperation(db, params.op_type, query.subject_id),
    );
}
