import { randomUUID } from 'node:crypto';
import { NotFoundError, RefusedError } from '../../core/errors';
import type { Box } from '../../core/geometry';
import { MACHINE_SOURCE_SPELLINGS, normaliseSource, type ObjectSource } from '../../core/objects/sources';
import {
  planPropagation,
  PROPAGATE_METHOD,
  type PropagateIn,
  type PropagationStep,
  type SeedPoint,
  type TargetFrame,
} from '../../core/tracklets/propagate';
import type { Prisma } from '../../generated/prisma/client';
import { agentRunOut, type AgentRunSummary } from '../agent-runs/runs';
import { objectOut, type Actor } from '../annotations/objects';
import { recordAudit } from '../audit';
import type { Db } from '../db';
import type { ActivityDeps } from '../deps';

type Tx = Prisma.TransactionClient;

/** The kind of the agent run an agent propagation records, so `POST /api/agent/runs/{run_id}/revert` undoes it. */
export const PROPAGATE_KIND = 'propagate';

/** Stored as the tracker version of a track propagation had to start (the object belonged to none). */
export const PROPAGATE_TRACK_VERSION = 'propagate-1';

/**
 * Sources whose objects are a detector's output, the ones `redetect` may snap to: interpolated and
 * propagated objects are themselves guesses between detections, so snapping to them proves nothing.
 */
const DETECTOR_SOURCES: readonly ObjectSource[] = ['fused', 'relabel', 'recall'];
const DETECTOR_SPELLINGS = MACHINE_SOURCE_SPELLINGS.filter((s) =>
  DETECTOR_SOURCES.includes(normaliseSource(s) as ObjectSource),
);

/** The state a propagated object takes: like interpolation's fills, a machine write waits for a person. */
const PROPAGATED_STATE = 'review';

/** Track objects before the propagated one that seed the filter: the latest ones say how it moves now. */
const SEED_POINTS = 10;

export interface PropagationPlanOut {
  object_id: string;
  session_id: string;
  class_name: string;
  /** The object's track; null while a track is still to be made for it. */
  track_id: string | null;
  creates_track: boolean;
  method: string;
  params: PropagateIn;
  seed_objects: number;
  created: number;
  skipped: number;
  frames: PropagationStep[];
}

interface Reading {
  plan: PropagationPlanOut;
  object: { id: string; frameId: string; classId: number; trackId: string | null; bbox: Box };
  frames: Map<string, { index: number; ts: number }>;
}

const isBox = (b: readonly number[]): b is Box => b.length === 4 && b.every(Number.isFinite);

/**
 * Reads what a propagation of the object needs and plans it; inside a write transaction the track
 * (or, without a track, the object) is locked first, so two propagations of one track cannot both
 * fill a frame.
 */
