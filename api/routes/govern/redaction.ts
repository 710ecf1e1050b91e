import { z } from 'zod';
import { commitIdSchema } from '../../../activities/datasets/read';
import { redactionProof } from '../../../activities/govern/redaction-proof';
import type { AppDeps } from '../../deps';
import { actorOf } from '../../http/actor';
import { RouteGroup } from '../../http/route-group';

/** The redaction proof's request (the spec does not show its body; docs/redaction-proof.md). */
export const RedactionProofIn = z
  .strictObject({
    session_id: z.uuid().optional(),
    commit_id: commitIdSchema.optional(),
    offset: z.int().min(0).default(0).meta({ description: 'first frame listed, in session and frame order' }),
    limit: z
      .int()
      .min(1)
      .max(5000)
      .default(500)
      .meta({ description: 'frames listed; the summary and digest cover all' }),
  })
  .refine((b) => (b.session_id === undefined) !== (b.commit_id === undefined), {
    message: 'give exactly one of session_id and commit_id',
    path: ['session_id'],
  });

/** The redaction proof of the `govern` group (docs/redaction-proof.md). */
export function createGovernRedactionRoutes(deps: AppDeps): RouteGroup {
  return new RouteGroup('govern').post(
    '/api/govern/redaction/proof',
    {
      summary:
        'The evidence that every frame of a session or a dataset commit was redacted with the containment rule: per frame, whether the PII pass examined it, its redacted copy, the faces, plates and regions redacted, and each annotated person or vehicle covered by a region inside its box; a verdict per frame, the totals, and a SHA-256 of the whole evidence (audited). Frames listed a page at a time',
      access: 'reviewer',
      body: { name: 'RedactionProofIn', schema: RedactionProofIn },
      statuses: {
        404: 'no such session or dataset commit',
        422: 'more frames than one proof covers (prove its sessions one by one)',
      },
    },
    async ({ body, principal, req }) => {
      const actor = actorOf(principal, req);
      const subject = body.session_id
        ? ({ kind: 'session', id: body.session_id } as const)
        : ({ kind: 'commit', id: body.commit_id! } as const);
      return redactionProof(deps, subject, { offset: body.offset, limit: body.limit }, actor);
    },
  );
}
