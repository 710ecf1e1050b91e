import { z } from 'zod';
import { CHECK_NAMES, INSPECTOR_VERSION, type CheckName, type GateDecision } from '../../../core/health';
import { NotFoundError } from '../../../core/errors';
import { recordAudit } from '../../../activities/audit';
import { applyGate, lockSession, readGate, readGates } from '../../../activities/inspector/gate-store';
import type { Prisma } from '../../../generated/prisma/client';
import type { AppDeps } from '../../deps';
import { RouteGroup, uuidParams } from '../../http/route-group';
import { sessionHealthWorkflow } from '../../../workflows/session-health';
import { findSession, gateOut, healthRowOut, sessionOut } from '../../http/session-reads';
import { startWorkflow } from '../../http/start-workflow';
import { BoardQuery, HealthOverrideIn, TrendsQuery } from './validators';

type CheckScores = Partial<Record<CheckName, number>>;

/** Per-check scores of a stored row (its `checks` JSON as the inspector wrote it). */
function checkScores(checks: Prisma.JsonValue): CheckScores {
  const out: CheckScores = {};
  const c = (checks ?? {}) as Record<string, { score?: unknown } | undefined>;
  for (const name of CHECK_NAMES) if (typeof c[name]?.score === 'number') out[name] = c[name].score as number;
  return out;
}

const failedChecks = (checks: Prisma.JsonValue): string[] =>
  Object.entries((checks ?? {}) as Record<string, { passed?: unknown }>)
    .filter(([, c]) => c?.passed === false)
    .map(([n]) => n);

const mean = (xs: number[]): number | null =>
  xs.length ? Number((xs.reduce((s, x) => s + x, 0) / xs.length).toFixed(4)) : null;

