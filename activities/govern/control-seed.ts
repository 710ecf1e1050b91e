import { Context } from '@temporalio/activity';
import { CONTROL_RATE, isControlSample } from '../../core/control';
import { MACHINE_SOURCE_SPELLINGS } from '../../core/objects/sources';
import { recordAudit } from '../audit';
import type { ActivityDeps } from '../deps';
import { CONTROL_CANDIDATE_SELECT, controlSampleRow } from './control-rows';

export interface ControlSeedInput {
  seed: number;
  /** Only this session's auto-accepts; null: the whole corpus. */
  sessionId: string | null;
  /** Who asked (the audit entry's actor) and the request that did. */
  actorId: string | null;
  requestId: string | null;
  /** Auto-accepts read per page (one transaction and one heartbeat each). */
  pageSize?: number;
}

export interface ControlSeedTally {
  seed: number;
  session_id: string | null;
  rate: number;
  considered: number;
  selected: number;
  created: number;
  already_controlled: number;
}

/** What the heartbeat carries: the keyset cursor (last object id whose page is committed) and the counts so far. */
export interface ControlSeedHeartbeat {
  after: string | null;
  considered: number;
  selected: number;
  created: number;
}

export const CONTROL_SEED_PAGE = 500;

/** The control seeding's activity (cpu queue), started by controlSeedWorkflow. */
export function createControlSeedActivities({ db, events }: Pick<ActivityDeps, 'db' | 'events'>) {
  return {
    /**
     * Mirrors the seeded draw of the machine-source auto-accepts to review: pages through them in
     * id order (keyset cursor), writes each page's picks in one transaction (an object controlled
     * already is skipped, so nothing is controlled twice) and heartbeats the cursor after it, so a
     * retried attempt resumes after the last page it knows committed. Progress and the outcome go
     * to the `jobs` event stream; the outcome is audited as `control.seeded`.
     */
    async seedControlSample(input: ControlSeedInput): Promise<ControlSeedTally> {
      const ctx = Context.current();
      const workflowId = ctx.info.workflowExecution?.workflowId ?? null;
      const pageSize = input.pageSize ?? CONTROL_SEED_PAGE;
      const beat = ctx.info.heartbeatDetails as ControlSeedHeartbeat | undefined;
      const state: ControlSeedHeartbeat = beat ?? { after: null, considered: 0, selected: 0, created: 0 };
      // A retried attempt may redo pages an earlier attempt committed after its last heartbeat got
      // through: there, `created` counts this run's controls by their time (since the activity was
      // first scheduled), not by what this attempt's insert added.
      const retried = ctx.info.attempt > 1;
      const runStart = new Date(ctx.info.scheduledTimestampMs);
      const base = {
        workflow_id: workflowId,
        seed: input.seed,
        session_id: input.sessionId,
        rate: CONTROL_RATE,
      };
      const publish = async (type: string, data: Record<string, unknown>) => {
        try {
          await events.publish('jobs', type, { ...base, ...data });
        } catch (err) {
          ctx.log.warn(`could not publish ${type}`, { error: String(err) });
        }
      };
      ctx.heartbeat({ ...state });
      await publish('control.seed.started', { resumed_after: state.after, ...counts(state) });
      for (;;) {
        const page = await db.annoObject.findMany({
          where: {
            state: 'auto_accept',
            source: { in: [...MACHINE_SOURCE_SPELLINGS] },
            ...(input.sessionId ? { frame: { sessionId: input.sessionId } } : {}),
            ...(state.after ? { id: { gt: state.after } } : {}),
          },
          orderBy: { id: 'asc' },
          take: pageSize,
          select: CONTROL_CANDIDATE_SELECT,
        });
        if (page.length === 0) break;
        const picked = page.filter((o) => isControlSample(input.seed, o.idemKey ?? o.id));
        const created = picked.length
          ? await db.$transaction(async (tx) => {
              const { count } = await tx.controlSample.createMany({
                data: picked.map((o) => controlSampleRow(o, input.seed)),
                skipDuplicates: true,
              });
              if (!retried) return count;
              return tx.controlSample.count({
                where: { objectId: { in: picked.map((o) => o.id) }, createdAt: { gte: runStart } },
              });
            })
          : 0;
        state.after = page[page.length - 1]!.id;
        state.considered += page.length;
        state.selected += picked.length;
        state.created += created;
        ctx.heartbeat({ ...state });
        await publish('control.seed.progress', { after: state.after, ...counts(state) });
        if (page.length < pageSize) break;
      }
      const tally: ControlSeedTally = {
        seed: input.seed,
        session_id: input.sessionId,
        rate: CONTROL_RATE,
        ...counts(state),
      };
      await recordAudit(db, {
        actorId: input.actorId,
        action: 'control.seeded',
        subjectType: 'control_sample',
        detail: {
          seed: input.seed,
          session_id: input.sessionId,
          considered: tally.considered,
          selected: tally.selected,
          created: tally.created,
          workflow_id: workflowId,
        },
        requestId: input.requestId,
      });
      await publish('control.seed.completed', counts(state));
      return tally;
    },

    /** A seeding that gave up: audited and announced, so it does not fail only in Temporal. */
    async failControlSeed(input: ControlSeedInput & { error: string }): Promise<void> {
      const workflowId = Context.current().info.workflowExecution?.workflowId ?? null;
      const detail = {
        seed: input.seed,
        session_id: input.sessionId,
        error: input.error,
        workflow_id: workflowId,
      };
      await recordAudit(db, {
        actorId: input.actorId,
        action: 'control.seed.failed',
        subjectType: 'control_sample',
        detail,
        requestId: input.requestId,
      });
      await events.publish('jobs', 'control.seed.failed', { ...detail, rate: CONTROL_RATE });
    },
  };
}

const counts = (s: ControlSeedHeartbeat) => ({
  considered: s.considered,
  selected: s.selected,
  created: s.created,
  already_controlled: s.selected - s.created,
});
