import { DEFAULT_EXPORT_PREDICATE, type SlicePredicate } from '../../core/curation/slice';
import { idCursorArgs, idPage } from '../../core/pagination';
import { ConflictError, InputError, NotFoundError, RefusedError } from '../../core/errors';
import { auditEstimate, auditScore, type AuditItemRecord, type AuditVerdict } from '../../core/evalgov';
import { Prisma, type BlindAudit, type BlindAuditItem } from '../../generated/prisma/client';
import type { Actor } from '../annotations/objects';
import { recordAudit } from '../audit';
import { checkPredicate, sliceQuery } from '../curation/slice-query';
import { findSlice, slicePredicate } from '../curation/slices';
import type { Db } from '../db';
import { classIdsOf } from '../quality/models';
import { recordOperation } from '../quality/operations';
import { ontologyRows } from './scope';

/**
 * Blind audits (docs/quality-evalgov.md): a seeded sample of objects frozen into items whose
 * source and confidence (`hidden`) the reviewers who judge them do not see; verdicts estimate
 * precision with a Wilson interval (core/evalgov/blind-audit).
 */

export const AUDIT_SCORE_OP = 'blind_audit_score';
/** Most items one audit holds. */
export const AUDIT_MAX_ITEMS = 5000;

export interface SeedInput {
  name: string;
  seed: number;
  per_class: number;
  classes?: string[] | undefined;
  slice_id?: string | undefined;
  predicate?: SlicePredicate | undefined;
}

interface Hidden {
  source: string;
  conf: number | null;
  state: string;
  version: number;
  bbox: number[];
}

interface Sampled {
  id: string;
  frame_id: string;
  class_id: number;
  source: string;
  conf: number | null;
  state: string;
  version: number;
  bbox: number[];
}

const auditOut = (a: BlindAudit, counts: { items: number; labeled: number }) => ({
  id: a.id,
  name: a.name,
  seed: a.seed,
  status: a.status,
  spec: a.spec,
  items: counts.items,
  labeled: counts.labeled,
  remaining: counts.items - counts.labeled,
  created_by: a.createdBy,
  created_at: a.createdAt.toISOString(),
});

/**
 * Draws the sample: the objects a predicate selects (a slice's, or one given; trusted states —
 * accepted and auto-accepted — unless it names states), of the named classes when given, up to
 * `per_class` of each class. The order inside a class is md5(seed:object id), so a seed over the
 * same objects always draws the same sample, and no field of the object (source, confidence,
 * state) decides whether it is drawn.
 */
export async function seedAudit(db: Db, input: SeedInput, actor: Actor) {
  if (input.slice_id && input.predicate)
    throw new InputError('name slice_id or predicate, not both', [
      { field: 'body.predicate', message: 'not with slice_id' },
    ]);
  let predicate: SlicePredicate = input.predicate ?? {};
  if (input.slice_id) predicate = slicePredicate(await findSlice(db, input.slice_id));
  else if (input.predicate) await checkPredicate(db, input.predicate, 'body.predicate');
  if (!predicate.states) predicate = { ...predicate, states: DEFAULT_EXPORT_PREDICATE.states! };
  const classIds = input.classes
    ? [...new Set((await classIdsOf(db, input.classes, 'body.classes')).values())]
    : null;
  const q = sliceQuery(predicate);
  const [candidates, sampled] = await Promise.all([
    q.rows<{ class_id: number; n: bigint }>(
      db,
      (param) => `SELECT o.class_id, count(*) AS n FROM ${q.from} WHERE ${q.where}
                  ${classIds ? `AND o.class_id = ANY(${param(classIds)}::int[])` : ''}
                  GROUP BY o.class_id`,
    ),
    q.rows<Sampled>(
      db,
      (param) => `SELECT id, frame_id, class_id, source, conf, state, version, bbox FROM (
                    SELECT o.id::text AS id, o.frame_id::text AS frame_id, o.class_id, o.source, o.conf,
                           o.state, o.version, o.bbox,
                           row_number() OVER (PARTITION BY o.class_id
                             ORDER BY md5(${param(`${input.seed}:`)}::text || o.id::text), o.id) AS rk
                      FROM ${q.from} WHERE ${q.where}
                      ${classIds ? `AND o.class_id = ANY(${param(classIds)}::int[])` : ''}) s
                   WHERE rk <= ${param(input.per_class)}::int
                   ORDER BY class_id, rk`,
    ),
  ]);
  if (!sampled.length) throw new RefusedError('no object matches: the audit would be empty');
  if (sampled.length > AUDIT_MAX_ITEMS)
    throw new RefusedError(
      `the sample holds ${sampled.length} objects; an audit holds at most ${AUDIT_MAX_ITEMS} (lower per_class or name classes)`,
      { sampled: sampled.length, max: AUDIT_MAX_ITEMS },
    );
  const sampledByClass: Record<string, number> = {};
  for (const r of sampled) sampledByClass[String(r.class_id)] = (sampledByClass[String(r.class_id)] ?? 0) + 1;
  const spec = {
    predicate,
    slice_id: input.slice_id ?? null,
    classes: input.classes ?? null,
    per_class: input.per_class,
    candidates_by_class: Object.fromEntries(candidates.map((r) => [String(r.class_id), Number(r.n)])),
    sampled_by_class: sampledByClass,
  };
  const audit = await db.$transaction(async (tx) => {
    const created = await tx.blindAudit.create({
      data: {
        name: input.name,
        seed: input.seed,
        spec: spec as Prisma.InputJsonValue,
        createdBy: actor.userId,
      },
    });
    await tx.blindAuditItem.createMany({
      data: sampled.map((s) => ({
        auditId: created.id,
        objectId: s.id,
        frameId: s.frame_id,
        classId: s.class_id,
        hidden: {
          source: s.source,
          conf: s.conf,
          state: s.state,
          version: s.version,
          bbox: s.bbox,
        } satisfies Hidden as Prisma.InputJsonValue,
      })),
    });
    await recordAudit(tx, {
      actorId: actor.userId,
      action: 'evalgov.blind_audit.seed',
      subjectType: 'blind_audit',
      subjectId: created.id,
      detail: { items: sampled.length, seed: input.seed },
      requestId: actor.requestId,
    });
    return created;
  });
  return auditOut(audit, { items: sampled.length, labeled: 0 });
}

