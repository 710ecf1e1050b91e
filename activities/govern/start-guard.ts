import { ConflictError } from '../../core/errors';
import type { Db } from '../db';

/** Every kind of work the kill switch stops and keeps from starting (docs/killswitch.md). */
export const GUARDED_WORK = [
  'autolabel',
  'training',
  'export',
  'corpus_run',
  'campaign',
  'flywheel',
  'cloud',
] as const;
export type GuardedWork = (typeof GUARDED_WORK)[number];

/**
 * Refuses a new start of `kind` while the kill switch is engaged. Called first thing on every start
 * path, so nothing is created (no job row, no workflow) that the switch would have to stop again.
 * The refusal is a conflict with the service's state (409), not a fault of the request.
 */
export async function assertWorkMayStart(
  db: Pick<Db, 'governanceState' | 'user'>,
  kind: GuardedWork,
): Promise<void> {
  const state = await db.governanceState.findUnique({ where: { id: 1 } });
  if (!state?.killswitchEngaged) return;
  const who = state.engagedBy
    ? ((await db.user.findUnique({ where: { id: state.engagedBy }, select: { email: true } }))?.email ??
      state.engagedBy)
    : 'an unknown user';
  throw new ConflictError(
    `${kind} may not start: the kill switch is engaged since ${state.engagedAt?.toISOString() ?? 'an unknown time'} ` +
      `by ${who}: ${state.reason ?? 'no reason given'}; POST /api/govern/killswitch/release to resume`,
    {
      killswitch: {
        engaged: true,
        engaged_at: state.engagedAt,
        engaged_by: state.engagedBy,
        reason: state.reason,
      },
    },
  );
}
