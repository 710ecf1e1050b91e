import type { AuditLog, Prisma } from '../../generated/prisma/client';
import type { Db } from '../db';
import { bigintPage, SUMMARY_TOP, usersById, windowWhere, type IdPage, type TimeWindow } from './reads';

/** The audit log read as an activity feed (docs/inbox.md). */

export interface ActivityFilter extends TimeWindow {
  actorId?: string | undefined;
  action?: string | undefined;
  subjectType?: string | undefined;
  subjectId?: string | undefined;
}

/** Prisma passes `startsWith` to LIKE as it is: its wildcards and escape must be taken literally. */
const likeLiteral = (text: string) => text.replace(/[\\%_]/g, (c) => `\\${c}`);

/** `ingest.*` is every action that begins with `ingest.`; anything else is one action. */
const actionWhere = (action: string | undefined): Prisma.AuditLogWhereInput =>
  action === undefined
    ? {}
    : action.endsWith('*')
      ? { action: { startsWith: likeLiteral(action.slice(0, -1)) } }
      : { action };

const activityWhere = (f: ActivityFilter): Prisma.AuditLogWhereInput => ({
  ...(f.actorId ? { actorId: f.actorId } : {}),
  ...actionWhere(f.action),
  ...(f.subjectType ? { subjectType: f.subjectType } : {}),
  ...(f.subjectId ? { subjectId: f.subjectId } : {}),
  ...windowWhere(f),
});

export async function listActivity(db: Db, filter: ActivityFilter, paging: IdPage) {
  const rows = await db.auditLog.findMany({
    where: { ...activityWhere(filter), ...(paging.cursor ? { id: { lt: paging.cursor } } : {}) },
    orderBy: { id: 'desc' },
    take: paging.limit + 1,
  });
  const { page, next_cursor } = bigintPage(rows, paging.limit);
  const actors = await usersById(
    db,
    page.map((r) => r.actorId),
  );
  const out = (r: AuditLog) => ({
    id: r.id.toString(),
    actor_id: r.actorId,
    actor: r.actorId ? (actors.get(r.actorId) ?? null) : null,
    action: r.action,
    subject_type: r.subjectType,
    subject_id: r.subjectId,
    detail: r.detail,
    request_id: r.requestId,
    created_at: r.createdAt.toISOString(),
  });
  return { items: page.map(out), next_cursor };
}

/** How many entries of each action and of each actor the filter finds, the most frequent first. */
export async function activitySummary(db: Db, filter: ActivityFilter) {
  const where = activityWhere(filter);
  const [total, byAction, byActor] = await Promise.all([
    db.auditLog.count({ where }),
    db.auditLog.groupBy({
      by: ['action'],
      where,
      _count: { id: true },
      orderBy: [{ _count: { id: 'desc' } }, { action: 'asc' }],
      take: SUMMARY_TOP,
    }),
    db.auditLog.groupBy({
      by: ['actorId'],
      where,
      _count: { id: true },
      orderBy: [{ _count: { id: 'desc' } }, { actorId: 'asc' }],
      take: SUMMARY_TOP,
    }),
  ]);
  const actors = await usersById(
    db,
    byActor.map((a) => a.actorId),
  );
  return {
    total,
    by_action: byAction.map((a) => ({ action: a.action, count: a._count.id })),
    by_actor: byActor.map((a) => ({
      actor_id: a.actorId,
      actor: a.actorId ? (actors.get(a.actorId) ?? null) : null,
      count: a._count.id,
    })),
  };
}
