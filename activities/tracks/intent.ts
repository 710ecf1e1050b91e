import { NotFoundError } from '../../core/errors';
import type { Box } from '../../core/geometry/boxes';
import {
  proposeIntent,
  type Intent,
  type IntentPoint,
  type IntentProposal,
} from '../../core/tracking/intent';
import type { Prisma, Track } from '../../generated/prisma/client';
import type { Actor } from '../annotations/objects';
import { recordAudit } from '../audit';
import type { Db } from '../db';
import { asJsonObject, findTrack, lockTrack } from './events';

/** What `Track.attrs.intent` holds: the value, and who set it when (a person, or the motion rules). */
export interface StoredIntent {
  value: Intent;
  /** `human`, or the rules version of an applied proposal. */
  source: string;
  set_by: string | null;
  set_at: string;
  note?: string;
  evidence?: IntentProposal['evidence'];
}

const attrsOf = (t: Pick<Track, 'attrs'>): Record<string, unknown> => asJsonObject(t.attrs);

export const intentOf = (t: Pick<Track, 'attrs'>): StoredIntent | null =>
  (attrsOf(t).intent as StoredIntent | undefined) ?? null;

const isBox = (b: unknown): b is Box =>
  Array.isArray(b) && b.length === 4 && b.every((x) => typeof x === 'number' && Number.isFinite(x));

/** The stored trajectory's points the rules can read; a malformed point is skipped, not guessed. */
function intentPoints(t: Pick<Track, 'trajectory'>): IntentPoint[] {
  const points = Array.isArray(t.trajectory) ? t.trajectory : [];
  return points.flatMap((p) => {
    if (p === null || typeof p !== 'object' || Array.isArray(p)) return [];
    const { frame_index, ts_ms, box } = p as Record<string, unknown>;
    return typeof frame_index === 'number' && typeof ts_ms === 'number' && isBox(box)
      ? [{ frame_index, ts_ms, box }]
      : [];
  });
}

/**
 * Writes the intent into the track's attrs under the track row's lock, so a concurrent set cannot
 * be lost to a read-modify-write of the other attrs. `keepHuman`: a person's intent stays.
 */
async function writeIntent(
  db: Db,
  trackId: string,
  intent: StoredIntent,
  actor: Actor,
  keepHuman: boolean,
): Promise<{ written: boolean; previous: StoredIntent | null; current: StoredIntent | null }> {
  return db.$transaction(async (tx) => {
    const track = await lockTrack(tx, trackId, 'update');
    const previous = intentOf(track);
    if (keepHuman && previous?.source === 'human') return { written: false, previous, current: previous };
    await tx.track.update({
      where: { id: trackId },
      data: { attrs: { ...attrsOf(track), intent } as unknown as Prisma.InputJsonObject },
    });
    await recordAudit(tx, {
      actorId: actor.userId,
      action: 'track.intent_set',
      subjectType: 'track',
      subjectId: trackId,
      detail: { value: intent.value, source: intent.source, previous } as Prisma.InputJsonObject,
      requestId: actor.requestId,
    });
    return { written: true, previous, current: intent };
  });
}

/** A person sets the track's intent. */
export async function setTrackIntent(
  db: Db,
  trackId: string,
  input: { intent: Intent; note?: string | undefined },
  actor: Actor,
) {
  const intent: StoredIntent = {
    value: input.intent,
    source: 'human',
    set_by: actor.userId,
    set_at: new Date().toISOString(),
    ...(input.note ? { note: input.note } : {}),
  };
  const { previous } = await writeIntent(db, trackId, intent, actor, false);
  return { track_id: trackId, intent, previous };
}

/**
 * Proposes the track's intent from its stored trajectory; stored only when asked, and never over
 * an intent a person set (the answer says so).
 */
export async function proposeTrackIntent(db: Db, trackId: string, apply: boolean, actor: Actor) {
  const track = await findTrack(db, trackId);
  const proposal = proposeIntent(intentPoints(track));
  const answer = { track_id: trackId, proposal };
  if (!apply)
    return { ...answer, applied: false, not_applied: 'not asked to apply', intent: intentOf(track) };
  if (proposal.intent === 'unknown')
    return {
      ...answer,
      applied: false,
      not_applied: 'nothing to apply: the proposal is unknown',
      intent: intentOf(track),
    };
  const outcome = await writeIntent(
    db,
    trackId,
    {
      value: proposal.intent,
      source: proposal.rules_version,
      set_by: actor.userId,
      set_at: new Date().toISOString(),
      evidence: proposal.evidence,
    },
    actor,
    true,
  );
  return {
    ...answer,
    applied: outcome.written,
    not_applied: outcome.written ? null : 'a person set the intent; a proposal does not replace it',
    intent: outcome.current,
  };
}

/** Proposals for every track of a session, stored nowhere. */
export async function proposeSessionIntents(db: Db, sessionId: string) {
  const session = await db.session.findUnique({ where: { id: sessionId }, select: { id: true } });
  if (!session) throw new NotFoundError(`no session ${sessionId}`);
  const tracks = await db.track.findMany({
    where: { sessionId },
    orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
  });
  const items = tracks.map((t) => ({
    track_id: t.id,
    class_name: (attrsOf(t).class_name as string | undefined) ?? null,
    proposal: proposeIntent(intentPoints(t)),
    intent: intentOf(t),
  }));
  const counts: Record<string, number> = {};
  for (const item of items) counts[item.proposal.intent] = (counts[item.proposal.intent] ?? 0) + 1;
  return { session_id: sessionId, tracks: items.length, counts, items };
}
