import { z } from 'zod';
import { governLineage, LINEAGE_KINDS, type LineageSubject } from '../../../activities/govern/lineage';
import type { AppDeps } from '../../deps';
import { RouteGroup } from '../../http/route-group';

const UUID = '[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}';
/** `session:<uuid>`, `object:<uuid>`, `commit:<sha256 hex>` or `model:<version>` (docs/governance-reads.md). */
const SUBJECT = new RegExp(`^(?:(?:session|object):${UUID}|commit:[0-9a-f]{64}|model:\\S.{0,199})$`);

const LineageParams = z.object({
  subject: z
    .string()
    .regex(SUBJECT, 'session:<uuid>, commit:<commit id>, model:<model version> or object:<uuid>')
    .meta({ description: `${LINEAGE_KINDS.join(' | ')}, a colon, and the id` }),
});

function parseSubject(subject: string): LineageSubject {
  const at = subject.indexOf(':');
  return { kind: subject.slice(0, at) as LineageSubject['kind'], id: subject.slice(at + 1).trim() };
}

/** Lineage of the `govern` group (docs/governance-reads.md); the `campaigns` group serves the per-kind routes it builds on. */
export function createGovernLineageRoutes(deps: AppDeps): RouteGroup {
  return new RouteGroup('govern').get(
    '/api/govern/lineage/{subject}',
    {
      summary:
        'What a session, dataset commit, model version or annotation object came from and what used it: sessions → commits → training jobs → models, with reviews, provenance and auto-label jobs',
      access: 'reviewer',
      params: LineageParams,
      statuses: { 404: 'no such session, commit, model or object' },
    },
    async ({ params }) => governLineage(deps, parseSubject(params.subject)),
  );
}
