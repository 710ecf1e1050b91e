import { ConflictError, InputError, NotFoundError } from '../../core/errors';
import { checkNewClass, isSafetyL1, L1_BY_L0, SAFETY_L1, type L0 } from '../../core/ontology';
import type { Prisma } from '../../generated/prisma/client';
import { recordAudit } from '../audit';
import type { Db } from '../db';
import type { Actor } from './objects';

type Tx = Prisma.TransactionClient;

/** The whole ontology as the API shows it, with its hierarchy, aliases and counts. */
export async function ontologyOut(db: Db) {
  const [classes, aliases] = await Promise.all([
    db.ontologyClass.findMany({ orderBy: { id: 'asc' } }),
    db.ontologyAlias.findMany({ orderBy: { name: 'asc' } }),
  ]);
  const nameOf = new Map(classes.map((c) => [c.id, c.name]));
  const live = classes.filter((c) => !c.retiredAt);
  const l1ByL0: Record<string, string[]> = {};
  for (const c of classes) if (!(l1ByL0[c.l0] ??= []).includes(c.l1)) l1ByL0[c.l0]!.push(c.l1);
  return {
    classes: classes.map((c) => ({
      id: c.id,
      name: c.name,
      l0: c.l0,
      l1: c.l1,
      india: c.india,
      parent_id: c.parentId,
      parent: c.parentId === null ? null : nameOf.get(c.parentId)!,
      sources: c.sources,
      safety: isSafetyL1(c.l1),
      retired: c.retiredAt !== null,
    })),
    aliases: aliases.map((a) => ({ name: a.name, class_id: a.classId, class_name: nameOf.get(a.classId)! })),
    l1_by_l0: l1ByL0,
    safety_l1: SAFETY_L1,
    counts: {
      classes: live.length,
      retired: classes.length - live.length,
      india: live.filter((c) => c.india).length,
      by_l0: Object.fromEntries(
        Object.keys(L1_BY_L0).map((l0) => [l0, live.filter((c) => c.l0 === l0).length]),
      ),
    },
  };
}

async function liveClassByName(tx: Tx, name: string, field: string) {
  const cls = await tx.ontologyClass.findUnique({ where: { name } });
  if (!cls) throw new NotFoundError(`no class ${name}`, { field });
  if (cls.retiredAt) throw new InputError(`class ${name} is retired`, [{ field, message: 'retired class' }]);
  return cls;
}

/** Ontology writes take one advisory lock, so renames and merges never interleave. */
const ONTOLOGY_LOCK = 727_003;
const lock = (tx: Tx) => tx.$executeRaw`SELECT pg_advisory_xact_lock(${ONTOLOGY_LOCK})`;

export async function addClass(
  db: Db,
  input: { name: string; l0: L0; l1: string; india: boolean; parent: string | null },
  actor: Actor,
) {
  return db.$transaction(async (tx) => {
    await lock(tx);
    const existing = await tx.ontologyClass.findMany();
    const aliases = new Set((await tx.ontologyAlias.findMany({ select: { name: true } })).map((a) => a.name));
    const parent = input.parent ? existing.find((c) => c.name === input.parent) : undefined;
    if (input.parent && !parent)
      throw new InputError(`no class ${input.parent}`, [{ field: 'body.parent', message: 'unknown class' }]);
    checkNewClass(
      existing,
      { name: input.name, l0: input.l0, l1: input.l1, parentId: parent?.id ?? null },
      aliases,
    );
    const created = await tx.ontologyClass.create({
      data: {
        name: input.name,
        l0: input.l0,
        l1: input.l1,
        india: input.india,
        parentId: parent?.id ?? null,
        sources: ['platform'],
      },
    });
    await recordAudit(tx, {
      actorId: actor.userId,
      action: 'ontology.class.added',
      subjectType: 'ontology_class',
      subjectId: String(created.id),
      detail: input,
      requestId: actor.requestId,
    });
    return created;
  });
}

/** Renames a class; the old name stays as an alias so old clients and exports still resolve. */
export async function renameClass(db: Db, from: string, to: string, actor: Actor) {
  return db.$transaction(async (tx) => {
    await lock(tx);
    const cls = await liveClassByName(tx, from, 'body.from');
    if (await tx.ontologyClass.findUnique({ where: { name: to } }))
      throw new ConflictError(`class name ${to} is taken; merge the classes instead`);
    const alias = await tx.ontologyAlias.findUnique({ where: { name: to } });
    if (alias && alias.classId !== cls.id) throw new ConflictError(`${to} is a former name of another class`);
    const run = await tx.ontologyRun.create({
      data: {
        kind: 'rename',
        detail: {
          class_id: cls.id,
          from,
          to,
          alias_removed: alias ? { name: alias.name, run_id: alias.runId } : null,
        },
        createdBy: actor.userId,
      },
    });
    if (alias) await tx.ontologyAlias.delete({ where: { name: to } });
    await tx.ontologyClass.update({ where: { id: cls.id }, data: { name: to } });
    await tx.ontologyAlias.create({ data: { name: from, classId: cls.id, runId: run.id } });
    await recordAudit(tx, {
      actorId: actor.userId,
      action: 'ontology.class.renamed',
      subjectType: 'ontology_run',
      subjectId: run.id,
      detail: { class_id: cls.id, from, to },
      requestId: actor.requestId,
    });
    return run;
  });
}

