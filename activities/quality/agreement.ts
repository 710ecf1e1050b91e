import { createHash } from 'node:crypto';
import { NotFoundError, RefusedError } from '../../core/errors';
import type { Box } from '../../core/geometry';
import { computeAgreement, type AgreementAnnotation } from '../../core/quality/agreement';
import { agreementByClass } from '../../core/quality/agreement-by-class';
import type { Actor } from '../annotations/objects';
import type { Db } from '../db';
import { recordOperation } from './operations';

/**
 * Inter-annotator agreement (docs/quality-measure.md): on annotations the caller sends
 * (POST /api/platform/quality/agreement) or on the store's objects of frames several people
 * labelled (POST /api/quality/iaa). Both compute core/quality/agreement's report, add the per-class
 * figures (core/quality/agreement-by-class) and record the evaluation as an eval operation
 * (`agreement`, `iaa`).
 */

/** Objects one stored-agreement request may read (the benchmark target: 10,000 frames × 3 annotators). */
export const IAA_MAX_OBJECTS = 200_000;

const digest = (annotations: readonly AgreementAnnotation[]) =>
  createHash('sha256').update(JSON.stringify(annotations)).digest('hex');

function agreementOf(annotations: readonly AgreementAnnotation[], iouThr: number) {
  const input = { annotations, iou_thr: iouThr };
  return { ...computeAgreement(input), by_class: agreementByClass(input) };
}

/** Agreement of the annotations as sent, recorded as operation `agreement`. */
export async function agreementOfAnnotations(
  db: Db,
  input: { annotations: AgreementAnnotation[]; iou_thr: number },
  actor: Actor,
) {
  const report = agreementOf(input.annotations, input.iou_thr);
  const op = await recordOperation(db, {
    opType: 'agreement',
    subjectIds: report.annotators.map((a) => a.annotator),
    params: {
      iou_thr: input.iou_thr,
      annotations: input.annotations.length,
      // What was measured, without keeping the whole body: the digest identifies the input.
      input_sha256: digest(input.annotations),
    },
    result: report,
    actor,
  });
  return { operation_id: op.id, ...report };
}

export interface StoredAgreementInput {
  session_id?: string | undefined;
  frame_ids?: string[] | undefined;
  iou_thr: number;
  /** `creator`: the user the audit log records as the object's creator; `job`: the object's job_id. */
  annotator_by: 'creator' | 'job';
  /** Only these annotators (user ids, or job ids with annotator_by job). */
  annotators?: string[] | undefined;
}

/**
 * Agreement over stored objects. An object's annotator is the user who created it — the actor of
 * its `object.created` audit entry (POST /api/frames/{frame_id}/objects writes one in the same
 * transaction as the object) — or, with annotator_by `job`, its labelling job (CreateObjectIn.job_id).
 * Objects without one (machine proposals, imports) are left out and counted. A frame counts when at
 * least two annotators have objects on it; on such a frame an annotator with none found nothing
 * (core/quality/agreement). Classes are compared by name; the current class and box count as the
 * annotator's (a later review edit is not undone).
 */
