import { healthGate, INSPECTOR_VERSION, type GateDecision } from '../../core/health';
import type { Prisma } from '../../generated/prisma/client';
import { recordAudit } from '../audit';
import type { Db } from '../db';

type Tx = Db | Prisma.TransactionClient;

/** The gate's decision from the rows it may read: the inspector's newest row and the newest override. */
export async function readGate(db: Tx, sessionId: string): Promise<GateDecision> {
  const [row, override] = await Promise.all([
    db.sessionHealth.findFirst({
      where: { sessionId, indexerVersion: INSPECTOR_VERSION },
      orderBy: { createdAt: 'desc' },
    }),
    db.sessionHealthOverride.findFirst({ where: { sessionId }, orderBy: { createdAt: 'desc' } }),
  ]);
  return healthGate(row ? [row] : [], INSPECTOR_VERSION, override ? [override] : []);
}

/**
 * Brings `sessions.quarantined` in line with the gate, inside the caller's transaction, and audits
 * a change. The caller holds the session row lock (lockSession) so two writers cannot interleave.
 */
export async function applyGate(
  tx: Prisma.TransactionClient,
  sessionId: string,
  actor: { actorId: string | null; requestId?: string | null },
): Promise<GateDecision> {
  const decision = await readGate(tx, sessionId);
  const { quarantined } = await tx.session.findUniqueOrThrow({
    where: { id: sessionId },
    select: { quarantined: true },
  });
  if (quarantined !== decision.quarantined) {
    await tx.session.update({ where: { id: sessionId }, data: { quarantined: decision.quarantined } });
    await recordAudit(tx, {
      actorId: actor.actorId,
      action: decision.quarantined ? 'session.quarantined' : 'session.released',
      subjectType: 'session',
      subjectId: sessionId,
      detail: {
        decided_by: decision.decidedBy,
        health_row_id: decision.row?.id ?? null,
        override_id: decision.override?.id ?? null,
      },
      requestId: actor.requestId ?? null,
    });
  }
  return decision;
}

/** Locks the session row for the transaction; false when there is no such session. */
export async function lockSession(tx: Prisma.TransactionClient, sessionId: string): Promise<boolean> {
  const rows = await tx.$queryRaw<
    Array<{ id: string }>
  >`SELECT id FROM sessions WHERE id = ${sessionId}::uuid FOR UPDATE`;
  return rows.length > 0;
}

/** Gate decisions of many sessions in two queries (newest inspector row and override per session). */
export async function readGates(db: Db, sessionIds: string[]): Promise<Map<string, GateDecision>> {
  if (sessionIds.length === 0) return new Map();
  const [rows, overrides] = await Promise.all([
    db.$queryRaw<
      Array<{
        id: string;
        session_id: string;
        indexer_version: string;
        passed: boolean;
        score: number;
        created_at: Date;
      }>
    >`
      SELECT DISTINCT ON (session_id) id, session_id, indexer_version, passed, score, created_at
        FROM session_health
       WHERE indexer_version = ${INSPECTOR_VERSION} AND session_id = ANY(${sessionIds}::uuid[])
       ORDER BY session_id, created_at DESC`,
    db.$queryRaw<
      Array<{
        id: string;
        session_id: string;
        quarantined: boolean;
        reason: string;
        actor_id: string | null;
        created_at: Date;
      }>
    >`
      SELECT DISTINCT ON (session_id) id, session_id, quarantined, reason, actor_id, created_at
        FROM session_health_overrides
       WHERE session_id = ANY(${sessionIds}::uuid[])
       ORDER BY session_id, created_at DESC`,
  ]);
  const rowBy = new Map(
    rows.map((r) => [
      r.session_id,
      {
        id: r.id,
        indexerVersion: r.indexer_version,
        passed: r.passed,
        score: r.score,
        createdAt: r.created_at,
      },
    ]),
  );
  const overrideBy = new Map(
    overrides.map((o) => [
      o.session_id,
      {
        id: o.id,
        quarantined: o.quarantined,
        reason: o.reason,
        actorId: o.actor_id,
        createdAt: o.created_at,
      },
    ]),
  );
  return new Map(
    sessionIds.map((id) => {
      const row = rowBy.get(id);
      const override = overrideBy.get(id);
      return [id, healthGate(row ? [row] : [], INSPECTOR_VERSION, override ? [override] : [])];
    }),
  );
}