interface MergeChange {
  id: string;
  from_class_id: number;
  version: number;
}

/**
 * Merges classes into one in ONE transaction: every object of a source class moves to the target
 * (version + 1, one audit entry per object), the sources are retired and their names kept as
 * aliases of the target. The run records each object's former class for the revert.
 */
export async function mergeClasses(db: Db, sources: readonly string[], into: string, actor: Actor) {
  if (sources.includes(into))
    throw new InputError('a class cannot be merged into itself', [
      { field: 'body.sources', message: `contains ${into}` },
    ]);
  return db.$transaction(
    async (tx) => {
      await lock(tx);
      const target = await liveClassByName(tx, into, 'body.into');
      const src = [];
      for (const name of new Set(sources)) src.push(await liveClassByName(tx, name, 'body.sources'));
      const other = src.find((s) => s.l0 !== target.l0);
      if (other)
        throw new InputError(
          `${other.name} is ${other.l0}, ${target.name} is ${target.l0}: merge only within one l0`,
          [{ field: 'body.sources', message: 'l0 differs' }],
        );
      const srcIds = src.map((s) => s.id);
      const children = await tx.ontologyClass.findMany({
        where: { parentId: { in: srcIds } },
        select: { id: true, parentId: true },
      });
      const formerAliases = await tx.ontologyAlias.findMany({
        where: { classId: { in: srcIds } },
        select: { name: true, classId: true },
      });
      const detail: MergeDetail = {
        into: { id: target.id, name: target.name },
        sources: src.map((s) => ({ id: s.id, name: s.name })),
        reparented: children.map((c) => ({ id: c.id, parent_id: c.parentId! })),
        repointed_aliases: formerAliases.map((a) => ({ name: a.name, class_id: a.classId })),
      };
      const run = await tx.ontologyRun.create({
        data: { kind: 'merge', detail: detail as unknown as Prisma.InputJsonValue, createdBy: actor.userId },
      });
      const changes = await tx.$queryRaw<MergeChange[]>`
        UPDATE objects o SET class_id = ${target.id}, version = o.version + 1, updated_at = now()
        FROM (SELECT id, class_id FROM objects WHERE class_id = ANY(${srcIds}::int[]) ORDER BY id FOR UPDATE) s
        WHERE o.id = s.id
        RETURNING o.id::text AS id, s.class_id AS from_class_id, o.version`;
      await tx.ontologyRun.update({
        where: { id: run.id },
        data: { changes: changes as unknown as Prisma.InputJsonValue },
      });
      await tx.ontologyClass.updateMany({ where: { id: { in: srcIds } }, data: { retiredAt: new Date() } });
      // Children of a merged class now hang under the target.
      await tx.ontologyClass.updateMany({
        where: { parentId: { in: srcIds } },
        data: { parentId: target.id },
      });
      await tx.ontologyAlias.updateMany({ where: { classId: { in: srcIds } }, data: { classId: target.id } });
      await tx.ontologyAlias.createMany({
        data: src.map((s) => ({ name: s.name, classId: target.id, runId: run.id })),
      });
      await recordAudit(tx, {
        actorId: actor.userId,
        action: 'ontology.classes.merged',
        subjectType: 'ontology_run',
        subjectId: run.id,
        detail: { into: target.name, sources: src.map((s) => s.name), objects: changes.length },
        requestId: actor.requestId,
      });
      await tx.auditLog.createMany({
        data: changes.map((c) => ({
          actorId: actor.userId,
          action: 'object.class.merged',
          subjectType: 'object',
          subjectId: c.id,
          detail: {
            run_id: run.id,
            from_class_id: c.from_class_id,
            to_class_id: target.id,
            version: c.version,
          },
          requestId: actor.requestId,
        })),
      });
      return { ...run, changes };
    },
    { timeout: 120_000 },
  );
}

