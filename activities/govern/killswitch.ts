import { ConflictError } from '../../core/errors';
import type { JobKind } from '../../core/jobs/kinds';
import type { Prisma } from '../../generated/prisma/client';
import { recordAudit } from '../audit';
import type { Db } from '../db';
import { findJob } from '../jobs/list';

/**
 * The kill switch's state (docs/killswitch.md): one row of governance_state. Engaging it records
 * who, when and why; the routes then stop the work in flight and every start path refuses
 * (activities/govern/start-guard.ts) until it is released.
 */

/**
 * The job kinds the kill switch stops: GPU-slot and data-moving work, and the campaigns and flywheel
 * runs that start it (a cancelled parent's running export or training is cancelled with it).
 */
export const KILLSWITCH_JOB_KINDS = [
  'autolabel',
  'training',
  'export',
  'corpus',
  'campaign',
  'flywheel',
] as const satisfies readonly JobKind[];

/** What the switch did to one job in flight. */
export interface StoppedJob {
  kind: JobKind;
  job_id: string;
  workflow_id: string | null;
  /** `stopping`: its cancel was started; `already_stopping`: one was under way; `not_stoppable`: why not. */
  outcome: 'stopping' | 'already_stopping' | 'not_stoppable';
  cancel_workflow_id: string | null;
  reason?: string;
}

type State = Prisma.GovernanceStateGetPayload<object>;

const stateOut = (s: State | null) => ({
  engaged: s?.killswitchEngaged ?? false,
  reason: s?.reason ?? null,
  engaged_by: s?.engagedBy ?? null,
  engaged_at: s?.engagedAt?.toISOString() ?? null,
  released_by: s?.releasedBy ?? null,
  released_at: s?.releasedAt?.toISOString() ?? null,
});

/**
 * Engages the switch (audited). Engaging an engaged switch keeps when and by whom it was first
 * engaged and takes the new reason: the routes stop whatever has started since, again.
 */
export async function engageKillSwitch(
  db: Db,
  input: { reason: string; actorId: string | null; requestId: string },
): Promise<void> {
  await db.$transaction(async (tx) => {
    const now = new Date();
    const before = await tx.governanceState.findUnique({ where: { id: 1 } });
    const again = before?.killswitchEngaged ?? false;
    await tx.governanceState.upsert({
      where: { id: 1 },
      create: {
        id: 1,
        killswitchEngaged: true,
        reason: input.reason,
        engagedBy: input.actorId,
        engagedAt: now,
      },
      update: {
        killswitchEngaged: true,
        reason: input.reason,
        ...(again ? {} : { engagedBy: input.actorId, engagedAt: now, releasedBy: null, releasedAt: null }),
      },
    });
    await recordAudit(tx, {
      actorId: input.actorId,
      action: 'killswitch.engaged',
      subjectType: 'governance_state',
      subjectId: '1',
      detail: { reason: input.reason, again },
      requestId: input.requestId,
    });
  });
}

/** Releases an engaged switch (audited); a switch that is not engaged is a conflict. */
export async function releaseKillSwitch(
  db: Db,
  input: { actorId: string | null; requestId: string },
): Promise<void> {
  await db.$transaction(async (tx) => {
    const [locked] = await tx.$queryRaw<Array<{ engaged: boolean }>>`
      SELECT killswitch_engaged AS engaged FROM governance_state WHERE id = 1 FOR UPDATE`;
    if (!locked?.engaged) throw new ConflictError('the kill switch is not engaged');
    await tx.governanceState.update({
      where: { id: 1 },
      data: { killswitchEngaged: false, releasedBy: input.actorId, releasedAt: new Date() },
    });
    await recordAudit(tx, {
      actorId: input.actorId,
      action: 'killswitch.released',
      subjectType: 'governance_state',
      subjectId: '1',
      detail: {},
      requestId: input.requestId,
    });
  });
}

/** Records what the last engage stopped. */
export async function recordStopped(db: Db, stopped: readonly StoppedJob[]): Promise<void> {
  await db.governanceState.update({
    where: { id: 1 },
    data: { stopped: stopped as unknown as Prisma.InputJsonValue },
  });
}

/** The switch and what its last engage stopped, each job with the state it is in now. */
export async function governanceStateView(db: Db) {
  const s = await db.governanceState.findUnique({ where: { id: 1 } });
  const stopped = (s?.stopped ?? []) as unknown as StoppedJob[];
  return {
    killswitch: stateOut(s),
    stopped: await Promise.all(
      stopped.map(async (j) => {
        const now = await findJob(db, j.kind, j.job_id).catch(() => null);
        return { ...j, state: now?.state ?? null, raw_state: now?.raw_state ?? null };
      }),
    ),
  };
}
