import { randomUUID } from 'node:crypto';
import { isControlSample } from '../../core/control';
import { MACHINE_SOURCE_SPELLINGS } from '../../core/objects/sources';
import type { AutolabelJob, Prisma } from '../../generated/prisma/client';
import { withNewMasks, type MaskStore } from '../annotations/masks';
import { recordAudit } from '../audit';
import type { Db } from '../db';
import type { FrameLabels } from './pipeline';
import { touchSlot } from './slot';

/** The idem key of an auto-label object: one per (job, frame, fused detection). */
export const objectIdemKey = (jobId: string, frameId: string, n: number): string =>
  `al:${jobId}:${frameId}:${n}`;

/** Running counts of a job, kept in autolabel_jobs.tally. */
export interface JobTally {
  states: Record<string, number>;
  vetoes: Record<string, number>;
  demoted: number;
  controls: number;
  verifier_asked: number;
  dropped: Record<string, number>;
  /** Frames on which each path ran, was refused or failed. */
  paths: Record<string, Record<string, number>>;
  /** Why each refused or failed path did not run (first reason seen). */
  path_reasons: Record<string, string>;
  /** Time spent per step (ms): reading frames from MinIO, decoding, model inference alone, the rest of the paths with fusion and critic, writing. */
  ms: { read: number; decode: number; inference: number; fusion: number; write: number };
}

export const emptyTally = (): JobTally => ({
  states: {},
  vetoes: {},
  demoted: 0,
  controls: 0,
  verifier_asked: 0,
  dropped: {},
  paths: {},
  path_reasons: {},
  ms: { read: 0, decode: 0, inference: 0, fusion: 0, write: 0 },
});

const bump = (m: Record<string, number>, k: string, by = 1) => void (m[k] = (m[k] ?? 0) + by);

export function addToTally(t: JobTally, labels: FrameLabels, controls: number): void {
  for (const o of labels.objects) {
    bump(t.states, o.state);
    for (const v of o.critic.vetoes) bump(t.vetoes, v.check);
    if (o.demoted) t.demoted++;
  }
  t.controls += controls;
  t.verifier_asked += labels.verifier.asked;
  for (const [k, v] of Object.entries(labels.dropped)) bump(t.dropped, k, v);
  const record = (path: string, status: string, reason?: string) => {
    bump((t.paths[path] ??= {}), status);
    if (reason && !t.path_reasons[path]) t.path_reasons[path] = reason;
  };
  for (const r of labels.runs) record(r.path, r.status, r.status === 'ran' ? undefined : r.reason);
  if (labels.verifier.status !== 'not_needed')
    record('verifier', labels.verifier.status, labels.verifier.reason);
}

/** One labelled frame waiting to be committed. */
export interface LabelledFrame {
  frame: { id: string; index: number };
  labels: FrameLabels;
}

/**
 * Commits a batch of consecutive labelled frames in one transaction: each frame's machine-source
 * objects replaced by its new labels, with their provenance, the control samples drawn among the
 * auto-accepts, one audit entry per frame, the slot's heartbeat and the job's progress, which
 * ends at the batch's last frame — so a frame is either all old or all new, and a retry resumes
 * exactly after the last committed batch. Set-based: one statement per table for the whole batch.
 * Human and imported objects are never touched. Masks are written first and removed again if the
 * transaction fails; the replaced objects' masks go after the commit. Run twice over the same
 * frames (a retry after a crash), it leaves exactly one set.
 */
