import { ODD_VOCABULARY, UNKNOWN, type OddAttribute } from './attributes';
import { BANDIT_PRIOR } from './bandit';
import { betaMean } from './beta';
import { attributeCombinations, cliqueName, type Clique } from './clique';

/**
 * Priority and discovery over clique coverage (docs/odd-coverage.md): pure arithmetic on counts
 * the database has already aggregated.
 */

/** Frames per value of each attribute, over `total` frames in scope. */
export interface Marginals {
  total: number;
  byAttribute: ReadonlyMap<OddAttribute, ReadonlyMap<string, number>>;
}

const shareOf = (m: Marginals, attribute: OddAttribute, value: string) =>
  m.total ? (m.byAttribute.get(attribute)?.get(value) ?? 0) / m.total : 0;

/** Frames a clique would hold if its attributes were independent: N · Π p(value). */
export const expectedFrames = (m: Marginals, clique: Clique): number =>
  clique.reduce((e, p) => e * shareOf(m, p.attribute, p.value), m.total);

export interface CliqueCoverage {
  clique: string;
  parts: Clique;
  frames: number;
  objects: number;
}

/** Frames at which the coverage term is one half (the `target_frames` default of the priority route). */
export const PRIORITY_TARGET_FRAMES = 100;

export interface PriorityEntry {
  rank: number;
  clique: string;
  score: number;
  terms: {
    /** 1 / (1 + frames / target_frames): 1 for an empty clique, ½ at the target. */
    coverage: number;
    /** The bandit's posterior mean success (½ under the prior, for a clique never rewarded). */
    bandit: number;
    /** 1 − the share of frames carrying the clique's rarest value: how rare what it asks for is. */
    rarity: number;
  };
  inputs: {
    frames: number;
    objects: number;
    target_frames: number;
    posterior: { alpha: number; beta: number; observations: number };
    rarest_value: { attribute: OddAttribute; value: string; share: number };
  };
  reason: string;
}

/**
 * score = coverage × bandit × rarity: labels help most where there is little data, where the
 * bandit has seen (or may yet see) recall gains, and for combinations of rare conditions.
 */
export function rankPriority(
  cliques: readonly CliqueCoverage[],
  marginals: Marginals,
  posteriors: ReadonlyMap<string, { alpha: number; beta: number; observations: number }>,
  targetFrames = PRIORITY_TARGET_FRAMES,
): PriorityEntry[] {
  const entries = cliques.map((c) => {
    const posterior = posteriors.get(c.clique) ?? { ...BANDIT_PRIOR, observations: 0 };
    const rarest = c.parts
      .map((p) => ({ ...p, share: shareOf(marginals, p.attribute, p.value) }))
      .reduce((a, b) => (b.share < a.share ? b : a));
    const terms = {
      coverage: 1 / (1 + c.frames / targetFrames),
      bandit: betaMean(posterior.alpha, posterior.beta),
      rarity: 1 - rarest.share,
    };
    const score = terms.coverage * terms.bandit * terms.rarity;
    return {
      rank: 0,
      clique: c.clique,
      score,
      terms,
      inputs: {
        frames: c.frames,
        objects: c.objects,
        target_frames: targetFrames,
        posterior,
        rarest_value: rarest,
      },
      reason:
        `${c.frames} frames (coverage ${terms.coverage.toFixed(3)}) × bandit mean ${terms.bandit.toFixed(3)}` +
        ` (${posterior.observations ? `${posterior.observations} observed rewards` : 'prior: never rewarded'})` +
        ` × rarity ${terms.rarity.toFixed(3)} (${rarest.attribute}=${rarest.value} is ${(100 * rarest.share).toFixed(1)} % of frames)`,
    };
  });
  entries.sort((a, b) => b.score - a.score || a.clique.localeCompare(b.clique));
  return entries.map((e, i) => ({ ...e, rank: i + 1 }));
}

/** Distinct values per attribute that discovery crosses (the most frequent first). */
export const DISCOVER_MAX_VALUES = 50;

export interface Discovery {
  unseen_values: Array<{ attribute: OddAttribute; value: string }>;
  absent: Array<{ clique: string; expected_frames: number }>;
  under_represented: Array<{
    clique: string;
    frames: number;
    share: number;
    expected_frames: number;
    lift: number;
  }>;
  absent_total: number;
  under_represented_total: number;
}

/**
 * Values the vocabulary lists that no frame carries; pairs of seen values (never `unknown`) that no
 * frame combines, most expected first; pairs that some frames combine but under `minShare` of the
 * frames, least represented against independence (lift) first.
 */
export function discover(
  marginals: Marginals,
  attributes: readonly OddAttribute[],
  pairFrames: ReadonlyMap<string, number>,
  opts: { minShare: number; limit: number },
): Discovery {
  const unseen = attributes.flatMap((attribute) =>
    ODD_VOCABULARY[attribute]
      .filter((value) => !marginals.byAttribute.get(attribute)?.get(value))
      .map((value) => ({ attribute, value })),
  );
  const seen = (attribute: OddAttribute) =>
    [...(marginals.byAttribute.get(attribute) ?? new Map<string, number>())]
      .filter(([value, n]) => value !== UNKNOWN && n > 0)
      .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
      .slice(0, DISCOVER_MAX_VALUES)
      .map(([value]) => value);
  const absent: Discovery['absent'] = [];
  const under: Discovery['under_represented'] = [];
  for (const [a, b] of attributeCombinations(attributes, 2) as Array<[OddAttribute, OddAttribute]>) {
    for (const va of seen(a))
      for (const vb of seen(b)) {
        const parts: Clique = [
          { attribute: a, value: va },
          { attribute: b, value: vb },
        ];
        const clique = cliqueName(parts);
        const frames = pairFrames.get(clique) ?? 0;
        const expected = expectedFrames(marginals, parts);
        if (frames === 0) absent.push({ clique, expected_frames: expected });
        else if (frames / marginals.total < opts.minShare)
          under.push({
            clique,
            frames,
            share: frames / marginals.total,
            expected_frames: expected,
            lift: frames / expected,
          });
      }
  }
  absent.sort((x, y) => y.expected_frames - x.expected_frames || x.clique.localeCompare(y.clique));
  under.sort((x, y) => x.lift - y.lift || x.frames - y.frames || x.clique.localeCompare(y.clique));
  return {
    unseen_values: unseen,
    absent: absent.slice(0, opts.limit),
    under_represented: under.slice(0, opts.limit),
    absent_total: absent.length,
    under_represented_total: under.length,
  };
}
