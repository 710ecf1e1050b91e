import { L1_BY_L0 } from '../../core/ontology';
import { InputError, NotFoundError } from '../../core/errors';
import { LIGHTING_VALUES, sliceFrom, sliceSql, type SlicePredicate } from '../../core/curation/slice';
import type { Prisma } from '../../generated/prisma/client';
import type { Db } from '../db';

type Reader = Db | Prisma.TransactionClient;

/** A slice's predicate compiled once, for the queries that read its objects (`o`, `f`, `c`). */
export interface SliceQuery {
  from: string;
  where: string;
  /**
   * Runs SQL that `build` writes around `from` and `where`; `param` places a value after the
   * predicate's own parameters and answers its placeholder.
   */
  rows<T>(db: Reader, build: (param: (value: unknown) => string) => string): Promise<T[]>;
}

export function sliceQuery(predicate: SlicePredicate): SliceQuery {
  const compiled = sliceSql(predicate, 1);
  return {
    from: sliceFrom(compiled),
    where: compiled.where,
    rows<T>(db: Reader, build: (param: (value: unknown) => string) => string): Promise<T[]> {
      const params = [...compiled.params];
      const sql = build((value) => {
        params.push(value);
        return `$${params.length}`;
      });
      return db.$queryRawUnsafe<T[]>(sql, ...params);
    },
  };
}

const ALL_L1: ReadonlySet<string> = new Set(Object.values(L1_BY_L0).flat());

/**
 * Refuses what a predicate names that does not exist, so a typo does not save a slice that quietly
 * selects nothing: class names outside the ontology, l1 values outside its 13, lighting values
 * other than LIGHTING_VALUES. `field` is where the predicate sits in the request (`body.predicate`).
 */
export async function checkPredicate(db: Reader, predicate: SlicePredicate, field: string): Promise<void> {
  const errors: Array<{ field: string; message: string }> = [];
  const unknown: string[] = [];
  if (predicate.classes) {
    const known = new Set(
      (
        await db.ontologyClass.findMany({
          where: { name: { in: predicate.classes } },
          select: { name: true },
        })
      ).map((c) => c.name),
    );
    predicate.classes.forEach((name, i) => {
      if (known.has(name)) return;
      unknown.push(`class ${JSON.stringify(name)}`);
      errors.push({ field: `${field}.classes.${i}`, message: `no ontology class ${JSON.stringify(name)}` });
    });
  }
  predicate.l1?.forEach((l1, i) => {
    if (ALL_L1.has(l1)) return;
    unknown.push(`l1 ${JSON.stringify(l1)}`);
    errors.push({ field: `${field}.l1.${i}`, message: `not one of ${[...ALL_L1].join(', ')}` });
  });
  const lighting = predicate.context?.lighting;
  if (lighting !== undefined) {
    const values = Array.isArray(lighting) ? lighting : [lighting];
    const bad = values.filter((v) => !(LIGHTING_VALUES as readonly unknown[]).includes(v));
    if (bad.length) {
      unknown.push(`lighting ${bad.map((v) => JSON.stringify(v)).join(', ')}`);
      errors.push({
        field: `${field}.context.lighting`,
        message: `not one of ${LIGHTING_VALUES.join(', ')}`,
      });
    }
  }
  if (errors.length)
    throw new InputError(`the predicate names what does not exist: ${unknown.join('; ')}`, errors);
}

/** Refuses session ids that name no session (a filter with a typo would silently narrow to nothing). */
export async function checkSessions(
  db: Reader,
  ids: readonly string[] | undefined,
  field: string,
): Promise<void> {
  if (!ids?.length) return;
  const found = new Set(
    (await db.session.findMany({ where: { id: { in: [...ids] } }, select: { id: true } })).map((s) => s.id),
  );
  const missing = ids.filter((id) => !found.has(id.toLowerCase()));
  if (missing.length)
    throw new NotFoundError(`no session ${missing.join(', ')}`, { field, missing_session_ids: missing });
}
