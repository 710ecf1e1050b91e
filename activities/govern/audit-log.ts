import type { Prisma } from '../../generated/prisma/client';
import type { Db } from '../db';

/**
 * Reading the audit log (docs/governance-reads.md). The log is append-only: `recordAudit` is its only
 * writer, and nothing in the API updates or deletes its rows; it is read newest first, by id.
 */

export interface AuditQuery {
  actor_id?: string | undefined;
  action?: string | undefined;
  subject_type?: string | undefined;
  subject_id?: string | undefined;
  since?: Date | undefined;
  until?: Date | undefined;
  /** The id of the last entry of the previous page. */
  cursor?: bigint | undefined;
  limit: number;
}

export async function listAudit(db: Db, q: AuditQuery) {
  const where: Prisma.AuditLogWhereInput = {
    ...(q.actor_id ? { actorId: q.actor_id } : {}),
    ...(q.action ? { action: q.action } : {}),
    ...(q.subject_type ? { subjectType: q.subject_type } : {}),
    ...(q.subject_id ? { subjectId: q.subject_id } : {}),
    ...(q.since || q.until
      ? { createdAt: { ...(q.since ? { gte: q.since } : {}), ...(q.until ? { lt: q.until } : {}) } }
      : {}),
  };
  const rows = await db.auditLog.findMany({
    where: { ...where, ...(q.cursor !== undefined ? { id: { lt: q.cursor } } : {}) },
    orderBy: { id: 'desc' },
    take: q.limit + 1,
  });
  const page = rows.slice(0, q.limit);
  return {
    items: page.map((r) => ({
      id: r.id.toString(),
      actor_id: r.actorId,
      action: r.action,
      subject_type: r.subjectType,
      subject_id: r.subjectId,
      detail: r.detail,
      request_id: r.requestId,
      created_at: r.createdAt.toISOString(),
    })),
    next_cursor: rows.length > q.limit ? page[page.length - 1]!.id.toString() : null,
  };
}
