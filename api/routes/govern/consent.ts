import { z } from 'zod';
import { recordConsent, sessionsHolding } from '../../../activities/govern/consent';
import { CONSENT_ENFORCED_AT, CONSENT_STATUSES, consentGate } from '../../../core/govern/consent';
import type { AppDeps } from '../../deps';
import { RouteGroup } from '../../http/route-group';
import { limitParam } from '../../http/session-reads';

/** The spec's ConsentIn. An omitted legal_basis or retention_until keeps the recorded value; null clears it. */
export const ConsentIn = z.strictObject({
  session_id: z.uuid(),
  consent_status: z.enum(CONSENT_STATUSES),
  legal_basis: z.string().trim().min(1).max(500).nullable().optional(),
  retention_until: z.iso
    .datetime({ offset: true })
    .nullable()
    .optional()
    .meta({ description: 'when the retention sweep may erase the session; null: no date' }),
});

const GateParams = z.object({ consent_status: z.enum(CONSENT_STATUSES) });
const GateQuery = z.strictObject({
  limit: limitParam(100, 1000).meta({ description: 'sessions listed, by id' }),
  cursor: z.uuid().optional().meta({ description: 'next_cursor of the previous page' }),
});

/** The consent part of the `govern` group (docs/consent.md). */
export function createGovernConsentRoutes(deps: AppDeps): RouteGroup {
  const { db, config } = deps;
  return new RouteGroup('govern')
    .post(
      '/api/govern/consent',
      {
        summary:
          "Record a session's consent status, legal basis and retention date; audited with before and after, and announced as session.consent_changed. A status in APP_CONSENT__BLOCKING takes the session out of exports, training and campaigns from the next read on",
        access: 'admin',
        body: { name: 'ConsentIn', schema: ConsentIn },
        statuses: { 404: 'no such session' },
      },
      async ({ body, principal, req }) => {
        const recorded = await recordConsent(
          db,
          {
            sessionId: body.session_id,
            consentStatus: body.consent_status,
            legalBasis: body.legal_basis,
            retentionUntil:
              body.retention_until === undefined || body.retention_until === null
                ? body.retention_until
                : new Date(body.retention_until),
          },
          { userId: principal.userId, requestId: String(req.id) },
        );
        return { ...recorded, gate: consentGate(body.consent_status, config.consent.blocking) };
      },
    )
    .get(
      '/api/govern/consent/{consent_status}/gate',
      {
        summary:
          'What a consent status blocks (export, training, campaigns and active-learning selection) under this deployment’s APP_CONSENT__BLOCKING, where each block is enforced, and the sessions that hold the status now',
        access: 'reviewer',
        params: GateParams,
        query: GateQuery,
      },
      async ({ params, query }) => ({
        ...consentGate(params.consent_status, config.consent.blocking),
        enforced_at: CONSENT_ENFORCED_AT,
        sessions: await sessionsHolding(db, params.consent_status, query),
      }),
    );
}
