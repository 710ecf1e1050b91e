import { ConflictError, NotFoundError, RefusedError } from '../../../core/errors';
import { INSPECTOR_VERSION, isInspectorVersion } from '../../../core/health';
import { recordAudit } from '../../../activities/audit';
import { isMissingObject, objectLocation } from '../../../activities/inspector/frame-objects';
import { lockSession, readGate, readGates } from '../../../activities/inspector/gate-store';
import { Prisma, type Session } from '../../../generated/prisma/client';
import { objectOut } from '../../../activities/annotations/objects';
import type { Db } from '../../../activities/db';
import type { AppDeps } from '../../deps';
import { RouteGroup, uuidParams } from '../../http/route-group';
import { healthSweepWorkflow } from '../../../workflows/session-health';
import { findSession, frameOut, gateOut, healthRowOut, sessionOut } from '../../http/session-reads';
import { startWorkflow } from '../../http/start-workflow';
import { EventsQuery, FrameAtQuery, HealthRowIn, InspectorSessionsQuery, LayoutIn } from './validators';

/** The frame at `t` ms of a session: exact, or the nearest / last before / first after. */
async function frameAt(db: Db, sessionId: string, t: number, mode: 'nearest' | 'before' | 'after') {
  // Both lookups walk the (session_id, timestamp_ms) index.
  const [before, after] = await Promise.all([
    mode === 'after'
      ? null
      : db.frame.findFirst({
          where: { sessionId, timestampMs: { lte: t } },
          orderBy: [{ timestampMs: 'desc' }, { index: 'desc' }],
        }),
    mode === 'before'
      ? null
      : db.frame.findFirst({
          where: { sessionId, timestampMs: { gte: t } },
          orderBy: [{ timestampMs: 'asc' }, { index: 'asc' }],
        }),
  ]);
  const frame = !before
    ? after
    : !after
      ? before
      : t - before.timestampMs <= after.timestampMs - t
        ? before
        : after;
  if (!frame)
    throw new NotFoundError(
      `session ${sessionId} has no frame ${mode === 'nearest' ? 'near' : mode} ${t} ms`,
    );
  return frame;
}

const RECORDING_EXTENSIONS = { mcap: /\.mcap$/i, bag: /\.bag$/i };

/**
 * The session's recording in object storage, when its source is an MCAP (or, for the viewer, a
 * ROS 1 bag) that ingest kept there. A source outside object storage, or of another kind, is
 * refused by name.
 */
async function storedRecording(
  deps: AppDeps,
  session: Session,
  accept: Array<keyof typeof RECORDING_EXTENSIONS>,
) {
  const kinds = accept.join(' or ');
  const uri = session.sourceUri;
  if (!uri)
    throw new RefusedError(
      `session ${session.id} has no recorded source (${session.sourceKind}); no ${kinds} to open`,
    );
  if (uri.startsWith('/') || uri.startsWith('file:'))
    throw new RefusedError(
      `session ${session.id} was ingested from a server-side path, not from object storage; no ${kinds} to sign`,
    );
  const at = objectLocation(deps.storage, uri, 'uploads');
  if (!accept.some((k) => RECORDING_EXTENSIONS[k].test(at.key)))
    throw new RefusedError(
      `session ${session.id}'s source is a ${session.sourceKind} (${at.key.split('/').pop()}), not a ${kinds} file`,
    );
  try {
    await deps.storage.client.statObject(at.bucket, at.key);
  } catch (err) {
    if (isMissingObject(err))
      throw new NotFoundError(`session ${session.id}'s recording ${at.key} is no longer in object storage`);
    throw err;
  }
  const seconds = deps.config.inspector.signedUrlSeconds;
  const url = await deps.storage.client.presignedGetObject(at.bucket, at.key, seconds);
  return { url, at, expiresAt: new Date(Date.now() + seconds * 1000).toISOString() };
}