export async function retireClass(db: Db, name: string, actor: Actor) {
  return db.$transaction(async (tx) => {
    await lock(tx);
    const cls = await liveClassByName(tx, name, 'body.name');
    const updated = await tx.ontologyClass.update({ where: { id: cls.id }, data: { retiredAt: new Date() } });
    await recordAudit(tx, {
      actorId: actor.userId,
      action: 'ontology.class.retired',
      subjectType: 'ontology_class',
      subjectId: String(cls.id),
      detail: { name },
      requestId: actor.requestId,
    });
    return updated;
  });
}

interface MergeDetail {
  into: { id: number; name: string };
  sources: Array<{ id: number; name: string }>;
  /** Children of the sources and former names of the sources, moved to the target by the merge. */
  reparented: Array<{ id: number; parent_id: number }>;
  repointed_aliases: Array<{ name: string; class_id: number }>;
}
interface RenameDetail {
  class_id: number;
  from: string;
  to: string;
  alias_removed: { name: string; run_id: string } | null;
}

/**
 * Reverts a rename or merge run. A merge revert moves each object back to its former class unless
 * the object changed since the run (its version moved on or its class is no longer the target):
 * those are left as they are and listed as `skipped`, so a later human edit is never overwritten.
 */
export async function revertRun(db: Db, runId: string, actor: Actor) {
  return db.$transaction(
    async (tx) => {
      await lock(tx);
      const run = await tx.ontologyRun.findUnique({ where: { id: runId } });
      if (!run) throw new NotFoundError(`no ontology run ${runId}`);
      if (run.revertedAt)
        throw new ConflictError(`run ${runId} was reverted at ${run.revertedAt.toISOString()}`);
      let reverted: string[] = [];
      let skipped: string[] = [];
      if (run.kind === 'rename') {
        const d = run.detail as unknown as RenameDetail;
        if (await tx.ontologyClass.findFirst({ where: { name: d.from, id: { not: d.class_id } } }))
          throw new ConflictError(`${d.from} is taken by another class now`);
        await tx.ontologyAlias.deleteMany({ where: { runId } });
        await tx.ontologyClass.update({ where: { id: d.class_id }, data: { name: d.from } });
        if (d.alias_removed)
          await tx.ontologyAlias.create({
            data: { name: d.alias_removed.name, classId: d.class_id, runId: d.alias_removed.run_id },
          });
      } else {
        const d = run.detail as unknown as MergeDetail;
        const changes = run.changes as unknown as MergeChange[];
        const ids = changes.map((c) => c.id);
        const rows = await tx.$queryRaw<Array<{ id: string }>>`
          UPDATE objects o SET class_id = c.from_class_id, version = o.version + 1, updated_at = now()
          FROM jsonb_to_recordset(${JSON.stringify(changes)}::jsonb) AS c(id uuid, from_class_id int, version int)
          WHERE o.id = c.id AND o.version = c.version AND o.class_id = ${d.into.id}
          RETURNING o.id::text`;
        reverted = rows.map((r) => r.id);
        const done = new Set(reverted);
        skipped = ids.filter((id) => !done.has(id));
        const srcIds = d.sources.map((s) => s.id);
        await tx.ontologyAlias.deleteMany({ where: { runId } });
        await tx.ontologyClass.updateMany({ where: { id: { in: srcIds } }, data: { retiredAt: null } });
        for (const c of d.reparented)
          await tx.ontologyClass.update({ where: { id: c.id }, data: { parentId: c.parent_id } });
        for (const a of d.repointed_aliases)
          await tx.ontologyAlias.updateMany({ where: { name: a.name }, data: { classId: a.class_id } });
        await tx.auditLog.createMany({
          data: reverted.map((id) => ({
            actorId: actor.userId,
            action: 'object.class.merge_reverted',
            subjectType: 'object',
            subjectId: id,
            detail: { run_id: runId },
            requestId: actor.requestId,
          })),
        });
      }
      await tx.ontologyRun.update({
        where: { id: runId },
        data: { revertedAt: new Date(), revertedBy: actor.userId },
      });
      await recordAudit(tx, {
        actorId: actor.userId,
        action: 'ontology.run.reverted',
        subjectType: 'ontology_run',
        subjectId: runId,
        detail: { kind: run.kind, reverted: reverted.length, skipped },
        requestId: actor.requestId,
      });
      return { run_id: runId, kind: run.kind, reverted: reverted.length, skipped };
    },
    { timeout: 120_000 },
  );
}

export const runOut = (
  run: { id: string; kind: string; detail: unknown; createdAt: Date; revertedAt: Date | null },
  objects: number,
) => ({
  run_id: run.id,
  kind: run.kind,
  detail: run.detail,
  objects_rewritten: objects,
  created_at: run.createdAt.toISOString(),
  reverted_at: run.revertedAt?.toISOString() ?? null,
});
