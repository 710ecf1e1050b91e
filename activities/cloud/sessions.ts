import { z } from 'zod';
import {
  accruedCostUsd,
  findOrphans,
  GONE_INSTANCE_STATUSES,
  INSTANCE_TAGS,
  isOpen,
  nextState,
  OPEN_STATES,
  priceRefusal,
  sessionEndsAt,
  uptimeSeconds,
  type CloudSessionEvent,
  type Instance,
} from '../../core/cloud';
import type { AppConfig } from '../../core/config';
import { ConflictError, NotFoundError, RefusedError } from '../../core/errors';
import type { CloudSession, Prisma } from '../../generated/prisma/client';
import { recordAudit } from '../audit';
import type { Db } from '../db';
import { recordActualSpend } from '../govern/spend';
import { cloudConfigured, cloudProvider, missingCloudSettings } from './provider';

/**
 * Cloud GPU sessions (docs/cloud.md): connect (quote, acknowledged price, one instance tagged with
 * the session's id), activation once the provider runs it, the end of a session (disconnect, the
 * maximum hours, a failed boot), the status, and orphans. Shared by the cloud routes and the
 * session workflow's activities; the rules themselves are core/cloud's.
 */
export interface CloudDeps {
  db: Db;
  config: AppConfig;
}

/** Who asked, for the audit trail; null for the session workflow's own decisions. */
export interface CloudActor {
  userId: string | null;
  requestId: string | null;
}

/** The session workflow's business id. */
export const cloudSessionWorkflowId = (sessionId: string): string => `cloud-session-${sessionId}`;

/** What a session row keeps beside its columns (CloudSession.detail). */
const SessionDetail = z.object({
  /** connect: started by POST /api/cloud/connect; orphan: a stray instance recorded as it was terminated. */
  origin: z.enum(['connect', 'orphan']).default('connect'),
  gpu: z.string().nullish(),
  quoted_hourly_usd: z.number().nullish(),
  acknowledged_hourly_usd: z.number().nullish(),
  ends_at: z.string().nullish(),
  workflow_id: z.string().nullish(),
  instance_created_at: z.string().nullish(),
  active_at: z.string().nullish(),
  end_reason: z.string().nullish(),
  cost_usd: z.number().nullish(),
  tags: z.record(z.string(), z.string()).nullish(),
});
type SessionDetail = z.infer<typeof SessionDetail>;
const detailOf = (row: CloudSession): SessionDetail => SessionDetail.parse(row.detail);

/** A session as the API shows it; an open session's uptime and cost run to `now`. */
export function sessionOut(row: CloudSession, now = new Date()) {
  const detail = detailOf(row);
  const until = row.endedAt ?? now;
  return {
    id: row.id,
    provider: row.provider,
    status: row.status,
    origin: detail.origin,
    instance_id: row.instanceId,
    gpu: detail.gpu ?? null,
    hourly_usd: row.hourlyUsd,
    acknowledged_hourly_usd: detail.acknowledged_hourly_usd ?? null,
    created_at: row.createdAt.toISOString(),
    active_at: detail.active_at ?? null,
    ends_at: detail.ends_at ?? null,
    ended_at: row.endedAt?.toISOString() ?? null,
    end_reason: detail.end_reason ?? null,
    uptime_seconds: uptimeSeconds(row.createdAt, until),
    cost_usd: detail.cost_usd ?? accruedCostUsd(row.hourlyUsd, row.createdAt, until),
    workflow_id: detail.workflow_id ?? null,
  };
}

const openWhere = { status: { in: [...OPEN_STATES] } };

export const findOpenSession = (db: Db | Prisma.TransactionClient): Promise<CloudSession | null> =>
  db.cloudSession.findFirst({ where: openWhere, orderBy: { createdAt: 'desc' } });

/** One session at a time: a second connect while one is open is a conflict naming it. */
async function refuseIfOpen(db: Db | Prisma.TransactionClient): Promise<void> {
  const open = await findOpenSession(db);
  if (open)
    throw new ConflictError(
      `cloud session ${open.id} is already ${open.status} (since ${open.createdAt.toISOString()}, instance ${open.instanceId ?? 'not yet started'}): disconnect it first (POST /api/cloud/disconnect)`,
      { session_id: open.id, session_status: open.status },
    );
}

/**
 * Ends an open row on `event` without asking the provider (the caller has terminated the instance,
 * or there never was one). Only the first ending counts: a row already ended stays as it is.
 */