export async function commitFrames(
  db: Db,
  masks: MaskStore,
  job: Pick<AutolabelJob, 'id' | 'sessionId'>,
  batch: readonly LabelledFrame[],
  progress: { controlSeed: number; tally: JobTally; slot: { device: number } },
): Promise<{ job: AutolabelJob; created: number; deleted: number; controls: number }> {
  const last = batch.at(-1);
  if (!last) throw new Error('commitFrames needs at least one frame');
  const frames = batch.map(({ frame, labels }) => {
    const rows = labels.objects.map((o) => ({
      o,
      id: randomUUID(),
      idemKey: objectIdemKey(job.id, frame.id, o.n),
    }));
    const controls = rows.filter(
      (r) => r.o.state === 'auto_accept' && isControlSample(progress.controlSeed, r.idemKey),
    );
    addToTally(progress.tally, labels, controls.length);
    return { frame, labels, rows, controls };
  });
  const rows = frames.flatMap((f) => f.rows.map((r) => ({ ...r, frameId: f.frame.id, labels: f.labels })));
  const controls = frames.flatMap((f) => f.controls);
  const docs = rows
    .filter((r) => r.o.fused.mask)
    .map((r) => ({ object_id: r.id, version: 1, polygons: r.o.fused.mask! }));
  const frameIds = frames.map((f) => f.frame.id);
  const { updated, old } = await withNewMasks(masks, docs, (uris) =>
    db.$transaction(async (tx) => {
      const old = await tx.annoObject.findMany({
        where: { frameId: { in: frameIds }, source: { in: [...MACHINE_SOURCE_SPELLINGS] } },
        select: { id: true, frameId: true, maskUri: true },
      });
      const oldIds = old.map((o) => o.id);
      if (oldIds.length) {
        await tx.controlSample.deleteMany({ where: { objectId: { in: oldIds }, verdict: null } });
        await tx.annoObject.deleteMany({ where: { id: { in: oldIds } } });
      }
      await tx.annoObject.createMany({
        data: rows.map(({ o, id, idemKey, frameId }) => ({
          id,
          frameId,
          bbox: [o.fused.box.x1, o.fused.box.y1, o.fused.box.x2, o.fused.box.y2],
          classId: o.classId,
          conf: o.fused.conf,
          attrs: {},
          maskUri: uris.get(id) ?? null,
          source: 'fused',
          state: o.state,
          idemKey,
          jobId: job.id,
        })),
      });
      await tx.provenance.createMany({
        data: rows.map(({ o, id, labels }) => ({
          objectId: id,
          paths: o.fused.paths,
          rawConfidences: o.fused.rawConfidences as Prisma.InputJsonValue,
          agreement: o.fused.agreement,
          entropy: o.fused.entropy,
          qualityFlags: o.qualityFlags,
          reasonerTrace: {
            paths_ran: o.fused.pathsRan,
            paths: Object.fromEntries(
              labels.runs.map((r) => [
                r.path,
                r.status === 'ran'
                  ? { status: 'ran', model: r.model ?? null }
                  : { status: r.status, reason: r.reason },
              ]),
            ),
            class_distribution: o.fused.classDistribution,
            route: { state: o.state, reason: o.routeReason, demoted_by_critic: o.demoted },
            critic: { vetoes: o.critic.vetoes, ran: o.critic.ran, skipped: o.critic.skipped },
            verifier:
              o.fused.verifier ??
              (o.qualityFlags.includes('unverified')
                ? {
                    status: labels.verifier.status,
                    reason: labels.verifier.reason ?? 'the verifier gave no answer for it',
                  }
                : null),
          } as unknown as Prisma.InputJsonValue,
        })),
      });
      if (controls.length) {
        await tx.controlSample.createMany({
          data: controls.map(({ o, id }) => ({
            objectId: id,
            sessionId: job.sessionId,
            seed: progress.controlSeed,
            className: o.fused.className,
            conf: o.fused.conf,
            checks: o.critic.ran,
            jobId: job.id,
          })),
          skipDuplicates: true,
        });
      }
      const updated = await tx.autolabelJob.update({
        where: { id: job.id },
        data: {
          framesDone: { increment: frames.length },
          lastFrameIndex: last.frame.index,
          objectsCreated: { increment: rows.length },
          objectsDeleted: { increment: old.length },
          tally: progress.tally as unknown as Prisma.InputJsonValue,
        },
      });
      const replaced = (frameId: string) => old.filter((o) => o.frameId === frameId).length;
      for (const f of frames) {
        await recordAudit(tx, {
          actorId: null,
          action: 'autolabel.frame',
          subjectType: 'frame',
          subjectId: f.frame.id,
          detail: {
            job_id: job.id,
            created: f.rows.length,
            replaced: replaced(f.frame.id),
            controls: f.controls.length,
          },
        });
      }
      await touchSlot(tx, progress.slot.device, job.id);
      return { updated, old };
    }),
  );
  await masks.remove(old.map((o) => o.maskUri));
  return { job: updated, created: rows.length, deleted: old.length, controls: controls.length };
}
