import { NotFoundError } from '../../core/errors';
import type { Db } from '../db';

interface FilmRow {
  id: string;
  index: number;
  timestamp_ms: number;
  width: number;
  height: number;
  redacted: boolean;
}

/**
 * The frames around one frame of its session, in index order: up to `before` earlier and `after`
 * later frames and the frame itself. Both sides are keyset reads on (session_id, index), the
 * frames' unique index, so a long session costs no more than a short one; one extra row per side
 * says whether the strip could scroll further.
 */
export async function frameFilmstrip(db: Db, frameId: string, before: number, after: number) {
  const frame = await db.frame.findUnique({
    where: { id: frameId },
    select: { id: true, sessionId: true, index: true },
  });
  if (!frame) throw new NotFoundError(`no frame ${frameId}`);

  const rows = await db.$queryRaw<FilmRow[]>`
    (SELECT id::text, index, timestamp_ms, width, height, redacted_uri IS NOT NULL AS redacted
       FROM frames WHERE session_id = ${frame.sessionId}::uuid AND index < ${frame.index}::int
      ORDER BY index DESC LIMIT ${before + 1}::int)
    UNION ALL
    (SELECT id::text, index, timestamp_ms, width, height, redacted_uri IS NOT NULL AS redacted
       FROM frames WHERE session_id = ${frame.sessionId}::uuid AND index >= ${frame.index}::int
      ORDER BY index ASC LIMIT ${after + 2}::int)`;
  const earlier = rows.filter((r) => r.index < frame.index);
  const later = rows.filter((r) => r.index > frame.index);
  const current = rows.filter((r) => r.index === frame.index);
  const window = [...earlier.slice(0, before).reverse(), ...current, ...later.slice(0, after)];

  const ids = window.map((r) => r.id);
  const counts = await db.$queryRaw<Array<{ frame_id: string; state: string; n: number }>>`
    SELECT frame_id::text, state, count(*)::int AS n
      FROM objects WHERE frame_id = ANY(${ids}::uuid[])
     GROUP BY frame_id, state
     ORDER BY frame_id, state`;
  const byFrame = new Map<string, { total: number; by_state: Record<string, number> }>();
  for (const c of counts) {
    const entry = byFrame.get(c.frame_id) ?? { total: 0, by_state: {} };
    entry.total += c.n;
    entry.by_state[c.state] = c.n;
    byFrame.set(c.frame_id, entry);
  }

  return {
    frame_id: frame.id,
    session_id: frame.sessionId,
    index: frame.index,
    before,
    after,
    more_before: earlier.length > before,
    more_after: later.length > after,
    frames: window.map((r) => ({
      id: r.id,
      index: r.index,
      timestamp_ms: r.timestamp_ms,
      width: r.width,
      height: r.height,
      redacted: r.redacted,
      image_url: `/api/frames/${r.id}/image`,
      objects: byFrame.get(r.id) ?? { total: 0, by_state: {} },
      current: r.id === frame.id,
    })),
  };
}
