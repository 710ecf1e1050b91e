import {
  ATTRIBUTE_ROWS,
  ATTRIBUTE_SOURCES,
  ODD_ATTRIBUTES,
  type OddAttribute,
} from '../../core/odd/attributes';
import { oddGaps, type OddRequirement } from '../../core/odd/gaps';
import type { Marginals } from '../../core/odd/coverage';
import type { Db } from '../db';
import { oddRows, type OddScope } from './scope';

/** The corpus over ODD attributes (docs/odd-coverage.md): frames, sessions and objects per value. */

interface ValueRow {
  attribute: OddAttribute;
  value: string;
  frames: number;
  sessions: number;
}

/** Frames and sessions per attribute value, and the scope's totals. */
async function valueCounts(db: Db, scope: OddScope) {
  const [rows, [totals]] = await Promise.all([
    oddRows<ValueRow>(
      db,
      scope,
      (q) => `${q.framesCte}
        SELECT a.attribute, a.value, count(*)::int AS frames, count(DISTINCT fa.session_id)::int AS sessions
          FROM fa ${ATTRIBUTE_ROWS} GROUP BY 1, 2`,
    ),
    oddRows<{ frames: number; sessions: number }>(
      db,
      scope,
      (q) =>
        `${q.framesCte} SELECT count(*)::int AS frames, count(DISTINCT session_id)::int AS sessions FROM fa`,
    ),
  ]);
  return { rows, frames: totals?.frames ?? 0, sessions: totals?.sessions ?? 0 };
}

export async function oddMarginals(db: Db, scope: OddScope): Promise<Marginals & { sessions: number }> {
  const { rows, frames, sessions } = await valueCounts(db, scope);
  const byAttribute = new Map<OddAttribute, Map<string, number>>(ODD_ATTRIBUTES.map((a) => [a, new Map()]));
  for (const r of rows) byAttribute.get(r.attribute)!.set(r.value, r.frames);
  return { total: frames, sessions, byAttribute };
}

export async function oddComposition(db: Db, scope: OddScope) {
  const [{ rows, frames, sessions }, objects] = await Promise.all([
    valueCounts(db, scope),
    oddRows<{ attribute: OddAttribute; value: string; l1: string; n: number }>(
      db,
      scope,
      (q) => `${q.framesCte}
        SELECT a.attribute, a.value, c.l1, count(*)::int AS n
          FROM fa ${ATTRIBUTE_ROWS} JOIN ${q.objectFrom} ON o.frame_id = fa.id
         WHERE ${q.objectWhere} GROUP BY 1, 2, 3`,
    ),
  ]);
  const byL1 = new Map<string, Record<string, number>>();
  for (const o of objects) {
    const key = `${o.attribute}=${o.value}`;
    byL1.set(key, { ...byL1.get(key), [o.l1]: o.n });
  }
  const total = (counts: Record<string, number> | undefined) =>
    Object.values(counts ?? {}).reduce((s, n) => s + n, 0);
  const objectsTotal = objects.filter((o) => o.attribute === ODD_ATTRIBUTES[0]).reduce((s, o) => s + o.n, 0);
  return {
    scope: { session_ids: scope.sessionIds ?? null, classes: scope.classes ?? null },
    frames,
    sessions,
    objects: objectsTotal,
    attributes: ODD_ATTRIBUTES.map((attribute) => ({
      attribute,
      source: ATTRIBUTE_SOURCES[attribute],
      values: rows
        .filter((r) => r.attribute === attribute)
        .sort((a, b) => b.frames - a.frames || a.value.localeCompare(b.value))
        .map((r) => {
          const l1 = byL1.get(`${attribute}=${r.value}`);
          return {
            value: r.value,
            frames: r.frames,
            share: frames ? r.frames / frames : 0,
            sessions: r.sessions,
            objects: { total: total(l1), by_l1: l1 ?? {} },
          };
        }),
    })),
  };
}

/** Each requirement of the target against the frames in scope; the gaps first by frames short. */
export async function oddGapReport(db: Db, scope: OddScope, requirements: OddRequirement[]) {
  const marginals = await oddMarginals(db, scope);
  const counts = new Map<string, number>();
  for (const [attribute, values] of marginals.byAttribute)
    for (const [value, n] of values) counts.set(`${attribute}=${value}`, n);
  return {
    scope: { session_ids: scope.sessionIds ?? null, classes: scope.classes ?? null },
    frames: marginals.total,
    ...oddGaps(requirements, counts, marginals.total),
  };
}
