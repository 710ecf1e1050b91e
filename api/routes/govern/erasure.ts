import { z } from 'zod';
import { recordAudit } from '../../../activities/audit';
import { erasureOut, openErasure, sessionBusy } from '../../../activities/govern/erasure';
import { eraseWorkflowId } from '../../../core/govern/erasure';
import { ConflictError, NotFoundError } from '../../../core/errors';
import { eraseSessionWorkflow } from '../../../workflows/erase-session';
import type { AppDeps } from '../../deps';
import { actorOf } from '../../http/actor';
import { RouteGroup } from '../../http/route-group';
import { startWorkflow } from '../../http/start-workflow';

/** The erase request (the spec does not show its body; docs/erasure.md). */
export const EraseIn = z.strictObject({
  session_id: z.uuid(),
  note: z.string().trim().min(1).max(500).optional().meta({ description: 'why, for the audit log' }),
});

/** Erasure in the `govern` group (docs/erasure.md). */
export function createGovernErasureRoutes(deps: AppDeps): RouteGroup {
  const { db } = deps;
  return new RouteGroup('govern').post(
    '/api/govern/erase',
    {
      summary:
        "Erases a session completely as workflow erase-session-<session_id>: its frames and redacted copies, objects and mask blobs, tracks, PII audits, health rows and upload, every mention of its ids, and the files of the dataset commits that held it (marked as erased); then proves every table and bucket empty. 202, Location: the session's lineage, which shows the erasure and its proof",
      access: 'admin',
      body: { name: 'EraseIn', schema: EraseIn },
      successStatus: 202,
      statuses: {
        404: 'no such session',
        409: 'the session is being erased, ingested or auto-labelled',
        503: 'the workflow service does not answer',
      },
    },
    async ({ body, principal, req, res }) => {
      const actor = actorOf(principal, req);
      const session = await db.session.findUnique({ where: { id: body.session_id } });
      if (!session) throw new NotFoundError(`no session ${body.session_id}`);
      const busy = await sessionBusy(db, session.id);
      if (busy) throw new ConflictError(busy);
      const workflowId = eraseWorkflowId(session.id);
      const erasureId = await openErasure(db, {
        sessionId: session.id,
        sessionName: session.name,
        reason: 'request',
        actorId: actor.userId,
        workflowId,
      });
      let started: Awaited<ReturnType<typeof startWorkflow>>;
      try {
        started = await startWorkflow(deps, res, {
          workflow: eraseSessionWorkflow,
          workflowId,
          args: [{ erasureId }],
          location: `/api/govern/lineage/session:${session.id}`,
          what: `an erasure of session ${session.id}`,
        });
      } catch (err) {
        // Nothing started: the record goes, so a refused erase leaves no trace.
        await db.erasure.delete({ where: { id: erasureId } });
        throw err;
      }
      await recordAudit(db, {
        actorId: actor.userId,
        action: 'session.erasure_requested',
        subjectType: 'session',
        subjectId: session.id,
        detail: { erasure_id: erasureId, note: body.note ?? null },
        requestId: actor.requestId,
      });
      const erasure = await db.erasure.findUniqueOrThrow({ where: { id: erasureId } });
      return { ...erasureOut(erasure), workflow_run_id: started.run_id };
    },
  );
}