/** The `session health` group: the inspector's verdicts, the gate, overrides and health runs. */
export function createSessionHealthRoutes(deps: AppDeps): RouteGroup {
  const { db } = deps;
  return new RouteGroup('session health')
    .get(
      '/api/sessionhealth/board',
      {
        summary: 'Health board: sessions by gate verdict, and the quarantined ones (worst score first)',
        access: 'annotator',
        query: BoardQuery,
      },
      async ({ query }) => {
        const sessions = await db.session.findMany({ orderBy: { createdAt: 'desc' } });
        const gates = await readGates(
          db,
          sessions.map((s) => s.id),
        );
        const totals = {
          sessions: sessions.length,
          passed: 0,
          failed: 0,
          uninspected: 0,
          quarantined: 0,
          overridden: 0,
        };
        for (const s of sessions) {
          const g = gates.get(s.id)!;
          totals[g.verdict]++;
          if (g.quarantined) totals.quarantined++;
          if (g.decidedBy === 'override') totals.overridden++;
        }
        const quarantined = sessions
          .filter((s) => gates.get(s.id)!.quarantined)
          .sort((a, b) => (gates.get(a.id)!.row?.score ?? 0) - (gates.get(b.id)!.row?.score ?? 0))
          .slice(0, query.limit);
        const rows = await db.sessionHealth.findMany({
          where: {
            id: { in: quarantined.map((s) => gates.get(s.id)!.row?.id).filter((x): x is string => !!x) },
          },
        });
        const rowById = new Map(rows.map((r) => [r.id, r]));
        return {
          indexer_version: INSPECTOR_VERSION,
          totals,
          quarantined: quarantined.map((s) => {
            const g = gates.get(s.id)!;
            const row = g.row ? rowById.get(g.row.id) : undefined;
            return {
              session: sessionOut(s),
              gate: gateOut(s.id, g),
              failed_checks: row ? failedChecks(row.checks) : [],
            };
          }),
        };
      },
    )
    .get(
      '/api/sessionhealth/gate/{session_id}',
      {
        summary:
          "The gate's verdict: the newest row of the inspector's own indexer_version, or a newer admin override",
        access: 'annotator',
        params: uuidParams('session_id'),
        statuses: { 404: 'no such session' },
      },
      async ({ params }) => {
        const session = await findSession(db, params.session_id);
        return gateOut(session.id, await readGate(db, session.id));
      },
    )
    .get(
      '/api/sessionhealth/rig/{vehicle_id}/trends',
      {
        summary:
          "Health trend of one vehicle's sessions, oldest first: score and per-check scores of each inspection",
        access: 'annotator',
        params: z.object({ vehicle_id: z.string().min(1).max(200) }),
        query: TrendsQuery,
        statuses: { 404: 'no session of that vehicle' },
      },
      async ({ params, query }) => {
        const vehicleId = params.vehicle_id!;
        const sessions = (
          await db.session.findMany({
            where: { vehicleId },
            orderBy: { createdAt: 'desc' },
            take: query.limit,
          })
        ).reverse();
        if (sessions.length === 0) throw new NotFoundError(`no session of vehicle ${vehicleId}`);
        const gates = await readGates(
          db,
          sessions.map((s) => s.id),
        );
        const rowIds = [...gates.values()].map((g) => g.row?.id).filter((x): x is string => !!x);
        const rows = new Map(
          (await db.sessionHealth.findMany({ where: { id: { in: rowIds } } })).map((r) => [r.id, r]),
        );
        const points = sessions.map((s) => {
          const g = gates.get(s.id)!;
          const row = g.row ? rows.get(g.row.id) : undefined;
          return {
            session_id: s.id,
            name: s.name,
            created_at: s.createdAt.toISOString(),
            verdict: g.verdict,
            quarantined: g.quarantined,
            score: row?.score ?? null,
            inspected_at: row?.createdAt.toISOString() ?? null,
            check_scores: row ? checkScores(row.checks) : {},
          };
        });
        const inspected = points.filter((p) => p.score !== null);
        return {
          vehicle_id: vehicleId,
          indexer_version: INSPECTOR_VERSION,
          summary: {
            sessions: points.length,
            inspected: inspected.length,
            pass_rate: inspected.length
              ? Number((inspected.filter((p) => p.verdict === 'passed').length / inspected.length).toFixed(4))
              : null,
            mean_score: mean(inspected.map((p) => p.score!)),
            by_check: Object.fromEntries(
              CHECK_NAMES.map((name) => [
                name,
                {
                  mean_score: mean(
                    inspected.map((p) => p.check_scores[name]).filter((x): x is number => x !== undefined),
                  ),
                },
              ]),
            ),
          },
          sessions: points,
        };
      },
    )
    .get(
      '/api/sessionhealth/session/{session_id}',
      {
        summary:
          'A session with its gate verdict, its health rows of every writer (newest first, at most 100) and its overrides',
        access: 'annotator',
        params: uuidParams('session_id'),
        statuses: { 404: 'no such session' },
      },
      async ({ params }) => {
        const session = await findSession(db, params.session_id);
        const [gate, rows, overrides] = await Promise.all([
          readGate(db, session.id),
          db.sessionHealth.findMany({
            where: { sessionId: session.id },
            orderBy: { createdAt: 'desc' },
            take: 100,
          }),
          db.sessionHealthOverride.findMany({
            where: { sessionId: session.id },
            orderBy: { createdAt: 'desc' },
            take: 100,
          }),
        ]);
        return {
          session: sessionOut(session),
          gate: gateOut(session.id, gate),
          rows: rows.map((r) => healthRowOut(r, { gateReads: r.id === gate.row?.id })),
          overrides: overrides.map((o) => ({
            id: o.id,
            quarantined: o.quarantined,
            reason: o.reason,
            actor_id: o.actorId,
            created_at: o.createdAt.toISOString(),
          })),
        };
      },
    )
    .post(
      '/api/sessionhealth/session/{session_id}/override',
      {
        summary:
          "Admin override of the session's quarantine, with a reason; it stands until a newer inspector row",
        access: 'admin',
        params: uuidParams('session_id'),
        body: { name: 'HealthOverrideIn', schema: HealthOverrideIn },
        successStatus: 201,
        statuses: { 404: 'no such session' },
      },
      async ({ params, body, principal, req }) => {
        const sessionId = params.session_id;
        const decision: GateDecision = await db.$transaction(async (tx) => {
          if (!(await lockSession(tx, sessionId))) throw new NotFoundError(`no session ${sessionId}`);
          const override = await tx.sessionHealthOverride.create({
            data: {
              sessionId,
              quarantined: body.quarantined,
              reason: body.reason,
              actorId: principal.userId,
            },
          });
          await recordAudit(tx, {
            actorId: principal.userId,
            action: 'session.health.overridden',
            subjectType: 'session',
            subjectId: sessionId,
            detail: { override_id: override.id, quarantined: body.quarantined, reason: body.reason },
            requestId: String(req.id),
          });
          return applyGate(tx, sessionId, { actorId: principal.userId, requestId: String(req.id) });
        });
        return gateOut(sessionId, decision);
      },
    )
    .post(
      '/api/sessionhealth/session/{session_id}/run',
      {
        summary:
          'Start a health run (Temporal workflow sessionHealthWorkflow, id health-<session_id>); 202 with a Location to watch',
        access: 'reviewer',
        params: uuidParams('session_id'),
        successStatus: 202,
        statuses: { 404: 'no such session', 409: 'a health run of this session is already running' },
      },
      async ({ params, res, principal, req }) => {
        const session = await findSession(db, params.session_id);
        const started = await startWorkflow(deps, res, {
          workflow: sessionHealthWorkflow,
          workflowId: `health-${session.id}`,
          args: [{ sessionId: session.id }],
          location: `/api/sessionhealth/session/${session.id}`,
          what: `a health run of session ${session.id}`,
        });
        await recordAudit(db, {
          actorId: principal.userId,
          action: 'session.health.run.started',
          subjectType: 'session',
          subjectId: session.id,
          detail: { workflow_id: started.workflow_id, run_id: started.run_id },
          requestId: String(req.id),
        });
        return { session_id: session.id, ...started };
      },
    )
    .get(
      '/api/sessionhealth/compat-matrix',
      {
        summary:
          'Which indexer versions wrote health rows over how many sessions, with their verdicts, and which one the gate reads',
        access: 'annotator',
      },
      async () => {
        const versions = await db.$queryRaw<
          Array<{
            indexer_version: string;
            rows: bigint;
            sessions: bigint;
            passed_sessions: bigint;
            newest_at: Date;
          }>
        >`
          WITH newest AS (
            SELECT DISTINCT ON (session_id, indexer_version) session_id, indexer_version, passed
              FROM session_health ORDER BY session_id, indexer_version, created_at DESC)
          SELECT h.indexer_version, count(*) AS rows, count(DISTINCT h.session_id) AS sessions,
                 (SELECT count(*) FROM newest n WHERE n.indexer_version = h.indexer_version AND n.passed) AS passed_sessions,
                 max(h.created_at) AS newest_at
            FROM session_health h GROUP BY h.indexer_version ORDER BY h.indexer_version`;
        const total = await db.session.count();
        const inspector = versions.find((v) => v.indexer_version === INSPECTOR_VERSION);
        return {
          gate_reads: INSPECTOR_VERSION,
          sessions: total,
          sessions_without_gate_row: total - Number(inspector?.sessions ?? 0),
          versions: versions.map((v) => ({
            indexer_version: v.indexer_version,
            gate_reads: v.indexer_version === INSPECTOR_VERSION,
            rows: Number(v.rows),
            sessions: Number(v.sessions),
            passed_sessions: Number(v.passed_sessions),
            failed_sessions: Number(v.sessions) - Number(v.passed_sessions),
            newest_row_at: v.newest_at.toISOString(),
          })),
        };
      },
    );
}
