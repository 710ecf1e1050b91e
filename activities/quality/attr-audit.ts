import { attrAudit } from '../../core/quality/attr-audit';
import { NotFoundError } from '../../core/errors';
import type { Db } from '../db';

/**
 * The attribute audit of a session (GET /api/quality/attr-audit/{session_id}): every object of the
 * session with its class, track and frame, through core/quality/attr-audit.
 */
export async function sessionAttrAudit(db: Db, sessionId: string) {
  const session = await db.session.findUnique({ where: { id: sessionId }, select: { id: true, name: true } });
  if (!session) throw new NotFoundError(`no session ${sessionId}`);
  const objects = await db.annoObject.findMany({
    where: { frame: { sessionId } },
    select: {
      id: true,
      attrs: true,
      trackId: true,
      class: { select: { name: true } },
      frame: { select: { index: true } },
    },
    orderBy: { id: 'asc' },
  });
  const classes = attrAudit(
    objects.map((o) => ({
      id: o.id,
      class_name: o.class.name,
      track_id: o.trackId,
      frame_index: o.frame.index,
      attrs: o.attrs,
    })),
  );
  return {
    session_id: session.id,
    name: session.name,
    objects: objects.length,
    tracked_objects: objects.filter((o) => o.trackId !== null).length,
    classes,
  };
}
