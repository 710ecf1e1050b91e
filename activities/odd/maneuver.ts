import { UNKNOWN, type Maneuver } from '../../core/odd/attributes';
import { NotFoundError, RefusedError } from '../../core/errors';
import type { Actor } from '../annotations/objects';
import { recordAudit } from '../audit';
import type { Db } from '../db';

/**
 * Manoeuvre tags (docs/odd-coverage.md): a reviewer says what the ego vehicle does over a frame
 * range, and each frame's `context.maneuver` is set to it. Nothing derives manoeuvres from ego
 * motion: no IMU or GNSS stream is recorded yet.
 */

/** Frames one tag may cover: a tag is a manoeuvre of seconds to minutes, not a whole corpus. */
export const MANEUVER_MAX_FRAMES = 10_000;

export interface ManeuverTag {
  sessionId: string;
  maneuver: Maneuver;
  /** Inclusive bounds, on the frame index or on the source timestamp (ms). */
  range: { by: 'index' | 'timestamp_ms'; from: number; to: number };
}

export async function tagManeuver(db: Db, tag: ManeuverTag, actor: Actor) {
  const session = await db.session.findUnique({ where: { id: tag.sessionId }, select: { id: true } });
  if (!session) throw new NotFoundError(`no session ${tag.sessionId}`);
  const column = tag.range.by === 'index' ? 'index' : 'timestamp_ms';
  return db.$transaction(async (tx) => {
    // Locked, so a concurrent tag of an overlapping range lands whole after this one.
    const frames = await tx.$queryRawUnsafe<Array<{ id: string; index: number; previous: string | null }>>(
      `SELECT id::text AS id, index, context->>'maneuver' AS previous FROM frames
        WHERE session_id = $1::uuid AND ${column} BETWEEN $2 AND $3
        ORDER BY index LIMIT ${MANEUVER_MAX_FRAMES + 1} FOR UPDATE`,
      tag.sessionId,
      tag.range.from,
      tag.range.to,
    );
    if (!frames.length)
      throw new RefusedError(
        `session ${tag.sessionId} has no frame with ${column} in [${tag.range.from}, ${tag.range.to}]`,
      );
    if (frames.length > MANEUVER_MAX_FRAMES)
      throw new RefusedError(
        `the range holds more than ${MANEUVER_MAX_FRAMES} frames; tag a manoeuvre over a shorter range`,
        { max_frames: MANEUVER_MAX_FRAMES },
      );
    await tx.$executeRawUnsafe(
      `UPDATE frames SET context = jsonb_set(context, '{maneuver}', to_jsonb($2::text)) WHERE id = ANY($1::uuid[])`,
      frames.map((f) => f.id),
      tag.maneuver,
    );
    const previous: Record<string, number> = {};
    for (const f of frames) previous[f.previous ?? UNKNOWN] = (previous[f.previous ?? UNKNOWN] ?? 0) + 1;
    const result = {
      session_id: tag.sessionId,
      maneuver: tag.maneuver,
      range: tag.range,
      frames: frames.length,
      first_index: frames[0]!.index,
      last_index: frames.at(-1)!.index,
      previous,
    };
    await recordAudit(tx, {
      actorId: actor.userId,
      action: 'odd.maneuver.tagged',
      subjectType: 'session',
      subjectId: tag.sessionId,
      requestId: actor.requestId,
      detail: result,
    });
    return result;
  });
}
