import { ApplicationFailure, Context } from '@temporalio/activity';
import { contextEgoSpeed, sessionCamera, type CriticFrame } from '../../core/critic';
import { UnavailableError } from '../../core/errors';
import type { AgentPolicy } from '../../core/routing';
import type { AutolabelJob, Prisma } from '../../generated/prisma/client';
import type { ActivityDeps } from '../deps';
import { createMaskStore } from '../annotations/masks';
import { recordAudit } from '../audit';
import { emitJobEvent } from '../events/jobs';
import { residentClosedSetDetector } from '../detect/closed-set';
import { decodeFrame } from '../detect/frame-image';
import { createOpenVocabPath } from '../detect/open-vocab';
import { residentSegmenter } from '../detect/segmentation';
import { createVerifierPath } from '../detect/verifier';
import { readGate } from '../inspector/gate-store';
import { objectLocation, readObject } from '../inspector/frame-objects';
import { labelFrame, type OntologyLookup } from './pipeline';
import { jobOut, jobSlicing } from './jobs';
import { releaseSlot, takeSlot } from './slot';
import { commitFrames, emptyTally, modelsThatRan, type JobTally, type LabelledFrame } from './store';

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
  const [classes, aliases] = await Promise.all([
    deps.db.ontologyClass.findMany({ where: { retiredAt: null } }),
    deps.db.ontologyAlias.findMany({ include: { class: true } }),
  ]);
  const byName = new Map(classes.map((c) => [c.name, { id: c.id, name: c.name, l1: c.l1 }]));
  for (const a of aliases)
    if (!byName.has(a.name) && !a.class.retiredAt)
      byName.set(a.name, { id: a.class.id, name: a.class.name, l1: a.class.l1 });
  return {
    resolve: (name) => byName.get(name),
    names: new Set(classes.filter((c) => c.l0 === 'object').map((c) => c.name)),
  };
}

/**
 * Frames commit in batches: one transaction per batch of up to COMMIT_FRAMES consecutive frames,
 * or fewer when the oldest waiting frame has waited COMMIT_MS (so progress, heartbeat and the slot
 * row never lag by more than that on a slow model). A crash loses at most the uncommitted batch,
 * which the retry labels again.
 */
const COMMIT_FRAMES = 8;
const COMMIT_MS = 1000;
/** Frames read and letterboxed ahead of the one being inferred. */
const PREFETCH = 3;

