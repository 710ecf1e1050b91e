import { ATTRIBUTE_COLUMNS, DENSITY_JOIN } from '../../core/odd/attributes';
import { sliceObjectFrom, sliceSql } from '../../core/curation/slice';
import type { Db } from '../db';

/**
 * The frames an ODD read covers and the objects it counts (docs/odd-coverage.md): every frame, or
 * those of `sessionIds`; with `classes`, only frames holding an object of those classes (or their
 * descendants, as slices resolve them) and only those objects counted. Rejected objects are never
 * counted: a reviewer said they are not there.
 */
export interface OddScope {
  sessionIds?: string[];
  classes?: string[];
}

export interface OddSql {
  /** `WITH fa AS (…)`: each frame in scope with its id, session_id and one column per attribute. */
  framesCte: string;
  /** A condition over `o` and `c` selecting the objects counted (on any frame). */
  objectWhere: string;
  /** `objects o JOIN ontology_classes c …`. */
  objectFrom: string;
  /** Places a value after the scope's own parameters and answers its placeholder. */
  param(value: unknown): string;
}

/** Runs one statement that `build` writes over the scope's frames and objects. */
export function oddRows<T>(db: Db, scope: OddScope, build: (sql: OddSql) => string): Promise<T[]> {
  // Only the classes travel as parameters, and every statement places them (in the frames' scope):
  // a parameter no statement reads would be refused by PostgreSQL.
  const objects = sliceSql({ classes: scope.classes }, 1);
  const objectWhere = `o.state <> 'rejected' AND ${objects.where}`;
  const params = [...objects.params];
  const param = (value: unknown) => {
    params.push(value);
    return `$${params.length}`;
  };
  const objectFrom = sliceObjectFrom(objects);
  const frameWhere = [
    scope.sessionIds ? `f.session_id = ANY(${param(scope.sessionIds)}::uuid[])` : null,
    scope.classes ? `EXISTS (SELECT 1 FROM ${objectFrom} WHERE o.frame_id = f.id AND ${objectWhere})` : null,
  ].filter(Boolean);
  const sql = build({
    framesCte: `WITH fa AS MATERIALIZED (
      SELECT f.id, f.session_id, ${ATTRIBUTE_COLUMNS}
        FROM frames f ${DENSITY_JOIN}
       WHERE ${frameWhere.length ? frameWhere.join(' AND ') : 'TRUE'})`,
    objectWhere,
    objectFrom,
    param,
  });
  return db.$queryRawUnsafe<T[]>(sql, ...params);
}
