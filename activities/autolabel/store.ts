import { randomUUID } from 'node:crypto';
import { isControlSample } from '../../core/control';
import { MACHINE_SOURCE_SPELLINGS } from '../../core/objects/sources';
import type { AutolabelJob, Prisma } from '../../generated/prisma/client';
import { withNewMasks, type MaskStore } from '../annotations/masks';
import { recordAudit } from '../audit';
import type { Db } from '../db';
import type { FrameLabels } from './pipeline';

/** The idem key of an auto-label object: one per (job, frame, fused detection). */
export const objectIdemKey = (jobId: string, frameId: string, n: number): string => `al:${jobId}:${frameId}:${n}`;

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

export const emptyTally = (): JobTally => ({ states: {}, vetoes: {}, demoted: 0, controls: 0, verifier_asked: 0, dropped: {}, paths: {}, path_reasons: {}, ms: { read: 0, decode: 0, inference: 0, fusion: 0, write: 0 } });

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
  if (labels.verifier.status !== 'not_needed') record('verifier', labels.verifier.status, labels.verifier.reason);
}

/**
 * Replaces a frame's machine-source objects with the frame's new labels, in one transaction with
 * their provenance, the control samples drawn among the auto-accepts and the job's progress, so a
 * frame is either all old or all new. Human and imported objects are never touched. Masks are
 * written first and removed again if the transaction fails; the replaced objects' masks go after
 * the commit. Run twice for one frame (a retry after a crash), it leaves exactly one set.
 */
export async function replaceFrameObjects(
  db: Db,
  masks: MaskStore,
  job: Pick<AutolabelJob, 'id' | 'sessionId'>,
  frame: { id: string; index: number },
  labels: FrameLabels,
  progress: { controlSeed: number; tally: JobTally },
): Promise<{ created: number; deleted: number; controls: number }> {
  const rows = labels.objects.map((o) => ({ o, id: randomUUID(), idemKey: objectIdemKey(job.id, frame.id, o.n) }));
  const docs = rows.filter((r) => r.o.fused.mask).map((r) => ({ object_id: r.id, version: 1, polygons: r.o.fused.mask! }));
  const controls = rows.filter((r) => r.o.state === 'auto_accept' && isControlSample(progress.controlSeed, r.idemKey));
  addToTally(progress.tally, labels, controls.length);
  const gone = await withNewMasks(masks, docs, (uris) =>
    db.$transaction(async (tx) => {
      const old = await tx.annoObject.findMany({ where: { frameId: frame.id, source: { in: [...MACHINE_SOURCE_SPELLINGS] } }, select: { id: true, maskUri: true } });
      const oldIds = old.map((o) => o.id);
      if (oldIds.length) {
        await tx.controlSample.deleteMany({ where: { objectId: { in: oldIds }, verdict: null } });
        await tx.annoObject.deleteMany({ where: { id: { in: oldIds } } });
      }
      await tx.annoObject.createMany({
        data: rows.map(({ o, id, idemKey }) => ({
          id,
          frameId: frame.id,
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
        data: rows.map(({ o, id }) => ({
          objectId: id,
          paths: o.fused.paths,
          rawConfidences: o.fused.rawConfidences as Prisma.InputJsonValue,
          agreement: o.fused.agreement,
          entropy: o.fused.entropy,
          qualityFlags: o.qualityFlags,
          reasonerTrace: {
            paths_ran: o.fused.pathsRan,
            paths: Object.fromEntries(labels.runs.map((r) => [r.path, r.status === 'ran' ? { status: 'ran', model: r.model ?? null } : { status: r.status, reason: r.reason }])),
            class_distribution: o.fused.classDistribution,
            route: { state: o.state, reason: o.routeReason, demoted_by_critic: o.demoted },
            critic: { vetoes: o.critic.vetoes, ran: o.critic.ran, skipped: o.critic.skipped },
            verifier: o.fused.verifier ?? (o.qualityFlags.includes('unverified') ? { status: labels.verifier.status, reason: labels.verifier.reason ?? 'the verifier gave no answer for it' } : null),
          } as unknown as Prisma.InputJsonValue,
        })),
      });
      if (controls.length) {
        await tx.controlSample.createMany({
          data: controls.map(({ o, id }) => ({ objectId: id, sessionId: job.sessionId, seed: progress.controlSeed, className: o.fused.className, conf: o.fused.conf, checks: o.critic.ran, jobId: job.id })),
          skipDuplicates: true,
        });
      }
      await tx.autolabelJob.update({
        where: { id: job.id },
        data: {
          framesDone: { increment: 1 },
          lastFrameIndex: frame.index,
          objectsCreated: { increment: rows.length },
          objectsDeleted: { increment: old.length },
          tally: progress.tally as unknown as Prisma.InputJsonValue,
        },
      });
      await recordAudit(tx, {
        actorId: null,
        action: 'autolabel.frame',
        subjectType: 'frame',
        subjectId: frame.id,
        detail: { job_id: job.id, created: rows.length, replaced: old.length, controls: controls.length },
      });
      return old;
    }),
  );
  await masks.remove(gone.map((o) => o.maskUri));
  return { created: rows.length, deleted: gone.length, controls: controls.length };
}