async function findAudit(db: Db | Prisma.TransactionClient, id: string): Promise<BlindAudit> {
  const audit = await db.blindAudit.findUnique({ where: { id } });
  if (!audit) throw new NotFoundError(`no blind audit ${id}`);
  return audit;
}

async function countsOf(db: Db, ids: string[]) {
  const rows = await db.blindAuditItem.groupBy({
    by: ['auditId'],
    where: { auditId: { in: ids } },
    _count: { _all: true, verdict: true },
  });
  return new Map(rows.map((r) => [r.auditId, { items: r._count._all, labeled: r._count.verdict }]));
}

/** Audits newest first, each with how many items it holds and how many are labelled. */
export async function listAudits(
  db: Db,
  query: { status?: string | undefined; limit: number; cursor?: string | undefined },
) {
  const rows = await db.blindAudit.findMany({
    where: query.status ? { status: query.status } : {},
    orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
    ...idCursorArgs(query),
  });
  const { page, next_cursor } = idPage(rows, query.limit);
  const counts = await countsOf(
    db,
    page.map((a) => a.id),
  );
  return {
    items: page.map((a) => auditOut(a, counts.get(a.id) ?? { items: 0, labeled: 0 })),
    next_cursor,
  };
}

const record = (i: BlindAuditItem): AuditItemRecord => ({
  class_id: i.classId,
  source: (i.hidden as unknown as Hidden).source,
  verdict: i.verdict as AuditVerdict | null,
});

/**
 * An audit and its items as reviewers see them: the object, its frame, its class and its box as the
 * store holds it now (with whether it changed or went since it was sampled), and the verdict —
 * never the hidden source and confidence, unless `reveal` (the route lets only admins ask).
 */
export async function getAudit(db: Db, id: string, opts: { reveal: boolean }) {
  const audit = await findAudit(db, id);
  const items = await db.blindAuditItem.findMany({ where: { auditId: id }, orderBy: { objectId: 'asc' } });
  const [live, ontology] = await Promise.all([
    db.annoObject.findMany({
      where: { id: { in: items.map((i) => i.objectId) } },
      select: { id: true, bbox: true, version: true },
    }),
    ontologyRows(db),
  ]);
  const liveBy = new Map(live.map((o) => [o.id, o]));
  const names = new Map(ontology.map((o) => [o.id, o.name]));
  const labeled = items.filter((i) => i.verdict !== null).length;
  return {
    ...auditOut(audit, { items: items.length, labeled }),
    result: audit.result,
    revealed: opts.reveal,
    items: items.map((i) => {
      const o = liveBy.get(i.objectId);
      const hidden = i.hidden as unknown as Hidden;
      return {
        object_id: i.objectId,
        frame_id: i.frameId,
        class_id: i.classId,
        class_name: names.get(i.classId) ?? null,
        bbox: o?.bbox ?? null,
        object_deleted: !o,
        object_changed: o ? o.version !== hidden.version : null,
        crop_url: o ? `/api/objects/${i.objectId}/crop` : null,
        image_url: `/api/frames/${i.frameId}/image`,
        verdict: i.verdict,
        labeled_by: i.labeledBy,
        labeled_at: i.labeledAt?.toISOString() ?? null,
        ...(opts.reveal ? { hidden } : {}),
      };
    }),
  };
}

/** Locks the audit row for the transaction (verdicts and scoring serialise on it); 409 once scored. */
async function lockOpenAudit(tx: Prisma.TransactionClient, id: string): Promise<BlindAudit> {
  await tx.$queryRaw`SELECT id FROM blind_audits WHERE id = ${id}::uuid FOR UPDATE`;
  const audit = await findAudit(tx, id);
  if (audit.status !== 'open')
    throw new ConflictError(`blind audit ${id} is ${audit.status}: its verdicts are final`);
  return audit;
}

