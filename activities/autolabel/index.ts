import { ApplicationFailure, Context } from '@temporalio/activity';
import { defaultCamera, type CriticFrame, type EgoCamera } from '../../core/critic';
import { UnavailableError } from '../../core/errors';
import type { AgentPolicy } from '../../core/routing';
import type { AutolabelJob, Prisma } from '../../generated/prisma/client';
import type { ActivityDeps } from '..';
import { createMaskStore } from '../annotations/masks';
import { recordAudit } from '../audit';
import { loadClosedSetDetector } from '../detect/closed-set';
import { decodeFrame } from '../detect/frame-image';
import { createOpenVocabPath } from '../detect/open-vocab';
import { createVerifierPath } from '../detect/verifier';
import { readGate } from '../inspector/gate-store';
import { objectLocation, readObject } from '../inspector/frame-objects';
import { labelFrame, type OntologyLookup } from './pipeline';
import { jobOut } from './jobs';
import { releaseSlot, takeSlot, touchSlot } from './slot';
import { emptyTally, replaceFrameObjects, type JobTally } from './store';

export interface AutolabelSessionInput {
  jobId: string;
  sessionId: string;
}

/** What the heartbeat carries: the last frame whose objects are committed. */
export interface AutolabelHeartbeat {
  lastFrameIndex: number | null;
  framesDone: number;
}

export interface AutolabelSessionResult {
  jobId: string;
  framesDone: number;
  objectsCreated: number;
  objectsDeleted: number;
  resumedFrom: number | null;
}

async function loadOntology(deps: ActivityDeps): Promise<OntologyLookup> {
  const [classes, aliases] = await Promise.all([deps.db.ontologyClass.findMany({ where: { retiredAt: null } }), deps.db.ontologyAlias.findMany({ include: { class: true } })]);
  const byName = new Map(classes.map((c) => [c.name, { id: c.id, name: c.name, l1: c.l1 }]));
  for (const a of aliases) if (!byName.has(a.name) && !a.class.retiredAt) byName.set(a.name, { id: a.class.id, name: a.class.name, l1: a.class.l1 });
  return { resolve: (name) => byName.get(name), names: new Set(classes.filter((c) => c.l0 === 'object').map((c) => c.name)) };
}

/** A calibration in the session's source metadata (`camera`: fx, fy, cx, cy, height_m, pitch_deg) wins over the default. */
function sessionCamera(sourceMeta: Prisma.JsonValue, width: number, height: number): { camera: EgoCamera; source: 'session' | 'default' } {
  const c = (sourceMeta as { camera?: Record<string, unknown> } | null)?.camera;
  const n = (k: string) => (typeof c?.[k] === 'number' ? (c[k] as number) : null);
  if (c && n('fx') && n('fy') && n('cx') !== null && n('cy') !== null) {
    return { camera: { fx: n('fx')!, fy: n('fy')!, cx: n('cx')!, cy: n('cy')!, heightM: n('height_m') ?? 1.4, pitchDeg: n('pitch_deg') ?? 0 }, source: 'session' };
  }
  return { camera: defaultCamera(width, height), source: 'default' };
}

const egoSpeed = (context: Prisma.JsonValue): number | null => {
  const v = (context as { ego_speed_mps?: unknown } | null)?.ego_speed_mps;
  return typeof v === 'number' && Number.isFinite(v) ? v : null;
};

