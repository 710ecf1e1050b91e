import { ODD_ATTRIBUTES, UNKNOWN, type OddAttribute } from '../../core/odd/attributes';
import { attributeCombinations, cliqueName, parseClique, type Clique } from '../../core/odd/clique';
import {
  discover,
  expectedFrames,
  PRIORITY_TARGET_FRAMES,
  rankPriority,
  type CliqueCoverage,
} from '../../core/odd/coverage';
import type { Db } from '../db';
import { oddMarginals } from './composition';
import { oddRows, type OddScope } from './scope';

/**
 * Clique coverage (docs/odd-coverage.md): frames, sessions and counted objects per combination of
 * 2 or 3 attribute values, aggregated in one pass by GROUPING SETS.
 */

/** Cliques read from the database at most per request, whatever is answered (priority ranks them all). */
export const CLIQUE_MAX_ROWS = 20_000;

export interface CliqueOptions {
  attributes: readonly OddAttribute[];
  sizes: readonly number[];
  includeUnknown: boolean;
  minFrames: number;
  order: 'frames_desc' | 'frames_asc';
  limit: number;
}

type CliqueRow = Record<OddAttribute, string | null> & {
  frames: number;
  sessions: number;
  objects: number;
  total: number;
};

async function cliqueRows(db: Db, scope: OddScope, opts: CliqueOptions) {
  const sets = opts.sizes.flatMap((size) => attributeCombinations(opts.attributes, size));
  if (!sets.length) return { rows: [], total: 0 };
  const rows = await oddRows<CliqueRow>(db, scope, (q) => {
    // The placeholder only when read: PostgreSQL refuses a parameter no statement uses.
    const unknown = opts.includeUnknown ? null : q.param(UNKNOWN);
    const noUnknown =
      unknown === null ? 'TRUE' : ODD_ATTRIBUTES.map((a) => `${a} IS DISTINCT FROM ${unknown}`).join(' AND ');
    // A column outside every grouping set may not be selected: it is null in every row anyway.
    const columns = ODD_ATTRIBUTES.map((a) => (opts.attributes.includes(a) ? a : `NULL::text AS ${a}`)).join(
      ', ',
    );
    return `${q.framesCte},
      fo AS (SELECT fa.*, oc.n AS objects FROM fa
               CROSS JOIN LATERAL (SELECT count(*)::int AS n FROM ${q.objectFrom}
                                    WHERE o.frame_id = fa.id AND ${q.objectWhere}) oc),
      g AS (SELECT ${columns}, count(*)::int AS frames,
                   count(DISTINCT session_id)::int AS sessions, sum(objects)::int AS objects
              FROM fo GROUP BY GROUPING SETS (${sets.map((s) => `(${s.join(', ')})`).join(', ')})
            HAVING count(*) >= ${q.param(opts.minFrames)})
      SELECT g.*, count(*) OVER ()::int AS total FROM g WHERE ${noUnknown}
       ORDER BY frames ${opts.order === 'frames_asc' ? 'ASC' : 'DESC'}, ${ODD_ATTRIBUTES.map((a) => `${a} NULLS FIRST`).join(', ')}
       LIMIT ${q.param(Math.min(opts.limit, CLIQUE_MAX_ROWS))}`;
  });
  return { rows, total: rows[0]?.total ?? 0 };
}

/** A grouped row's clique: the attributes it was grouped by are the ones not null. */
const partsOf = (row: CliqueRow): Clique =>
  ODD_ATTRIBUTES.filter((a) => row[a] !== null).map((attribute) => ({ attribute, value: row[attribute]! }));

export async function cliqueCoverage(db: Db, scope: OddScope, opts: CliqueOptions) {
  const [{ rows, total }, marginals] = await Promise.all([
    cliqueRows(db, scope, opts),
    oddMarginals(db, scope),
  ]);
  return {
    scope: { session_ids: scope.sessionIds ?? null, classes: scope.classes ?? null },
    frames: marginals.total,
    attributes: opts.attributes,
    sizes: opts.sizes,
    total,
    truncated: total > rows.length,
    cliques: rows.map((row) => {
      const parts = partsOf(row);
      const expected = expectedFrames(marginals, parts);
      return {
        clique: cliqueName(parts),
        parts: Object.fromEntries(parts.map((p) => [p.attribute, p.value])),
        size: parts.length,
        frames: row.frames,
        share: marginals.total ? row.frames / marginals.total : 0,
        sessions: row.sessions,
        objects: row.objects,
        expected_frames: expected,
        lift: expected ? row.frames / expected : null,
      };
    }),
  };
}