async function readPropagation(
  db: Db | Tx,
  objectId: string,
  params: PropagateIn,
  lock: boolean,
): Promise<Reading> {
  const found = await db.annoObject.findUnique({
    where: { id: objectId },
    select: { trackId: true },
  });
  if (!found) throw new NotFoundError(`no object ${objectId}`);
  if (lock) {
    if (found.trackId) await db.$queryRaw`SELECT id FROM tracks WHERE id = ${found.trackId}::uuid FOR UPDATE`;
    await db.$queryRaw`SELECT id FROM objects WHERE id = ${objectId}::uuid FOR UPDATE`;
  }
  const o = await db.annoObject.findUnique({
    where: { id: objectId },
    include: { class: { select: { name: true } }, frame: { select: { sessionId: true } } },
  });
  if (!o) throw new NotFoundError(`no object ${objectId}`);
  if (lock && o.trackId !== found.trackId)
    throw new RefusedError(`object ${objectId} changed track while it was propagated; try again`);
  if (o.state === 'rejected')
    throw new RefusedError(`object ${objectId} is rejected: no object of the scene to propagate`);
  if (!isBox(o.bbox)) throw new RefusedError(`object ${objectId} has no box to propagate`);
  const sessionFrames = await db.frame.findMany({
    where: { sessionId: o.frame.sessionId },
    orderBy: [{ timestampMs: 'asc' }, { index: 'asc' }],
    select: { id: true, index: true, timestampMs: true },
  });
  const stepOf = new Map(sessionFrames.map((f, i) => [f.id, i]));
  const here = stepOf.get(o.frameId)!;
  const next = sessionFrames.slice(here + 1, here + 1 + params.frames);
  if (!next.length)
    throw new RefusedError(
      `object ${objectId} is on the last frame of its session: no frame follows to propagate to`,
    );

  const trackObjects = o.trackId
    ? await db.annoObject.findMany({
        where: { trackId: o.trackId },
        orderBy: { id: 'asc' },
        select: { id: true, frameId: true, bbox: true, state: true },
      })
    : [];
  const seed: SeedPoint[] = [{ step: here, box: o.bbox }];
  const seen = new Set([o.frameId]);
  const before = trackObjects
    .filter((t) => t.state !== 'rejected' && isBox(t.bbox) && stepOf.get(t.frameId)! < here)
    .sort((a, b) => stepOf.get(b.frameId)! - stepOf.get(a.frameId)!);
  for (const t of before) {
    if (seed.length >= SEED_POINTS) break;
    if (seen.has(t.frameId)) continue;
    seen.add(t.frameId);
    seed.push({ step: stepOf.get(t.frameId)!, box: t.bbox as Box });
  }

  const nextIds = next.map((f) => f.id);
  const detections = params.redetect
    ? await db.annoObject.findMany({
        where: {
          frameId: { in: nextIds },
          classId: o.classId,
          state: { not: 'rejected' },
          source: { in: [...DETECTOR_SPELLINGS] },
          ...(o.trackId ? { OR: [{ trackId: null }, { trackId: { not: o.trackId } }] } : {}),
        },
        orderBy: { id: 'asc' },
        select: { id: true, frameId: true, bbox: true, conf: true },
      })
    : [];
  const targets: TargetFrame[] = next.map((f) => {
    const there = trackObjects.filter((t) => t.frameId === f.id);
    const kept = there.find((t) => t.state !== 'rejected' && isBox(t.bbox)) ?? there[0];
    return {
      frame_id: f.id,
      frame_index: f.index,
      step: stepOf.get(f.id)!,
      occupied: kept
        ? {
            object_id: kept.id,
            box: kept.bbox as Box,
            rejected: kept.state === 'rejected' || !isBox(kept.bbox),
          }
        : null,
      detections: detections
        .filter((d) => d.frameId === f.id && isBox(d.bbox))
        .map((d) => ({ object_id: d.id, box: d.bbox as Box, conf: d.conf })),
    };
  });
  const frames = planPropagation(seed, targets, params);
  const created = frames.filter((f) => f.action === 'create').length;
  return {
    plan: {
      object_id: o.id,
      session_id: o.frame.sessionId,
      class_name: o.class.name,
      track_id: o.trackId,
      creates_track: o.trackId === null && created > 0,
      method: PROPAGATE_METHOD,
      params,
      seed_objects: seed.length,
      created,
      skipped: frames.length - created,
      frames,
    },
    object: { id: o.id, frameId: o.frameId, classId: o.classId, trackId: o.trackId, bbox: o.bbox },
    frames: new Map(sessionFrames.map((f) => [f.id, { index: f.index, ts: f.timestampMs }])),
  };
}

/** What a propagation would create, without writing anything. */
export async function planObjectPropagation(
  db: Db,
  objectId: string,
  params: PropagateIn,
): Promise<PropagationPlanOut> {
  return (await readPropagation(db, objectId, params, false)).plan;
}

/** The track the object belongs to, or a new one holding it (the object's link is no label edit: no version bump). */
async function trackFor(tx: Tx, r: Reading): Promise<string> {
  if (r.object.trackId) return r.object.trackId;
  const at = r.frames.get(r.object.frameId)!;
  const track = await tx.track.create({
    data: {
      sessionId: r.plan.session_id,
      trackerVersion: PROPAGATE_TRACK_VERSION,
      trajectory: [
        {
          frame_id: r.object.frameId,
          frame_index: at.index,
          ts_ms: at.ts,
          object_id: r.object.id,
          box: r.object.bbox,
          score: 1,
        },
      ],
      attrs: { class_name: r.plan.class_name, started_by: 'propagate', seed_object_id: r.object.id },
    },
  });
  await tx.annoObject.update({ where: { id: r.object.id }, data: { trackId: track.id } });
  return track.id;
}

export interface PropagationOutcome extends PropagationPlanOut {
  objects: Array<ReturnType<typeof objectOut>>;
}

/**
 * Plans under the lock and writes the plan in the caller's transaction: one `propagated` object in
 * review per frame to create (the object's class, its track, conf from the detection it snapped to,
 * else none), each with its provenance row. Nothing to create is a refusal, so nothing is written.
 */
