import type { Prisma } from '../generated/prisma/client';
import type { Db } from './db';

/** One audit-log entry: who did what to which subject. Also feeds the activity inbox. */
export interface AuditEntry {
  actorId: string | null;
  action: string;
  subjectType: string;
  subjectId?: string | null;
  detail?: Prisma.InputJsonValue;
  requestId?: string | null;
}

/** Records inside the caller's transaction when given one, so the entry commits with the write. */
export async function recordAudit(db: Db | Prisma.TransactionClient, entry: AuditEntry): Promise<void> {
  await db.auditLog.create({
    data: {
      actorId: entry.actorId,
      action: entry.action,
      subjectType: entry.subjectType,
      subjectId: entry.subjectId ?? null,
      detail: entry.detail ?? {},
      requestId: entry.requestId ?? null,
    },
  });
}
