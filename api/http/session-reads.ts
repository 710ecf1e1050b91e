import { z } from 'zod';
import { NotFoundError } from '../../core/errors';
import { INSPECTOR_VERSION, type GateDecision } from '../../core/health';
import type { Frame, Session, SessionHealth } from '../../generated/prisma/client';
import type { Db } from '../../activities/db';

/**
 * Reads shared by the session-health, inspector, meta (sessions) and objects (frames) routes: path
 * ids, lookups that answer 404, and the JSON shapes of sessions, frames and health rows.
 */

export async function findSession(db: Db, id: string): Promise<Session> {
  const session = await db.session.findUnique({ where: { id } });
  if (!session) throw new NotFoundError(`no session ${id}`);
  return session;
}

/** A bounded `limit` query parameter. */
export const limitParam = (defaultLimit: number, max: number) =>
  z.coerce.number().int().min(1).max(max).default(defaultLimit);

/** `true`/`false` in a query string. */
export const booleanParam = z.enum(['true', 'false']).transform((v) => v === 'true');

export function sessionOut(s: Session) {
  return {
    id: s.id,
    project_id: s.projectId,
    name: s.name,
    vehicle_id: s.vehicleId,
    source_kind: s.sourceKind,
    state: s.state,
    consent_status: s.consentStatus,
    quarantined: s.quarantined,
    error: s.error,
    target_fps: s.targetFps,
    duplicate_count: s.duplicateCount,
    rejected_count: s.rejectedCount,
    expected_sensors: s.expectedSensors,
    present_sensors: s.presentSensors,
    created_at: s.createdAt.toISOString(),
    updated_at: s.updatedAt.toISOString(),
  };
}

export function frameOut(f: Frame) {
  return {
    id: f.id,
    session_id: f.sessionId,
    index: f.index,
    timestamp_ms: f.timestampMs,
    width: f.width,
    height: f.height,
    phash: f.phash,
    context: f.context,
    redacted: f.redactedUri !== null,
    image_url: `/api/frames/${f.id}/image`,
    created_at: f.createdAt.toISOString(),
  };
}

export function healthRowOut(r: SessionHealth, opts: { gateReads?: boolean } = {}) {
  return {
    id: r.id,
    session_id: r.sessionId,
    indexer_version: r.indexerVersion,
    passed: r.passed,
    score: r.score,
    checks: r.checks,
    created_at: r.createdAt.toISOString(),
    ...(opts.gateReads === undefined ? {} : { gate_reads: opts.gateReads }),
  };
}

export function gateOut(sessionId: string, d: GateDecision) {
  return {
    session_id: sessionId,
    indexer_version: INSPECTOR_VERSION,
    verdict: d.verdict,
    quarantined: d.quarantined,
    /** Auto-label runs only on a session the gate passed. */
    autolabel_allowed: d.verdict === 'passed',
    decided_by: d.decidedBy,
    row: d.row
      ? { id: d.row.id, passed: d.row.passed, score: d.row.score, created_at: d.row.createdAt.toISOString() }
      : null,
    override: d.override
      ? {
          id: d.override.id,
          quarantined: d.override.quarantined,
          reason: d.override.reason,
          actor_id: d.override.actorId,
          created_at: d.override.createdAt.toISOString(),
        }
      : null,
  };
}