async function writePropagation(
  tx: Tx,
  objectId: string,
  params: PropagateIn,
  runId: string | null,
): Promise<{ outcome: PropagationOutcome; created: Array<{ id: string; frameId: string }> }> {
  const r = await readPropagation(tx, objectId, params, true);
  const creates = r.plan.frames.flatMap((f) =>
    f.action === 'create' ? [{ step: f, id: randomUUID() }] : [],
  );
  if (!creates.length)
    throw new RefusedError(
      `nothing to propagate: each of the next ${r.plan.frames.length} frame(s) already holds an object of the track`,
      { frames: r.plan.frames },
    );
  const trackId = await trackFor(tx, r);
  await tx.annoObject.createMany({
    data: creates.map(({ step, id }) => ({
      id,
      frameId: step.frame_id,
      bbox: step.box,
      classId: r.object.classId,
      conf: step.snapped?.conf ?? null,
      source: 'propagated',
      state: PROPAGATED_STATE,
      trackId,
    })),
  });
  await tx.provenance.createMany({
    data: creates.map(({ step, id }) => ({
      objectId: id,
      paths: ['propagated'],
      ...(step.snapped?.conf != null ? { rawConfidences: { redetect: step.snapped.conf } } : {}),
      reasonerTrace: {
        method: PROPAGATE_METHOD,
        from_object_id: objectId,
        predicted: step.predicted,
        snapped_to: step.snapped,
        redetect: params.redetect,
        min_iou: params.min_iou,
        run_id: runId,
      },
    })),
  });
  const objects = await tx.annoObject.findMany({
    where: { id: { in: creates.map((c) => c.id) } },
    include: { class: { select: { name: true } } },
  });
  const order = new Map<string, number>(creates.map((c, i) => [c.id, i]));
  objects.sort((a, b) => order.get(a.id)! - order.get(b.id)!);
  return {
    outcome: { ...r.plan, track_id: trackId, objects: objects.map(objectOut) },
    created: creates.map(({ step, id }) => ({ id, frameId: step.frame_id })),
  };
}

const auditPropagation = (tx: Tx, outcome: PropagationOutcome, actor: Actor, runId: string | null) =>
  recordAudit(tx, {
    actorId: actor.userId,
    action: 'object.propagated',
    subjectType: 'object',
    subjectId: outcome.object_id,
    detail: {
      track_id: outcome.track_id,
      creates_track: outcome.creates_track,
      params: outcome.params,
      created: outcome.created,
      skipped: outcome.skipped,
      run_id: runId,
    } as Prisma.InputJsonValue,
    requestId: actor.requestId,
  });

/** Propagates the object to its next frames (docs/propagation.md), in one transaction. */
export async function propagateObject(
  db: Db,
  objectId: string,
  params: PropagateIn,
  actor: Actor,
): Promise<PropagationOutcome> {
  return db.$transaction(
    async (tx) => {
      const { outcome } = await writePropagation(tx, objectId, params, null);
      await auditPropagation(tx, outcome, actor, null);
      return outcome;
    },
    { timeout: 30_000 },
  );
}

/**
 * The agent's propagation: the same write as one completed AgentRun of kind `propagate`, recorded
 * in the same transaction as what it made (one ledger row per frame naming the object created
 * there, nothing replaced), so `POST /api/agent/runs/{run_id}/revert` removes what nobody has
 * reviewed since. Announced on the jobs stream once committed.
 */
export async function propagateObjectAsRun(
  deps: Pick<ActivityDeps, 'db' | 'events'>,
  objectId: string,
  params: PropagateIn,
  actor: Actor,
) {
  const runId = randomUUID();
  const { outcome, run } = await deps.db.$transaction(
    async (tx) => {
      const { outcome, created } = await writePropagation(tx, objectId, params, runId);
      const changes: AgentRunSummary & { track_created: boolean } = {
        sessions: { completed: 1, failed: 0, skipped: 0 },
        frames: created.length,
        objects_replaced: 0,
        objects_created: created.length,
        reverted: null,
        track_created: outcome.creates_track,
      };
      const run = await tx.agentRun.create({
        data: {
          id: runId,
          kind: PROPAGATE_KIND,
          status: 'completed',
          params: { object_id: objectId, track_id: outcome.track_id, ...params },
          changes: changes as unknown as Prisma.InputJsonValue,
          createdBy: actor.userId,
          finishedAt: new Date(),
        },
      });
      await tx.agentRunFrame.createMany({
        data: created.map((c) => ({
          runId,
          frameId: c.frameId,
          jobId: runId,
          created: [c.id],
          replaced: [],
        })),
      });
      await auditPropagation(tx, outcome, actor, runId);
      await recordAudit(tx, {
        actorId: actor.userId,
        action: 'agent_run.completed',
        subjectType: 'agent_run',
        subjectId: runId,
        detail: { kind: PROPAGATE_KIND, changes } as unknown as Prisma.InputJsonValue,
        requestId: actor.requestId,
      });
      return { outcome, run };
    },
    { timeout: 30_000 },
  );
  await deps.events.publish('jobs', 'agent.run.completed', agentRunOut(run));
  return { ...outcome, run_id: run.id, status: run.status, changes: run.changes };
}