export async function agreementOfStored(db: Db, input: StoredAgreementInput, actor: Actor) {
  let frameIds: string[];
  if (input.session_id) {
    const session = await db.session.findUnique({ where: { id: input.session_id }, select: { id: true } });
    if (!session) throw new NotFoundError(`no session ${input.session_id}`);
    frameIds = (
      await db.frame.findMany({
        where: { sessionId: session.id },
        select: { id: true },
        orderBy: { index: 'asc' },
      })
    ).map((f) => f.id);
  } else {
    frameIds = [...new Set(input.frame_ids!)];
    const found = new Set(
      (await db.frame.findMany({ where: { id: { in: frameIds } }, select: { id: true } })).map((f) => f.id),
    );
    const missing = frameIds.filter((id) => !found.has(id));
    if (missing.length) throw new NotFoundError(`${missing.length} frame(s) do not exist`, { missing });
  }
  const where = { frameId: { in: frameIds } };
  const count = await db.annoObject.count({ where });
  if (count > IAA_MAX_OBJECTS)
    throw new RefusedError(
      `the frames hold ${count} objects; agreement reads at most ${IAA_MAX_OBJECTS} at once: name fewer frames`,
    );
  const objects = await db.annoObject.findMany({
    where,
    select: { id: true, frameId: true, bbox: true, jobId: true, class: { select: { name: true } } },
    orderBy: { id: 'asc' },
  });
  const annotatorOf = new Map<string, string>();
  if (input.annotator_by === 'job') {
    for (const o of objects) if (o.jobId) annotatorOf.set(o.id, o.jobId);
  } else {
    const ids = objects.map((o) => o.id);
    const created = await db.$queryRaw<Array<{ objectId: string; actorId: string }>>`
      SELECT DISTINCT ON (subject_id) subject_id AS "objectId", actor_id::text AS "actorId"
        FROM audit_log
       WHERE action = 'object.created' AND subject_type = 'object' AND actor_id IS NOT NULL
         AND subject_id = ANY(${ids}::text[])
       ORDER BY subject_id, id`;
    for (const c of created) annotatorOf.set(c.objectId, c.actorId);
  }
  const wanted = input.annotators ? new Set(input.annotators) : null;
  const attributed = objects.filter((o) => {
    const a = annotatorOf.get(o.id);
    return a !== undefined && (!wanted || wanted.has(a));
  });
  // Frames at least two annotators labelled.
  const byFrame = new Map<string, Set<string>>();
  for (const o of attributed) {
    const set = byFrame.get(o.frameId) ?? new Set<string>();
    set.add(annotatorOf.get(o.id)!);
    byFrame.set(o.frameId, set);
  }
  const shared = new Set([...byFrame].filter(([, who]) => who.size >= 2).map(([id]) => id));
  const annotations: AgreementAnnotation[] = attributed
    .filter((o) => shared.has(o.frameId))
    .map((o) => ({
      annotator: annotatorOf.get(o.id)!,
      frame_id: o.frameId,
      class: o.class.name,
      bbox: o.bbox as Box,
    }));
  const annotators = [...new Set(annotations.map((a) => a.annotator))].sort();
  if (annotators.length < 2)
    throw new RefusedError(
      `no frame of the scope holds objects of two annotators (${input.annotator_by === 'job' ? 'by job_id' : 'by creator'}): agreement needs frames several people labelled`,
      { reason: 'single_annotator', annotators: [...new Set(attributed.map((o) => annotatorOf.get(o.id)!))] },
    );
  const names =
    input.annotator_by === 'creator'
      ? new Map(
          (
            await db.user.findMany({ where: { id: { in: annotators } }, select: { id: true, name: true } })
          ).map((u) => [u.id, u.name]),
        )
      : new Map<string, string | null>();
  const report = agreementOf(annotations, input.iou_thr);
  const scope = input.session_id ? { session_id: input.session_id } : { frame_ids: frameIds.length };
  const op = await recordOperation(db, {
    opType: 'iaa',
    subjectIds: [...(input.session_id ? [input.session_id] : []), ...annotators],
    params: {
      ...scope,
      iou_thr: input.iou_thr,
      annotator_by: input.annotator_by,
      annotators: input.annotators ?? null,
      input_sha256: digest(annotations),
    },
    result: report,
    actor,
  });
  return {
    operation_id: op.id,
    scope,
    annotator_by: input.annotator_by,
    annotator_names: Object.fromEntries(annotators.map((a) => [a, names.get(a) ?? null])),
    left_out: {
      objects_without_annotator: objects.length - annotatorOf.size,
      objects_of_other_annotators: objects.filter((o) => annotatorOf.has(o.id)).length - attributed.length,
      frames_with_one_annotator: byFrame.size - shared.size,
    },
    ...report,
  };
}