async function recordEnd(
  db: Db,
  row: CloudSession,
  event: CloudSessionEvent,
  reason: string,
  endedAt = new Date(),
): Promise<{ session: CloudSession; ended: boolean }> {
  const detail = {
    ...detailOf(row),
    end_reason: reason,
    cost_usd: accruedCostUsd(row.hourlyUsd, row.createdAt, endedAt),
  };
  const { count } = await db.cloudSession.updateMany({
    where: { id: row.id, ...openWhere },
    data: { status: nextState(row.status, event), endedAt, detail },
  });
  if (count > 0) await recordActualSpend(db, 'cloud', row.id);
  return { session: await db.cloudSession.findUniqueOrThrow({ where: { id: row.id } }), ended: count > 0 };
}

/**
 * Quotes the price, refuses an acknowledgement under it, records the session (`connecting`) and
 * starts its instance tagged with the session's id. The caller starts the session workflow, which
 * makes it `active` once the provider runs the instance.
 */
export async function connectCloudSession(
  deps: CloudDeps,
  input: { ackHourlyUsd: number; actor: CloudActor },
): Promise<{ session: CloudSession; endsAt: string }> {
  const { db, config } = deps;
  const provider = cloudProvider(config.cloud);
  await refuseIfOpen(db);
  const quote = await provider.quote();
  const refusal = priceRefusal(input.ackHourlyUsd, quote.hourly_usd, quote.gpu);
  if (refusal)
    throw new RefusedError(refusal, {
      quoted_hourly_usd: quote.hourly_usd,
      acknowledged_hourly_usd: input.ackHourlyUsd,
    });
  const createdAt = new Date();
  const endsAt = sessionEndsAt(createdAt, config.cloud.maxSessionHours).toISOString();
  const row = await db.$transaction(async (tx) => {
    await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtext('cloud-session'))`;
    await refuseIfOpen(tx);
    return tx.cloudSession.create({
      data: {
        provider: provider.name,
        status: 'connecting',
        hourlyUsd: quote.hourly_usd,
        createdAt,
        createdBy: input.actor.userId,
        detail: {
          origin: 'connect',
          gpu: quote.gpu,
          quoted_hourly_usd: quote.hourly_usd,
          acknowledged_hourly_usd: input.ackHourlyUsd,
          ends_at: endsAt,
        } satisfies SessionDetail,
      },
    });
  });
  let instance: Instance;
  try {
    instance = await provider.createInstance(
      {
        tags: { [INSTANCE_TAGS.owner]: config.cloud.instanceTag, [INSTANCE_TAGS.sessionId]: row.id },
        max_hours: config.cloud.maxSessionHours,
      },
      row.id,
    );
  } catch (err) {
    await recordEnd(
      db,
      row,
      'boot_failed',
      `the provider did not start an instance: ${(err as Error).message}`,
    );
    throw err;
  }
  const started = await db.cloudSession.update({
    where: { id: row.id },
    data: {
      instanceId: instance.id,
      // Cost accrues at what the instance bills, which the provider may state more exactly than its quote.
      hourlyUsd: instance.hourly_usd,
      detail: {
        ...detailOf(row),
        gpu: instance.gpu ?? quote.gpu,
        instance_created_at: instance.created_at,
        workflow_id: cloudSessionWorkflowId(row.id),
      },
    },
  });
  const overPrice = priceRefusal(input.ackHourlyUsd, instance.hourly_usd, instance.gpu ?? quote.gpu);
  if (overPrice) {
    await endCloudSession(
      deps,
      row.id,
      'boot_failed',
      `the instance bills over the acknowledged price: ${overPrice}`,
    );
    throw new RefusedError(overPrice, {
      quoted_hourly_usd: instance.hourly_usd,
      acknowledged_hourly_usd: input.ackHourlyUsd,
    });
  }
  await recordAudit(db, {
    actorId: input.actor.userId,
    action: 'cloud.session.connected',
    subjectType: 'cloud_session',
    subjectId: row.id,
    detail: { provider: provider.name, instance_id: instance.id, hourly_usd: instance.hourly_usd },
    requestId: input.actor.requestId,
  });
  return { session: started, endsAt };
}

/**
 * Terminates an open session's instance at the provider and ends the row on `event`, with its cost
 * at its price up to now. A session already ended is answered as it is (`ended: false`).
 */
export async function endCloudSession(
  deps: CloudDeps,
  sessionId: string,
  event: CloudSessionEvent,
  reason: string,
): Promise<{ session: CloudSession; ended: boolean }> {
  const { db, config } = deps;
  const row = await db.cloudSession.findUnique({ where: { id: sessionId } });
  if (!row) throw new NotFoundError(`no cloud session ${sessionId}`);
  if (!isOpen(row.status)) return { session: row, ended: false };
  // An event this state cannot take is refused before anything is terminated.
  nextState(row.status, event);
  const provider = cloudProvider(config.cloud);
  // A connect that died between starting the instance and recording its id left the tag behind.
  const instanceIds = row.instanceId
    ? [row.instanceId]
    : (await provider.listInstances())
        .filter((i) => i.tags[INSTANCE_TAGS.sessionId] === row.id && !GONE_INSTANCE_STATUSES.has(i.status))
        .map((i) => i.id);
  for (const id of instanceIds) await provider.terminateInstance(id);
  return recordEnd(db, row, event, reason);
}

/** POST /api/cloud/disconnect: ends the open session, or 409 when none is. */
export async function disconnectCloudSession(deps: CloudDeps, actor: CloudActor) {
  const open = await findOpenSession(deps.db);
  if (!open) throw new ConflictError('no cloud session is connected (GET /api/cloud/status)');
  const { session } = await endCloudSession(deps, open.id, 'disconnect', 'disconnected by the caller');
  await recordAudit(deps.db, {
    actorId: actor.userId,
    action: 'cloud.session.disconnected',
    subjectType: 'cloud_session',
    subjectId: session.id,
    detail: { status: session.status, cost_usd: detailOf(session).cost_usd ?? null },
    requestId: actor.requestId,
  });
  const parked = await deps.db.trainingJob.findMany({
    where: { status: 'queued-cloud' },
    select: { id: true },
    orderBy: { createdAt: 'asc' },
  });
  return {
    session: sessionOut(session),
    // They stay parked and fail by name when their workflow reaches the ended session.
    queued_cloud_job_ids: parked.map((j) => j.id),
  };
}

/**
 * The session workflow's check while connecting: `active` once the provider runs the instance,
 * `failed` (with the instance terminated) when it failed or vanished, else still `connecting`.
 * A session ended meanwhile answers its own status.
 */
export async function activateCloudSession(deps: CloudDeps, sessionId: string): Promise<string> {
  const { db, config } = deps;
  const row = await db.cloudSession.findUnique({ where: { id: sessionId } });
  if (!row) throw new NotFoundError(`no cloud session ${sessionId}`);
  if (row.status !== 'connecting') return row.status;
  const instance = row.instanceId ? await cloudProvider(config.cloud).getInstance(row.instanceId) : null;
  if (!instance || GONE_INSTANCE_STATUSES.has(instance.status)) {
    const why = !row.instanceId
      ? 'no instance was recorded for it'
      : instance
        ? `the provider reports its instance ${instance.id} ${instance.status}`
        : `the provider does not know its instance ${row.instanceId}`;
    return (await endCloudSession(deps, sessionId, 'boot_failed', why)).session.status;
  }
  if (instance.status !== 'running') return row.status;
  await db.cloudSession.updateMany({
    where: { id: sessionId, status: 'connecting' },
    data: {
      status: nextState(row.status, 'instance_running'),
      detail: { ...detailOf(row), active_at: new Date().toISOString() },
    },
  });
  return (await db.cloudSession.findUniqueOrThrow({ where: { id: sessionId } })).status;
}

/** GET /api/cloud/status: the provider, the open session with its uptime and cost, the last one ended, the parked jobs. */
export async function cloudStatus(deps: CloudDeps) {
  const { db, config } = deps;
  const now = new Date();
  const [open, last, parked, parkedCount] = await Promise.all([
    findOpenSession(db),
    db.cloudSession.findFirst({
      where: { status: { notIn: [...OPEN_STATES] }, endedAt: { not: null } },
      orderBy: { endedAt: 'desc' },
    }),
    db.trainingJob.findMany({ where: { status: 'queued-cloud' }, orderBy: { createdAt: 'asc' }, take: 200 }),
    db.trainingJob.count({ where: { status: 'queued-cloud' } }),
  ]);
  return {
    provider: config.cloud.provider || null,
    configured: cloudConfigured(config.cloud),
    missing_settings: missingCloudSettings(config.cloud),
    max_session_hours: config.cloud.maxSessionHours,
    session: open ? sessionOut(open, now) : null,
    last_session: last ? sessionOut(last, now) : null,
    queued_cloud: {
      count: parkedCount,
      jobs: parked.map((j) => ({
        job_id: j.id,
        name: j.name,
        trainer: j.trainer,
        workflow_id: j.workflowId,
        queued_at: j.createdAt.toISOString(),
      })),
    },
  };
}

const instanceOut = (i: Instance) => ({
  instance_id: i.id,
  status: i.status,
  gpu: i.gpu ?? null,
  hourly_usd: i.hourly_usd,
  tags: i.tags,
  created_at: i.created_at,
  ended_at: i.ended_at ?? null,
});

async function scanOrphans(deps: CloudDeps) {
  const { db, config } = deps;
  const provider = cloudProvider(config.cloud);
  const [instances, open] = await Promise.all([
    provider.listInstances(),
    db.cloudSession.findMany({ where: openWhere, orderBy: { createdAt: 'asc' } }),
  ]);
  const report = findOrphans({
    owner: config.cloud.instanceTag,
    instances,
    open,
    now: new Date(),
    graceSeconds: config.cloud.requestTimeoutSeconds,
  });
  return { provider, instances, ...report };
}

/** GET /api/cloud/orphans: our instances no open session knows, and open sessions whose instance is gone. */
export async function listOrphans(deps: CloudDeps) {
  const { provider, instances, untracked, lost } = await scanOrphans(deps);
  const now = new Date();
  return {
    provider: provider.name,
    owner_tag: deps.config.cloud.instanceTag,
    instances_listed: instances.length,
    untracked_instances: untracked.map((i) => ({
      ...instanceOut(i),
      cost_usd: accruedCostUsd(i.hourly_usd, new Date(i.created_at), now),
    })),
    lost_sessions: lost.map((l) => ({
      session: sessionOut(l.session, now),
      instance: l.instance ? instanceOut(l.instance) : null,
    })),
  };
}

/**
 * POST /api/cloud/orphans/terminate: terminates every untracked instance, recording each as a
 * `terminated` session of its own (what it cost from its creation), and ends every lost session as
 * `orphaned` (at the instance's end when the provider still lists it). Idempotent: a second call
 * finds nothing left to do.
 */
export async function terminateOrphans(deps: CloudDeps, actor: CloudActor) {
  const { db } = deps;
  const { provider, untracked, lost } = await scanOrphans(deps);
  const terminated = [];
  for (const instance of untracked) {
    const outcome = await provider.terminateInstance(instance.id);
    const endedAt = new Date();
    const row = await db.$transaction(async (tx) => {
      await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtext(${`cloud-orphan:${instance.id}`}))`;
      const known = await tx.cloudSession.findFirst({
        where: { instanceId: instance.id, status: 'terminated' },
      });
      if (known) return known;
      const createdAt = new Date(instance.created_at);
      return tx.cloudSession.create({
        data: {
          provider: provider.name,
          status: 'terminated',
          hourlyUsd: instance.hourly_usd,
          instanceId: instance.id,
          createdAt,
          endedAt,
          createdBy: actor.userId,
          detail: {
            origin: 'orphan',
            gpu: instance.gpu ?? null,
            tags: instance.tags,
            instance_created_at: instance.created_at,
            end_reason: `terminated as an orphan: no open session knew instance ${instance.id}`,
            cost_usd: accruedCostUsd(instance.hourly_usd, createdAt, endedAt),
          } satisfies SessionDetail,
        },
      });
    });
    terminated.push({ ...instanceOut(instance), provider_answer: outcome, session: sessionOut(row) });
  }
  const closed = [];
  for (const { session, instance } of lost) {
    const gone = instance
      ? `the provider lists its instance ${instance.id} as ${instance.status}`
      : `the provider no longer lists its instance ${session.instanceId ?? '(none recorded)'}`;
    const endedAt = instance?.ended_at ? new Date(instance.ended_at) : undefined;
    const result = await recordEnd(db, session, 'instance_lost', gone, endedAt);
    if (result.ended) closed.push(sessionOut(result.session));
  }
  if (terminated.length || closed.length)
    await recordAudit(db, {
      actorId: actor.userId,
      action: 'cloud.orphans.terminated',
      subjectType: 'cloud_provider',
      subjectId: provider.name,
      detail: {
        instance_ids: terminated.map((t) => t.instance_id),
        session_ids: closed.map((s) => s.id),
      },
      requestId: actor.requestId,
    });
  return { provider: provider.name, terminated_instances: terminated, closed_sessions: closed };
}