export function createAutolabelActivities(deps: ActivityDeps) {
  const { db, storage, config } = deps;
  const masks = createMaskStore(storage);
  const device = config.workers.gpuDevice;
  // Kept loaded between sessions: a session starts without loading the model (docs/autolabel.md).
  const closedSetModel = deps.closedSet ?? residentClosedSetDetector(config);
  const segmenter = residentSegmenter(config);

  const publish = (job: AutolabelJob, type: string) => deps.events.publish('jobs', type, jobOut(job));

  /** Frames still to do, in index order: after the resume point, unlabelled only when asked, within the limit. */
  async function framesToDo(job: AutolabelJob, after: number | null) {
    const remaining = job.limit === null ? undefined : Math.max(0, job.limit - job.framesDone);
    if (remaining === 0) return [];
    return db.frame.findMany({
      where: {
        sessionId: job.sessionId,
        ...(after === null ? {} : { index: { gt: after } }),
        // Unlabelled: no object other than this job's own (so a retry sees the same frames).
        ...(job.onlyUnlabelled
          ? { objects: { none: { OR: [{ jobId: null }, { jobId: { not: job.id } }] } } }
          : {}),
      },
      orderBy: { index: 'asc' },
      take: remaining,
      select: { id: true, index: true, uri: true, timestampMs: true, context: true },
    });
  }

  return {
    /**
     * The detection work of one session, holding the GPU slot: one heartbeating activity on the
     * `gpu` queue. Frames are committed in batches with the job's progress; a retried attempt resumes
     * after the last committed frame (the heartbeat and the job row both carry it).
     */
    async autolabelSession(input: AutolabelSessionInput): Promise<AutolabelSessionResult> {
      const ctx = Context.current();
      // The model (loaded already, unless this worker has not run a session yet) is made ready while the job, the session and the gate are read.
      const loadingModel = closedSetModel.acquire();
      loadingModel.catch(() => undefined); // awaited below
      let holding: string | null = null;
      let ticker: NodeJS.Timeout | undefined;
      try {
        const [job0, session, gate] = await Promise.all([
          db.autolabelJob.findUnique({ where: { id: input.jobId } }),
          db.session.findUnique({ where: { id: input.sessionId } }),
          readGate(db, input.sessionId),
        ]);
        if (!job0 || job0.sessionId !== input.sessionId)
          throw ApplicationFailure.nonRetryable(
            `no autolabel job ${input.jobId} for session ${input.sessionId}`,
            'JobNotFound',
          );
        if (!session)
          throw ApplicationFailure.nonRetryable(
            `session ${input.sessionId} no longer exists`,
            'SessionNotFound',
          );
        if (gate.quarantined || session.quarantined)
          throw ApplicationFailure.nonRetryable(
            `session ${session.id} is quarantined by its health gate; auto-label is refused`,
            'SessionQuarantined',
          );

        const beat = ctx.info.heartbeatDetails as AutolabelHeartbeat | undefined;
        const committed = job0.lastFrameIndex;
        const after = Math.max(beat?.lastFrameIndex ?? -1, committed ?? -1);
        const resumedFrom = after >= 0 ? after : null;
        const [ontology, frames] = await Promise.all([loadOntology(deps), framesToDo(job0, resumedFrom)]);
        let [job] = await Promise.all([
          db.autolabelJob.update({
            where: { id: job0.id },
            data: {
              state: 'running',
              attempts: { increment: 1 },
              startedAt: job0.startedAt ?? new Date(),
              resumedFrom,
              error: null,
              ...(job0.framesPlanned === null ? { framesPlanned: frames.length } : {}),
            },
          }),
          takeSlot(db, {
            device,
            holderKind: 'autolabel',
            holderId: job0.id,
            workflowId: job0.workflowId,
            sessionId: job0.sessionId,
          }),
        ]);
        holding = job.id;
        let details: AutolabelHeartbeat = { lastFrameIndex: resumedFrom, framesDone: job.framesDone };
        ctx.heartbeat(details);
        // Heartbeats keep flowing while a frame waits on a slow endpoint, so only a dead worker times out.
        ticker = setInterval(
          () => ctx.heartbeat(details),
          Math.max(1000, (config.autolabel.heartbeatTimeoutSeconds * 1000) / 3),
        );
        const closedSet = await loadingModel.catch((err: unknown) => {
          if (err instanceof UnavailableError)
            throw ApplicationFailure.nonRetryable(err.message, 'ModelUnavailable');
          throw err;
        });
        const paths = {
          openVocab: createOpenVocabPath(config),
          verifier: createVerifierPath(config),
          segmenter,
        };
        const started = publish(job, 'autolabel.started');
        started.catch(() => undefined); // awaited after the frames; marked handled so a failed publish cannot crash the worker meanwhile
        const tally: JobTally = { ...emptyTally(), ...(job.tally as Partial<JobTally>) };
        tally.ms = { ...emptyTally().ms, ...tally.ms };
        const policy = job.policy as unknown as AgentPolicy;
        let previous: CriticFrame | null = null;
        // The first committed batch always reports progress, however short the session; later ones at most once a second.
        let lastPublish = 0;
        const ms = tally.ms;
        const timed = async <T>(step: keyof JobTally['ms'], work: Promise<T>): Promise<T> => {
          const t = performance.now();
          const out = await work;
          ms[step] += performance.now() - t;
          return out;
        };
        // A frame is read, decoded, letterboxed and handed to the model's queue as soon as it can
        // be, PREFETCH frames ahead of the one being fused: the model never waits for this thread,
        // and reads, decodes and commits overlap inference. Commits stay in frame order, and the
        // heartbeat only advances past a committed frame.
        const load = (frame: (typeof frames)[number]) => {
          const loading = timed('read', readObject(storage, objectLocation(storage, frame.uri, 'frames')))
            .then((bytes) =>
              timed(
                'decode',
                decodeFrame(bytes).then(async (image) => {
                  // A configured open-vocabulary endpoint is sent every frame: its full decode can run ahead too.
                  const [input] = await Promise.all([
                    closedSet.prepare(image, jobSlicing(job)),
                    paths.openVocab.configured ? image.pixels() : null,
                  ]);
                  return { image, input };
                }),
              ),
            )
            .then(({ image, input }) => {
              const closed = closedSet.infer(input);
              closed.catch(() => undefined); // awaited by labelFrame
              return { image, closed };
            });
          loading.catch(() => undefined); // awaited below; marked handled so an early failure cannot crash the worker
          return loading;
        };
        const ahead = frames.slice(0, PREFETCH).map(load);
        let committing: Promise<void> = Promise.resolve();
        let pending: LabelledFrame[] = [];
        let pendingSince = 0;
        const commit = async () => {
          const batch = pending;
          pending = [];
          await committing;
          committing = (async () => {
            // A batch's write time reaches the row with the next batch (and the last with completion).
            const done = await timed(
              'write',
              commitFrames(db, masks, job, batch, {
                controlSeed: config.autolabel.controlSeed,
                tally,
                slot: { device },
              }),
            );
            details = { lastFrameIndex: done.lastFrameIndex, framesDone: done.framesDone };
            ctx.heartbeat(details);
            if (Date.now() - lastPublish > 1000) {
              lastPublish = Date.now();
              const current = await db.autolabelJob.findUnique({ where: { id: job.id } });
              if (current) await publish(current, 'autolabel.progress');
            }
          })();
          committing.catch(() => undefined); // awaited before the next commit or after the loop
        };
        for (const [i, frame] of frames.entries()) {
          const { image, closed } = await ahead.shift()!;
          if (frames[i + PREFETCH]) ahead.push(load(frames[i + PREFETCH]!));
          const cam = sessionCamera(session.sourceMeta, image.width, image.height);
          const t = performance.now();
          const answered = closed.then(
            () => performance.now(),
            () => performance.now(),
          );
          const labels = await labelFrame(
            paths,
            ontology,
            {
              image,
              closedSet: closed,
              timestampMs: frame.timestampMs,
              egoSpeedMps: contextEgoSpeed(frame.context),
            },
            {
              policy,
              fusionIou: config.autolabel.fusionIou,
              verifierMaxObjects: config.autolabel.verifierMaxObjects,
              critic: { camera: cam.camera, cameraSource: cam.source, previous, lidarPixels: null },
            },
          );
          ms.inference += labels.inferenceMs;
          // The paths after the model's answer: decoding its head, the endpoints, fusion, verifier, critic.
          ms.fusion += performance.now() - Math.max(t, await answered);
          previous = labels.criticFrame;
          if (!pending.length) pendingSince = Date.now();
          pending.push({ frame, labels });
          if (pending.length >= COMMIT_FRAMES || Date.now() - pendingSince >= COMMIT_MS) await commit();
        }
        if (pending.length) await commit();
        await committing;
        await started;
        job = await db.autolabelJob.update({
          where: { id: job.id },
          data: {
            state: 'completed',
            finishedAt: new Date(),
            paths: modelsThatRan(tally, closedSet.model),
            tally: tally as unknown as Prisma.InputJsonValue,
          },
        });
        await Promise.all([
          recordAudit(db, {
            actorId: null,
            action: 'autolabel.completed',
            subjectType: 'session',
            subjectId: job.sessionId,
            detail: { job_id: job.id, frames: job.framesDone, objects: job.objectsCreated },
          }),
          emitJobEvent(
            db,
            { kind: 'autolabel', id: job.id, startedBy: job.createdBy },
            {
              kind: 'job.completed',
              summary: {
                session_id: job.sessionId,
                frames: job.framesDone,
                objects_created: job.objectsCreated,
              },
            },
          ),
          publish(job, 'autolabel.completed'),
        ]);
        return {
          jobId: job.id,
          framesDone: job.framesDone,
          objectsCreated: job.objectsCreated,
          objectsDeleted: job.objectsDeleted,
          resumedFrom,
        };
      } finally {
        clearInterval(ticker);
        if (holding) await releaseSlot(db, device, holding);
      }
    },
  };
}

export type AutolabelGpuActivities = ReturnType<typeof createAutolabelActivities>;