export function createAutolabelActivities(deps: ActivityDeps) {
  const { db, storage, config } = deps;
  const masks = createMaskStore(storage);
  const device = config.workers.gpuDevice;

  const publish = (job: AutolabelJob, type: string) => deps.events?.publish('jobs', type, jobOut(job)) ?? Promise.resolve();

  /** Frames still to do, in index order: after the resume point, unlabelled only when asked, within the limit. */
  async function framesToDo(job: AutolabelJob, after: number | null) {
    const remaining = job.limit === null ? undefined : Math.max(0, job.limit - job.framesDone);
    if (remaining === 0) return [];
    return db.frame.findMany({
      where: {
        sessionId: job.sessionId,
        ...(after === null ? {} : { index: { gt: after } }),
        // Unlabelled: no object other than this job's own (so a retry sees the same frames).
        ...(job.onlyUnlabelled ? { objects: { none: { OR: [{ jobId: null }, { jobId: { not: job.id } }] } } } : {}),
      },
      orderBy: { index: 'asc' },
      take: remaining,
      select: { id: true, index: true, uri: true, timestampMs: true, context: true },
    });
  }

  return {
    /**
     * The detection work of one session, holding the GPU slot: one heartbeating activity on the
     * `gpu` queue. Every frame is committed with the job's progress; a retried attempt resumes
     * after the last committed frame (the heartbeat and the job row both carry it).
     */
    async autolabelSession(input: AutolabelSessionInput): Promise<AutolabelSessionResult> {
      const ctx = Context.current();
      const job0 = await db.autolabelJob.findUnique({ where: { id: input.jobId } });
      if (!job0) throw ApplicationFailure.nonRetryable(`no autolabel job ${input.jobId}`, 'JobNotFound');
      const session = await db.session.findUnique({ where: { id: job0.sessionId } });
      if (!session) throw ApplicationFailure.nonRetryable(`session ${job0.sessionId} no longer exists`, 'SessionNotFound');
      const gate = await readGate(db, session.id);
      if (gate.quarantined || session.quarantined) throw ApplicationFailure.nonRetryable(`session ${session.id} is quarantined by its health gate; auto-label is refused`, 'SessionQuarantined');

      const beat = ctx.info.heartbeatDetails as AutolabelHeartbeat | undefined;
      const committed = job0.lastFrameIndex;
      const after = Math.max(beat?.lastFrameIndex ?? -1, committed ?? -1);
      const resumedFrom = after >= 0 ? after : null;
      let job = await db.autolabelJob.update({
        where: { id: job0.id },
        data: { state: 'running', attempts: { increment: 1 }, startedAt: job0.startedAt ?? new Date(), resumedFrom, error: null },
      });
      await takeSlot(db, { device, holderKind: 'autolabel', holderId: job.id, workflowId: job.workflowId, sessionId: job.sessionId });
      let details: AutolabelHeartbeat = { lastFrameIndex: resumedFrom, framesDone: job.framesDone };
      ctx.heartbeat(details);
      // Heartbeats keep flowing while a frame waits on a slow endpoint, so only a dead worker times out.
      const ticker = setInterval(() => ctx.heartbeat(details), Math.max(1000, (config.autolabel.heartbeatTimeoutSeconds * 1000) / 3));
      let closedSet: Awaited<ReturnType<typeof loadClosedSetDetector>> | undefined;
      try {
        try {
          closedSet = await loadClosedSetDetector(config);
        } catch (err) {
          if (err instanceof UnavailableError) throw ApplicationFailure.nonRetryable(err.message, 'ModelUnavailable');
          throw err;
        }
        const paths = { closedSet, openVocab: createOpenVocabPath(config), verifier: createVerifierPath(config) };
        const ontology = await loadOntology(deps);
        const frames = await framesToDo(job, resumedFrom);
        if (job.framesPlanned === null) job = await db.autolabelJob.update({ where: { id: job.id }, data: { framesPlanned: frames.length } });
        await publish(job, 'autolabel.started');
        const tally: JobTally = { ...emptyTally(), ...(job.tally as Partial<JobTally>) };
        tally.ms = { ...emptyTally().ms, ...tally.ms };
        const policy = job.policy as unknown as AgentPolicy;
        let previous: CriticFrame | null = null;
        let lastPublish = 0;
        const ms = tally.ms;
        const timed = async <T>(step: keyof JobTally['ms'], work: Promise<T>): Promise<T> => {
          const t = performance.now();
          const out = await work;
          ms[step] += performance.now() - t;
          return out;
        };
        // Reading and decoding the next frame, and committing the last one, overlap with inference:
        // the slot's time goes to the model. Commits stay in frame order, and the heartbeat only
        // advances past a committed frame.
        const load = (frame: (typeof frames)[number]) => {
          const loading = timed('read', readObject(storage, objectLocation(storage, frame.uri, 'frames'))).then((bytes) => timed('decode', decodeFrame(bytes)));
          loading.catch(() => undefined); // awaited below; marked handled so an early failure cannot crash the worker
          return loading;
        };
        let next = frames[0] ? load(frames[0]) : null;
        let committing: Promise<void> = Promise.resolve();
        for (const [i, frame] of frames.entries()) {
          const image = await next!;
          next = frames[i + 1] ? load(frames[i + 1]!) : null;
          const cam = sessionCamera(session.sourceMeta, image.width, image.height);
          const t = performance.now();
          const labels = await labelFrame(paths, ontology, { image, timestampMs: frame.timestampMs, egoSpeedMps: egoSpeed(frame.context) }, {
            policy,
            fusionIou: config.autolabel.fusionIou,
            verifierMaxObjects: config.autolabel.verifierMaxObjects,
            critic: { camera: cam.camera, cameraSource: cam.source, previous, lidarPixels: null },
          });
          ms.inference += labels.inferenceMs;
          ms.fusion += performance.now() - t - labels.inferenceMs;
          previous = labels.criticFrame;
          await committing;
          committing = (async () => {
            // A frame's write time reaches the row with the next frame (and the last with completion).
            await timed('write', replaceFrameObjects(db, masks, job, frame, labels, { controlSeed: config.autolabel.controlSeed, tally }));
            details = { lastFrameIndex: frame.index, framesDone: details.framesDone + 1 };
            ctx.heartbeat(details);
            await touchSlot(db, device, job.id);
            if (Date.now() - lastPublish > 1000) {
              lastPublish = Date.now();
              await publish(await db.autolabelJob.findUniqueOrThrow({ where: { id: job.id } }), 'autolabel.progress');
            }
          })();
          committing.catch(() => undefined); // awaited before the next commit or after the loop
        }
        await committing;
        job = await db.autolabelJob.update({ where: { id: job.id }, data: { state: 'completed', finishedAt: new Date(), paths: { closed_set: closedSet.model }, tally: tally as unknown as Prisma.InputJsonValue } });
        await recordAudit(db, { actorId: null, action: 'autolabel.completed', subjectType: 'session', subjectId: job.sessionId, detail: { job_id: job.id, frames: job.framesDone, objects: job.objectsCreated } });
        await publish(job, 'autolabel.completed');
        return { jobId: job.id, framesDone: job.framesDone, objectsCreated: job.objectsCreated, objectsDeleted: job.objectsDeleted, resumedFrom };
      } finally {
        clearInterval(ticker);
        await closedSet?.release();
        await releaseSlot(db, device, job.id);
      }
    },
  };
}

export type AutolabelGpuActivities = ReturnType<typeof createAutolabelActivities>;
