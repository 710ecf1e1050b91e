import { NotFoundError, RefusedError } from '../../core/errors';
import { MACHINE_SOURCE_SPELLINGS } from '../../core/objects/sources';
import { MIN_CONTROL_SAMPLE } from '../../core/control';
import { classPrecision, drawAuditSample } from '../../core/quality/precision-audit';
import type { Prisma } from '../../generated/prisma/client';
import type { Actor } from '../annotations/objects';
import { recordAudit } from '../audit';
import { CONTROL_CANDIDATE_SELECT, controlSampleRow } from '../govern/control-rows';
import type { Db } from '../db';
import { recordOperation } from './operations';

/**
 * The per-class precision audit in the store (docs/quality-measure.md): a seeded sample of each
 * class's auto-accepted machine objects becomes control samples — the verdicts come through
 * POST /api/govern/control/{sample_id}/verdict like any control's — and each class's precision is
 * reported once MIN_CONTROL_SAMPLE of its sampled objects have a verdict.
 *
 * An audit is named by its key (seed, per-class size, scope, classes). The first request draws the
 * sample and keeps it in the `precision_audit` eval operation; a later request with the same key
 * reads that sample back (objects demoted by a wrong verdict are no longer auto-accepted, so a
 * fresh draw would not find them) and reports the verdicts so far. Nothing is controlled twice: an
 * object that is a control already (the 2% control sample, another audit) keeps its control and
 * its verdict counts.
 */

/** Auto-accepted candidates one draw may read; a larger corpus is audited per session or per class. */
export const AUDIT_MAX_CANDIDATES = 500_000;

export interface AuditInput {
  seed: number;
  per_class: number;
  session_id?: string | null | undefined;
  classes?: string[] | null | undefined;
}

interface StoredSample {
  classes: Array<{ class_name: string; candidates: number; object_ids: string[] }>;
}

export const auditKeyOf = (input: AuditInput): string =>
  [
    'precision-audit',
    input.seed,
    input.per_class,
    input.session_id ?? 'corpus',
    input.classes?.length ? [...new Set(input.classes)].sort().join('|') : 'all',
  ].join(':');

async function drawSample(db: Db, input: AuditInput): Promise<StoredSample> {
  const where: Prisma.AnnoObjectWhereInput = {
    state: 'auto_accept',
    source: { in: [...MACHINE_SOURCE_SPELLINGS] },
    ...(input.session_id ? { frame: { sessionId: input.session_id } } : {}),
    ...(input.classes?.length ? { class: { name: { in: input.classes } } } : {}),
  };
  const count = await db.annoObject.count({ where });
  if (count > AUDIT_MAX_CANDIDATES)
    throw new RefusedError(
      `${count} auto-accepted objects in scope; an audit draws from at most ${AUDIT_MAX_CANDIDATES}: name a session or classes`,
    );
  const candidates = await db.annoObject.findMany({
    where,
    select: { id: true, idemKey: true, class: { select: { name: true } } },
  });
  const perClassCount = new Map<string, number>();
  for (const c of candidates) perClassCount.set(c.class.name, (perClassCount.get(c.class.name) ?? 0) + 1);
  const drawn = drawAuditSample(
    candidates.map((c) => ({ object_id: c.id, key: c.idemKey ?? c.id, class_name: c.class.name })),
    input.seed,
    input.per_class,
  );
  return {
    classes: [...drawn.entries()].map(([class_name, list]) => ({
      class_name,
      candidates: perClassCount.get(class_name) ?? 0,
      object_ids: list.map((c) => c.object_id),
    })),
  };
}

export async function precisionAudit(db: Db, input: AuditInput, actor: Actor) {
  if (input.session_id) {
    const s = await db.session.findUnique({ where: { id: input.session_id }, select: { id: true } });
    if (!s) throw new NotFoundError(`no session ${input.session_id}`);
  }
  if (input.classes?.length) {
    const known = new Set(
      (
        await db.ontologyClass.findMany({ where: { name: { in: input.classes } }, select: { name: true } })
      ).map((c) => c.name),
    );
    const unknown = input.classes.filter((c) => !known.has(c));
    if (unknown.length)
      throw new NotFoundError(`no ontology class ${unknown.map((c) => JSON.stringify(c)).join(', ')}`, {
        unknown_classes: unknown,
      });
  }
  const key = auditKeyOf(input);
  const previous = await db.evalOperation.findFirst({
    where: { opType: 'precision_audit', subjectIds: { has: key } },
    orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
  });
  const sample = previous
    ? ((previous.result as unknown as { sample?: StoredSample }).sample ?? { classes: [] })
    : await drawSample(db, input);
  const sampled = sample.classes.flatMap((c) => c.object_ids);
  const objects = await db.annoObject.findMany({
    where: { id: { in: sampled } },
    select: CONTROL_CANDIDATE_SELECT,
  });
  return db.$transaction(async (tx) => {
    // The drawn objects still here become controls, unless they are controls already.
    const { count: created } = await tx.controlSample.createMany({
      data: objects.map((o) => controlSampleRow(o, input.seed, `precision audit ${key}`)),
      skipDuplicates: true,
    });
    const controls = new Map(
      (
        await tx.controlSample.findMany({
          where: { objectId: { in: sampled } },
          select: { id: true, objectId: true, verdict: true },
        })
      ).map((c) => [c.objectId, c]),
    );
    const classes = sample.classes.map((c) => {
      const mine = c.object_ids.map((id) => controls.get(id)).filter((x) => x !== undefined);
      const figure = classPrecision(mine.map((m) => m.verdict));
      return {
        class_name: c.class_name,
        candidates: c.candidates,
        sampled: c.object_ids.length,
        /** Sampled objects deleted since the draw (an auto-label re-run replaces machine objects). */
        gone: c.object_ids.length - mine.length,
        ...figure,
        awaiting: mine.filter((m) => m.verdict === null).map((m) => m.id),
      };
    });
    const overall = classPrecision(
      sampled.map((id) => controls.get(id)).flatMap((c) => (c ? [c.verdict] : [])),
    );
    const result = {
      audit_key: key,
      seed: input.seed,
      per_class: input.per_class,
      session_id: input.session_id ?? null,
      classes_asked: input.classes ?? null,
      drawn_now: !previous,
      controls_created: created,
      min_sample: MIN_CONTROL_SAMPLE,
      smoothing: 'laplace',
      overall,
      classes: classes.map(({ awaiting, ...c }) => ({ ...c, awaiting: awaiting.length })),
      sample,
    };
    const op = await recordOperation(tx, {
      opType: 'precision_audit',
      subjectIds: [key, ...(input.session_id ? [input.session_id] : [])],
      params: {
        seed: input.seed,
        per_class: input.per_class,
        session_id: input.session_id ?? null,
        classes: input.classes ?? null,
      },
      result,
      actor,
    });
    if (created > 0)
      await recordAudit(tx, {
        actorId: actor.userId,
        action: 'quality.audit.sampled',
        subjectType: 'eval_operation',
        subjectId: op.id,
        detail: { audit_key: key, controls_created: created },
        requestId: actor.requestId,
      });
    const { sample: _kept, ...shown } = result;
    return {
      operation_id: op.id,
      ...shown,
      classes: classes.map((c) => ({
        ...c,
        awaiting_sample_ids: c.awaiting.slice(0, 200),
        awaiting: c.awaiting.length,
      })),
      verdict_route: '/api/govern/control/{sample_id}/verdict',
    };
  });
}
