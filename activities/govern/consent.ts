import type { AppConfig } from '../../core/config';
import { sliceFrom, sliceSql, type SlicePredicate } from '../../core/curation/slice';
import { NotFoundError, RefusedError } from '../../core/errors';
import { idCursorArgs, idPage } from '../../core/pagination';
import {
  allowedStatuses,
  blockedSentence,
  type BlockedSession,
  type ConsentStatus,
  type ConsentUse,
} from '../../core/govern/consent';
import type { Prisma } from '../../generated/prisma/client';
import { recordAudit } from '../audit';
import type { Db } from '../db';
import { emitEvent } from '../events/emit';
import type { SqlQuery } from '../export/sql';

/**
 * Consent where the data is read (docs/consent.md). Every use the spec gates calls one of these
 * before it reads sessions' data:
 * - a selection by slice (an export; a campaign or active-learning selection) narrows its slice
 *   with `excludeBlockedSessions` and reports the sessions it left out;
 * - a use of a fixed set of sessions (training on a dataset commit, downloading or publishing a
 *   commit, a campaign iteration) calls `assertConsentAllows`, which refuses naming them.
 */

type ConsentConfig = AppConfig['consent'];

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The sessions among `sessionIds` whose consent blocks every gated use. A session erased since
 * (a commit still names it, no row remains) is the erasure's business, not consent's.
 */
export async function sessionsBlockedFor(
  db: Db,
  consent: ConsentConfig,
  sessionIds: readonly string[],
): Promise<BlockedSession[]> {
  const ids = [...new Set(sessionIds)].filter((id) => UUID.test(id));
  if (!ids.length) return [];
  const rows = await db.session.findMany({
    where: { id: { in: ids }, consentStatus: { notIn: allowedStatuses(consent.blocking) } },
    select: { id: true, name: true, consentStatus: true },
    orderBy: [{ name: 'asc' }, { id: 'asc' }],
  });
  return rows.map((s) => ({ session_id: s.id, name: s.name, consent_status: s.consentStatus }));
}

/** Refuses (422) a use of sessions whose consent blocks it, naming each. */
export async function assertConsentAllows(
  db: Db,
  consent: ConsentConfig,
  use: ConsentUse,
  sessionIds: readonly string[],
): Promise<void> {
  const blocked = await sessionsBlockedFor(db, consent, sessionIds);
  if (blocked.length)
    throw new RefusedError(
      `${blockedSentence(use, blocked)}; record consent with POST /api/govern/consent (docs/consent.md)`,
      { use, blocked_sessions: blocked },
    );
}

/**
 * A slice narrowed to the sessions whose consent allows the use: the sessions it would have read
 * that consent blocks, and the predicate that leaves them out (one statement over the slice).
 */
export async function excludeBlockedSessions(
  sql: SqlQuery,
  consent: ConsentConfig,
  predicate: SlicePredicate,
): Promise<{ predicate: SlicePredicate; excluded: BlockedSession[] }> {
  const slice = sliceSql(predicate, 2);
  const excluded = await sql<BlockedSession>(
    `SELECT s.id::text AS session_id, s.name, s.consent_status FROM sessions s
      WHERE NOT (s.consent_status = ANY($1::text[]))
        AND EXISTS (SELECT 1 FROM ${sliceFrom(slice)} WHERE f.session_id = s.id AND ${slice.where})
      ORDER BY s.name, s.id`,
    [allowedStatuses(consent.blocking), ...slice.params],
  );
  if (!excluded.length) return { predicate, excluded };
  const ids = [...new Set([...(predicate.exclude_session_ids ?? []), ...excluded.map((s) => s.session_id)])];
  return { predicate: { ...predicate, exclude_session_ids: ids }, excluded };
}

export interface ConsentChange {
  sessionId: string;
  consentStatus: ConsentStatus;
  /** Undefined keeps the recorded value; null clears it. */
  legalBasis?: string | null | undefined;
  retentionUntil?: Date | null | undefined;
}

const consentSelect = {
  id: true,
  name: true,
  consentStatus: true,
  legalBasis: true,
  retentionUntil: true,
} as const;
type SessionConsent = Prisma.SessionGetPayload<{ select: typeof consentSelect }>;

/** The consent fields of a session, as the audit entry's before and after hold them. */
const consentFields = (s: SessionConsent) => ({
  consent_status: s.consentStatus,
  legal_basis: s.legalBasis,
  retention_until: s.retentionUntil?.toISOString() ?? null,
});

/**
 * Records a session's consent, its audit entry (before and after) and the event, in one
 * transaction: a change is never in force without its record.
 */
export async function recordConsent(
  db: Db,
  change: ConsentChange,
  actor: { userId: string | null; requestId: string },
) {
  return db.$transaction(async (tx) => {
    // The row lock orders concurrent changes of one session, so each audit entry's `before` is exact.
    const locked = await tx.$queryRaw<Array<{ id: string }>>`
      SELECT id::text AS id FROM sessions WHERE id = ${change.sessionId}::uuid FOR UPDATE`;
    if (!locked.length) throw new NotFoundError(`no session ${change.sessionId}`);
    const before = consentFields(
      await tx.session.findUniqueOrThrow({ where: { id: change.sessionId }, select: consentSelect }),
    );
    const updated = await tx.session.update({
      where: { id: change.sessionId },
      data: {
        consentStatus: change.consentStatus,
        legalBasis: change.legalBasis,
        retentionUntil: change.retentionUntil,
      },
      select: consentSelect,
    });
    const after = consentFields(updated);
    await recordAudit(tx, {
      actorId: actor.userId,
      action: 'session.consent',
      subjectType: 'session',
      subjectId: change.sessionId,
      detail: { before, after },
      requestId: actor.requestId,
    });
    await emitEvent(tx, {
      kind: 'session.consent_changed',
      subjectType: 'session',
      subjectId: change.sessionId,
      actorId: actor.userId,
      payload: {
        session_id: change.sessionId,
        name: updated.name,
        before: before.consent_status,
        after: after.consent_status,
        legal_basis: after.legal_basis,
        retention_until: after.retention_until,
      },
    });
    return { session_id: updated.id, name: updated.name, ...after, previous: before };
  });
}

/** The sessions that hold a consent status now, by id, paged by id cursor. */
export async function sessionsHolding(
  db: Db,
  status: ConsentStatus,
  page: { limit: number; cursor?: string | undefined },
) {
  const where = { consentStatus: status };
  const [total, rows] = await Promise.all([
    db.session.count({ where }),
    db.session.findMany({
      where,
      orderBy: { id: 'asc' },
      select: { ...consentSelect, state: true, updatedAt: true },
      ...idCursorArgs(page),
    }),
  ]);
  const { page: shown, next_cursor } = idPage(rows, page.limit);
  return {
    total,
    items: shown.map((s) => ({
      session_id: s.id,
      name: s.name,
      state: s.state,
      ...consentFields(s),
      updated_at: s.updatedAt.toISOString(),
    })),
    next_cursor,
  };
}