/**
 * Records verdicts (all or none): every object must be an item of the audit (404 naming the others);
 * an item already labelled answers 409 naming it unless `overwrite` (a reviewer correcting a slip),
 * and the labeller and time of the latest verdict are kept.
 */
export async function markLabeled(
  db: Db,
  id: string,
  input: { verdicts: Array<{ object_id: string; verdict: AuditVerdict }>; overwrite: boolean },
  actor: Actor,
) {
  const ids = input.verdicts.map((v) => v.object_id);
  const twice = [...new Set(ids.filter((v, i) => ids.indexOf(v) !== i))];
  if (twice.length)
    throw new InputError(`object named twice: ${twice.join(', ')}`, [
      { field: 'body.verdicts', message: 'each object once' },
    ]);
  await db.$transaction(async (tx) => {
    await lockOpenAudit(tx, id);
    const items = await tx.blindAuditItem.findMany({
      where: { auditId: id, objectId: { in: ids } },
      select: { objectId: true, verdict: true },
    });
    const found = new Map(items.map((i) => [i.objectId, i]));
    const missing = ids.filter((o) => !found.has(o));
    if (missing.length)
      throw new NotFoundError(`${missing.length} object(s) are not items of blind audit ${id}`, { missing });
    const labeled = ids.filter((o) => found.get(o)!.verdict !== null);
    if (labeled.length && !input.overwrite)
      throw new ConflictError(
        `${labeled.length} item(s) are already labelled (send overwrite: true to replace their verdicts)`,
        { already_labeled: labeled },
      );
    const now = new Date();
    for (const verdict of ['correct', 'incorrect'] as const) {
      const mine = input.verdicts.filter((v) => v.verdict === verdict).map((v) => v.object_id);
      if (mine.length)
        await tx.blindAuditItem.updateMany({
          where: { auditId: id, objectId: { in: mine } },
          data: { verdict, labeledBy: actor.userId, labeledAt: now },
        });
    }
    await recordAudit(tx, {
      actorId: actor.userId,
      action: 'evalgov.blind_audit.label',
      subjectType: 'blind_audit',
      subjectId: id,
      detail: { items: ids.length, overwritten: labeled.length },
      requestId: actor.requestId,
    });
  });
  return { audit_id: id, labeled_now: ids.length, ...(await estimateAudit(db, id, 0.05)) };
}

/** The current estimate from the verdicts so far (no source), and how many items remain. */
export async function estimateAudit(db: Db, id: string, alpha: number) {
  const audit = await findAudit(db, id);
  const [items, ontology] = await Promise.all([
    db.blindAuditItem.findMany({ where: { auditId: id } }),
    ontologyRows(db),
  ]);
  const names = new Map(ontology.map((o) => [o.id, o.name]));
  const e = auditEstimate(items.map(record), alpha);
  return {
    status: audit.status,
    ...e.overall,
    by_class: e.by_class.map((c) => ({ ...c, class_name: names.get(c.class_id) ?? null })),
  };
}

/**
 * Scores the audit: precision overall, per class and per hidden source, each with its Wilson
 * interval; the audit becomes `scored` (its verdicts final) and the score is recorded as an
 * operation, in one transaction. Items left unlabelled answer 409 unless `partial`.
 */
export async function scoreAudit(
  db: Db,
  id: string,
  input: { alpha: number; partial: boolean },
  actor: Actor,
) {
  const names = new Map((await ontologyRows(db)).map((o) => [o.id, o.name]));
  return db.$transaction(async (tx) => {
    const audit = await lockOpenAudit(tx, id);
    const items = await tx.blindAuditItem.findMany({ where: { auditId: id } });
    const remaining = items.filter((i) => i.verdict === null).length;
    if (remaining === items.length)
      throw new ConflictError(`blind audit ${id} has no verdict yet: nothing to score`);
    if (remaining && !input.partial)
      throw new ConflictError(
        `${remaining} item(s) of blind audit ${id} are not labelled yet (send partial: true to score the labelled ones)`,
        { remaining },
      );
    const s = auditScore(items.map(record), input.alpha);
    const result = {
      ...s.overall,
      by_class: s.by_class.map((c) => ({ ...c, class_name: names.get(c.class_id) ?? null })),
      by_source: s.by_source,
      partial: remaining > 0,
    };
    const op = await recordOperation(tx, {
      opType: AUDIT_SCORE_OP,
      subjectIds: [id],
      params: {
        audit_id: id,
        name: audit.name,
        seed: audit.seed,
        alpha: input.alpha,
        partial: input.partial,
      },
      result,
      actor,
    });
    await tx.blindAudit.update({
      where: { id },
      data: {
        status: 'scored',
        result: { ...result, operation_id: op.id } as unknown as Prisma.InputJsonValue,
      },
    });
    await recordAudit(tx, {
      actorId: actor.userId,
      action: 'evalgov.blind_audit.score',
      subjectType: 'blind_audit',
      subjectId: id,
      detail: { operation_id: op.id, labeled: result.labeled, precision: result.precision },
      requestId: actor.requestId,
    });
    return { audit_id: id, operation_id: op.id, status: 'scored', ...result };
  });
}