/** Every clique of the sizes in scope (at most CLIQUE_MAX_ROWS), as the pure code takes them. */
async function allCliques(db: Db, scope: OddScope, sizes: readonly number[], includeUnknown: boolean) {
  const { rows, total } = await cliqueRows(db, scope, {
    attributes: ODD_ATTRIBUTES,
    sizes,
    includeUnknown,
    minFrames: 1,
    order: 'frames_desc',
    limit: CLIQUE_MAX_ROWS,
  });
  const cliques: CliqueCoverage[] = rows.map((row) => {
    const parts = partsOf(row);
    return { clique: cliqueName(parts), parts, frames: row.frames, objects: row.objects };
  });
  return { cliques, truncated: total > rows.length };
}

export interface Posterior {
  alpha: number;
  beta: number;
  observations: number;
}

export async function armPosteriors(db: Db, cliques?: readonly string[]): Promise<Map<string, Posterior>> {
  const arms = await db.oddCliqueArm.findMany({
    where: cliques ? { clique: { in: [...cliques] } } : undefined,
    select: { clique: true, alpha: true, beta: true, observations: true },
  });
  return new Map(arms.map((a) => [a.clique, { alpha: a.alpha, beta: a.beta, observations: a.observations }]));
}

/**
 * Cliques ranked by where labelling helps most: the corpus's cliques of `sizes` (never with an
 * `unknown` value: nobody can collect "unknown weather") and every clique the bandit has an arm
 * for, present in the data or not.
 */
export async function cliquePriority(
  db: Db,
  scope: OddScope,
  opts: { sizes: readonly number[]; targetFrames?: number; limit: number },
) {
  const [{ cliques, truncated }, marginals, posteriors] = await Promise.all([
    allCliques(db, scope, opts.sizes, false),
    oddMarginals(db, scope),
    armPosteriors(db),
  ]);
  const present = new Set(cliques.map((c) => c.clique));
  const armOnly = [...posteriors.keys()]
    .filter((name) => !present.has(name))
    .map((name): CliqueCoverage => ({
      clique: name,
      parts: parseClique(name, 'clique'),
      frames: 0,
      objects: 0,
    }));
  const ranked = rankPriority([...cliques, ...armOnly], marginals, posteriors, opts.targetFrames);
  return {
    scope: { session_ids: scope.sessionIds ?? null, classes: scope.classes ?? null },
    frames: marginals.total,
    formula: 'score = coverage × bandit × rarity; coverage = 1 / (1 + frames / target_frames)',
    target_frames: opts.targetFrames ?? PRIORITY_TARGET_FRAMES,
    candidates: ranked.length,
    truncated,
    priority: ranked.slice(0, opts.limit),
  };
}

/** The highest-priority cliques, for a selection that names none. */
export async function priorityCandidates(db: Db, scope: OddScope, count: number): Promise<string[]> {
  const { priority } = await cliquePriority(db, scope, { sizes: [2], limit: count });
  return priority.map((p) => p.clique);
}

export async function oddDiscover(
  db: Db,
  scope: OddScope,
  opts: { attributes: readonly OddAttribute[]; minShare: number; limit: number },
) {
  const [{ rows }, marginals] = await Promise.all([
    cliqueRows(db, scope, {
      attributes: opts.attributes,
      sizes: [2],
      includeUnknown: false,
      minFrames: 1,
      order: 'frames_desc',
      limit: CLIQUE_MAX_ROWS,
    }),
    oddMarginals(db, scope),
  ]);
  const pairFrames = new Map(rows.map((row) => [cliqueName(partsOf(row)), row.frames]));
  return {
    scope: { session_ids: scope.sessionIds ?? null, classes: scope.classes ?? null },
    frames: marginals.total,
    min_share: opts.minShare,
    ...discover(marginals, opts.attributes, pairFrames, opts),
  };
}