/** The `inspector` group: the session browser's reads, health rows of other writers, layouts. */
export function createInspectorRoutes(deps: AppDeps): RouteGroup {
  const { db } = deps;
  return new RouteGroup('inspector')
    .post(
      '/api/inspector/health/sweep',
      {
        summary:
          'Inspect every session (Temporal workflow healthSweepWorkflow, id health-sweep); 202 with a Location to watch',
        access: 'reviewer',
        successStatus: 202,
        statuses: { 409: 'a sweep is already running' },
      },
      async ({ res, principal, req }) => {
        const started = await startWorkflow(deps, res, {
          workflow: healthSweepWorkflow,
          workflowId: 'health-sweep',
          args: [{}],
          location: '/api/sessionhealth/board',
          what: 'a health sweep',
        });
        await recordAudit(db, {
          actorId: principal.userId,
          action: 'session.health.sweep.started',
          subjectType: 'session',
          detail: started,
          requestId: String(req.id),
        });
        return started;
      },
    )
    .get(
      '/api/inspector/sessions',
      {
        summary: 'Sessions with their gate verdict, newest first; filter by quarantine or vehicle',
        access: 'annotator',
        query: InspectorSessionsQuery,
      },
      async ({ query }) => {
        const sessions = await db.session.findMany({
          where: {
            ...(query.quarantined === undefined ? {} : { quarantined: query.quarantined }),
            ...(query.vehicle_id ? { vehicleId: query.vehicle_id } : {}),
          },
          orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
          take: query.limit,
        });
        const gates = await readGates(
          db,
          sessions.map((s) => s.id),
        );
        return { items: sessions.map((s) => ({ ...sessionOut(s), gate: gateOut(s.id, gates.get(s.id)!) })) };
      },
    )
    .get(
      '/api/inspector/sessions/{session_id}/health',
      {
        summary: "The gate verdict and each writer's newest health row",
        access: 'annotator',
        params: uuidParams('session_id'),
        statuses: { 404: 'no such session' },
      },
      async ({ params }) => {
        const session = await findSession(db, params.session_id);
        const [gate, newest] = await Promise.all([
          readGate(db, session.id),
          db.$queryRaw<Array<{ id: string }>>`
            SELECT DISTINCT ON (indexer_version) id FROM session_health
             WHERE session_id = ${session.id}::uuid ORDER BY indexer_version, created_at DESC`,
        ]);
        const rows = await db.sessionHealth.findMany({
          where: { id: { in: newest.map((r) => r.id) } },
          orderBy: { indexerVersion: 'asc' },
        });
        return {
          gate: gateOut(session.id, gate),
          writers: rows.map((r) => healthRowOut(r, { gateReads: r.indexerVersion === INSPECTOR_VERSION })),
        };
      },
    )
    .post(
      '/api/inspector/sessions/{session_id}/health',
      {
        summary:
          "Record a health row of another writer under its own indexer_version; it never moves the gate (the inspector@ family is the inspector's alone)",
        access: 'reviewer',
        params: uuidParams('session_id'),
        body: { name: 'HealthRowIn', schema: HealthRowIn },
        successStatus: 201,
        statuses: { 404: 'no such session' },
      },
      async ({ params, body, principal, req }) => {
        const sessionId = params.session_id;
        if (isInspectorVersion(body.indexer_version)) {
          throw new RefusedError(
            `indexer_version ${body.indexer_version} belongs to the inspector; start a health run instead (POST /api/sessionhealth/session/${sessionId}/run)`,
          );
        }
        const { row, gate } = await db.$transaction(async (tx) => {
          if (!(await lockSession(tx, sessionId))) throw new NotFoundError(`no session ${sessionId}`);
          const row = await tx.sessionHealth.create({
            data: {
              sessionId,
              indexerVersion: body.indexer_version,
              passed: body.passed,
              score: body.score,
              checks: body.checks as Prisma.InputJsonValue,
            },
          });
          await recordAudit(tx, {
            actorId: principal.userId,
            action: 'session.health.recorded',
            subjectType: 'session',
            subjectId: sessionId,
            detail: { health_row_id: row.id, indexer_version: row.indexerVersion, passed: row.passed },
            requestId: String(req.id),
          });
          return { row, gate: await readGate(tx, sessionId) };
        });
        return { row: healthRowOut(row, { gateReads: false }), gate: gateOut(sessionId, gate) };
      },
    )
    .get(
      '/api/inspector/sessions/{session_id}/frame-at',
      {
        summary:
          'The frame at t ms from the drive start (nearest by default, or the last before / first after)',
        access: 'annotator',
        params: uuidParams('session_id'),
        query: FrameAtQuery,
        statuses: { 404: 'no such session, or no frame there' },
      },
      async ({ params, query }) => {
        const session = await findSession(db, params.session_id);
        const frame = await frameAt(db, session.id, query.t, query.mode);
        return { ...frameOut(frame), delta_ms: frame.timestampMs - query.t };
      },
    )
    .get(
      '/api/inspector/sessions/{session_id}/annotations-at',
      {
        summary: 'The frame nearest t ms and its annotation objects',
        access: 'annotator',
        params: uuidParams('session_id'),
        query: FrameAtQuery,
        statuses: { 404: 'no such session, or no frame there' },
      },
      async ({ params, query }) => {
        const session = await findSession(db, params.session_id);
        const frame = await frameAt(db, session.id, query.t, query.mode);
        const objects = await db.annoObject.findMany({
          where: { frameId: frame.id },
          orderBy: { createdAt: 'asc' },
          include: { class: { select: { name: true } } },
        });
        return {
          frame: { ...frameOut(frame), delta_ms: frame.timestampMs - query.t },
          objects: objects.map(objectOut),
        };
      },
    )
    .get(
      '/api/inspector/sessions/{session_id}/events',
      {
        summary: "The session's event log (ingest, health runs, quarantines, overrides), newest first",
        access: 'annotator',
        params: uuidParams('session_id'),
        query: EventsQuery,
        statuses: { 404: 'no such session' },
      },
      async ({ params, query }) => {
        const session = await findSession(db, params.session_id);
        const entries = await db.auditLog.findMany({
          where: { subjectType: 'session', subjectId: session.id },
          orderBy: { id: 'desc' },
          take: query.limit,
        });
        return {
          items: entries.map((e) => ({
            id: e.id.toString(),
            action: e.action,
            actor_id: e.actorId,
            detail: e.detail,
            request_id: e.requestId,
            created_at: e.createdAt.toISOString(),
          })),
        };
      },
    )
    .get(
      '/api/inspector/layouts',
      { summary: "The caller's saved inspector layouts", access: 'annotator' },
      async ({ principal }) => {
        const layouts = await db.inspectorLayout.findMany({
          where: { userId: principal.userId },
          orderBy: { name: 'asc' },
        });
        return {
          items: layouts.map((l) => ({
            id: l.id,
            name: l.name,
            layout: l.layout,
            created_at: l.createdAt.toISOString(),
          })),
        };
      },
    )
    .post(
      '/api/inspector/layouts',
      {
        summary: 'Save a layout for the caller (names are unique per user)',
        access: 'annotator',
        body: { name: 'LayoutIn', schema: LayoutIn },
        successStatus: 201,
        statuses: { 409: 'the caller has a layout of that name' },
      },
      async ({ body, principal, req }) => {
        try {
          const layout = await db.$transaction(async (tx) => {
            const created = await tx.inspectorLayout.create({
              data: {
                userId: principal.userId,
                name: body.name,
                layout: body.layout as Prisma.InputJsonValue,
              },
            });
            await recordAudit(tx, {
              actorId: principal.userId,
              action: 'inspector.layout.created',
              subjectType: 'inspector_layout',
              subjectId: created.id,
              detail: { name: created.name },
              requestId: String(req.id),
            });
            return created;
          });
          return {
            id: layout.id,
            name: layout.name,
            layout: layout.layout,
            created_at: layout.createdAt.toISOString(),
          };
        } catch (err) {
          if (err instanceof Prisma.PrismaClientKnownRequestError && err.code === 'P2002')
            throw new ConflictError(`you have a layout named ${body.name} already`);
          throw err;
        }
      },
    )
    .delete(
      '/api/inspector/layouts/{layout_id}',
      {
        summary: "Delete one of the caller's layouts",
        access: 'annotator',
        params: uuidParams('layout_id'),
        statuses: { 404: 'no such layout of the caller' },
      },
      async ({ params, principal, req }) => {
        const layoutId = params.layout_id;
        await db.$transaction(async (tx) => {
          // Another user's layout is as absent as a missing one.
          const deleted = await tx.inspectorLayout.deleteMany({
            where: { id: layoutId, userId: principal.userId },
          });
          if (deleted.count === 0) throw new NotFoundError(`no layout ${layoutId}`);
          await recordAudit(tx, {
            actorId: principal.userId,
            action: 'inspector.layout.deleted',
            subjectType: 'inspector_layout',
            subjectId: layoutId,
            requestId: String(req.id),
          });
        });
        return { deleted: layoutId };
      },
    )
    .get(
      '/api/inspector/sessions/{session_id}/mcap-url',
      {
        summary: "A signed, expiring MinIO URL of the session's MCAP recording",
        access: 'reviewer',
        params: uuidParams('session_id'),
        statuses: {
          404: 'no such session, or its recording is gone',
          422: 'the session has no MCAP in object storage',
        },
      },
      async ({ params }) => {
        const session = await findSession(db, params.session_id);
        const rec = await storedRecording(deps, session, ['mcap']);
        return {
          session_id: session.id,
          url: rec.url,
          expires_at: rec.expiresAt,
          object: `${rec.at.bucket}/${rec.at.key}`,
        };
      },
    )
    .get(
      '/api/inspector/sessions/{session_id}/viewer-link',
      {
        summary:
          "A viewer link (inspector.viewer_url, remote-file data source) opening the session's MCAP or bag through a signed URL",
        access: 'reviewer',
        params: uuidParams('session_id'),
        statuses: {
          404: 'no such session, or its recording is gone',
          422: 'the session has no MCAP or bag in object storage',
        },
      },
      async ({ params }) => {
        const session = await findSession(db, params.session_id);
        const rec = await storedRecording(deps, session, ['mcap', 'bag']);
        const link = new URL(deps.config.inspector.viewerUrl);
        link.searchParams.set('ds', 'remote-file');
        link.searchParams.set('ds.url', rec.url);
        return { session_id: session.id, url: link.toString(), expires_at: rec.expiresAt };
      },
    )
    .get(
      '/api/inspector/sessions/{session_id}/cloud',
      {
        summary:
          "The session's LiDAR point cloud; refused by name, as the platform stores no point clouds yet",
        access: 'annotator',
        params: uuidParams('session_id'),
        statuses: { 404: 'no such session', 422: 'the session has no LiDAR point cloud' },
      },
      async ({ params }) => {
        const session = await findSession(db, params.session_id);
        throw new RefusedError(
          `session ${session.id} has no LiDAR point cloud: this platform ingests camera frames only and stores no point clouds`,
        );
      },
    );
}
