import { GONE_INSTANCE_STATUSES, INSTANCE_TAGS, type Instance } from './contract';

/**
 * The cloud GPU session's rules (docs/cloud.md): its state machine, what it costs, when it must
 * end, and which provider instances and session rows have lost each other. Pure: the caller
 * supplies rows, provider listings and the clock.
 */

export const CLOUD_SESSION_STATES = [
  'connecting',
  'active',
  'disconnected',
  'orphaned',
  'terminated',
  'failed',
] as const;
export type CloudSessionState = (typeof CLOUD_SESSION_STATES)[number];

/** A session is open (it holds, or is getting, an instance) until one of the ending events. */
export const OPEN_STATES = ['connecting', 'active'] as const satisfies readonly CloudSessionState[];
export const isOpen = (state: string): boolean => (OPEN_STATES as readonly string[]).includes(state);

export type CloudSessionEvent =
  /** The provider reports the instance running. */
  | 'instance_running'
  /** The instance failed, vanished or did not boot in time while connecting. */
  | 'boot_failed'
  /** POST /api/cloud/disconnect. */
  | 'disconnect'
  /** The session reached APP_CLOUD__MAX_SESSION_HOURS. */
  | 'expire'
  /** The provider no longer has the instance of an open session (POST /api/cloud/orphans/terminate). */
  | 'instance_lost';

/**
 * Open states move on events; ended states (disconnected, orphaned, failed, and `terminated`: a
 * stray instance the platform found and terminated, recorded as a session of its own) never move.
 */
const TRANSITIONS: Record<CloudSessionState, Partial<Record<CloudSessionEvent, CloudSessionState>>> = {
  connecting: {
    instance_running: 'active',
    boot_failed: 'failed',
    disconnect: 'disconnected',
    expire: 'disconnected',
    instance_lost: 'orphaned',
  },
  active: { disconnect: 'disconnected', expire: 'disconnected', instance_lost: 'orphaned' },
  disconnected: {},
  orphaned: {},
  terminated: {},
  failed: {},
};

export class CloudSessionStateError extends Error {
  override name = 'CloudSessionStateError';
}

export function nextState(from: string, event: CloudSessionEvent): CloudSessionState {
  const to = TRANSITIONS[from as CloudSessionState]?.[event];
  if (!to) throw new CloudSessionStateError(`a cloud session that is ${from} cannot take ${event}`);
  return to;
}

const MS_PER_HOUR = 3_600_000;

/** Whole seconds between two instants (never negative: clocks of two hosts may disagree slightly). */
export const uptimeSeconds = (from: Date, to: Date): number =>
  Math.max(0, Math.floor((to.getTime() - from.getTime()) / 1000));

/**
 * What a session has cost from `from` to `to` at its hourly price, prorated to the millisecond
 * (rounded to a millionth of a dollar): providers bill by the second or finer, and a rounding
 * to cents would show a short session as free.
 */
export function accruedCostUsd(hourlyUsd: number, from: Date, to: Date): number {
  const hours = Math.max(0, to.getTime() - from.getTime()) / MS_PER_HOUR;
  return Math.round(hourlyUsd * hours * 1e6) / 1e6;
}

/** When a session started at `createdAt` must end. */
export const sessionEndsAt = (createdAt: Date, maxSessionHours: number): Date =>
  new Date(createdAt.getTime() + maxSessionHours * MS_PER_HOUR);

/** The caller must acknowledge at least the quoted price: a refusal naming both figures, or null. */
export function priceRefusal(acknowledgedUsd: number, quotedUsd: number, gpu: string): string | null {
  if (acknowledgedUsd >= quotedUsd) return null;
  return `the provider quotes ${quotedUsd} USD per hour for ${gpu}, above the acknowledged ${acknowledgedUsd} USD per hour: acknowledge at least ${quotedUsd} (ack_hourly_usd)`;
}

/** An open session row, as orphan detection sees it. */
export interface OpenSession {
  id: string;
  instanceId: string | null;
  createdAt: Date;
}

export interface OrphanReport<S extends OpenSession> {
  /** Live instances tagged with this installation's owner tag that no open session knows: they bill for nothing. */
  untracked: Instance[];
  /** Open sessions whose instance the provider no longer runs, with its record when the provider still lists it. */
  lost: Array<{ session: S; instance: Instance | null }>;
}

/**
 * Sets provider instances against open session rows. An instance belongs to a session by its
 * `session_id` tag or by the instance id the row recorded (the tag covers an instance created just
 * before its id was written). Sessions younger than `graceSeconds` are left alone: a connect in
 * flight has a row but may not have its instance yet.
 */
export function findOrphans<S extends OpenSession>(input: {
  owner: string;
  instances: Instance[];
  open: S[];
  now: Date;
  graceSeconds: number;
}): OrphanReport<S> {
  const ours = input.instances.filter((i) => i.tags[INSTANCE_TAGS.owner] === input.owner);
  const live = ours.filter((i) => !GONE_INSTANCE_STATUSES.has(i.status));
  const belongs = (i: Instance, s: S) => i.tags[INSTANCE_TAGS.sessionId] === s.id || i.id === s.instanceId;
  const untracked = live.filter((i) => !input.open.some((s) => belongs(i, s)));
  const lost = input.open
    .filter((s) => uptimeSeconds(s.createdAt, input.now) >= input.graceSeconds)
    .filter((s) => !live.some((i) => belongs(i, s)))
    .map((session) => ({ session, instance: ours.find((i) => belongs(i, session)) ?? null }));
  return { untracked, lost };
}
