import { z } from 'zod';
import { RefusedError } from '../../core/errors';
import type { OddGap, Regression } from '../../core/flywheel/adaptive';
import { ODD_ATTRIBUTES } from '../../core/odd/attributes';
import type { Db } from '../db';
import { oddDiscover } from '../odd/cliques';

/**
 * The platform's own evidence for an automatic cycle (docs/flywheel-adaptive.md): regressions from
 * the latest gate decision's per-slice comparison (activities/registry/gate.ts records it in
 * `promotions.report.slices`), ODD gaps from ODD discovery (absent and under-represented pairs).
 */

export interface EvidenceOptions {
  /** The slice figure a regression is read on (map, recall …). */
  metric: 'map' | 'ap50' | 'ap75' | 'ar100' | 'precision' | 'recall';
  /** A fall smaller than this is noise, not a regression. */
  min_drop: number;
  /** Pairs under this share of the frames are gaps. */
  min_share: number;
  /** At most this many gaps of each kind. */
  max_gaps: number;
}

const figure = z.number().nullable().optional();
/** The part of a gate report this reads; anything else in it is ignored. */
const GateReport = z.object({
  slices: z.array(
    z.object({
      name: z.string(),
      frames: z.number(),
      delta: z.record(z.string(), figure),
      classes: z.array(z.object({ class_id: z.number(), gold: z.number(), delta_ap: figure })).default([]),
    }),
  ),
});

async function gateRegressions(db: Db, opts: EvidenceOptions) {
  const decision = await db.promotion.findFirst({
    where: { outcome: { in: ['promoted', 'refused'] } },
    orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
  });
  const report = decision ? GateReport.safeParse(decision.report) : null;
  if (!decision || !report?.success) return { promotion: decision?.id ?? null, regressions: [] };
  const names = new Map(
    (await db.ontologyClass.findMany({ select: { id: true, name: true } })).map((c) => [c.id, c.name]),
  );
  const regressions: Regression[] = [];
  for (const s of report.data.slices) {
    const delta = s.delta[opts.metric];
    if (typeof delta === 'number' && -delta >= opts.min_drop && s.frames > 0)
      regressions.push({ slice: s.name, metric: opts.metric, drop: -delta, frames: s.frames });
    // Per-class AP of the whole gold set: a class that got worse is a slice selection can scope.
    if (s.name !== 'all') continue;
    for (const c of s.classes) {
      const name = names.get(c.class_id);
      if (name && typeof c.delta_ap === 'number' && -c.delta_ap >= opts.min_drop && c.gold > 0)
        regressions.push({ slice: `class=${name}`, metric: 'ap', drop: -c.delta_ap, frames: c.gold });
    }
  }
  return { promotion: decision.id, regressions };
}

async function oddGaps(db: Db, opts: EvidenceOptions) {
  const found = await oddDiscover(
    db,
    {},
    {
      attributes: [...ODD_ATTRIBUTES],
      minShare: opts.min_share,
      limit: opts.max_gaps,
    },
  );
  const gaps: OddGap[] = [
    ...found.absent.map((a) => ({
      clique: a.clique,
      frames_short: Math.max(1, Math.ceil(a.expected_frames)),
    })),
    ...found.under_represented.map((u) => ({
      clique: u.clique,
      frames_short: Math.max(1, Math.ceil(opts.min_share * found.frames - u.frames)),
    })),
  ];
  return { frames: found.frames, gaps };
}

/** Regressions and gaps, with where they came from; none of either is a refusal by name. */
export async function gatherEvidence(db: Db, opts: EvidenceOptions) {
  const [gate, odd] = await Promise.all([gateRegressions(db, opts), oddGaps(db, opts)]);
  const evidence = {
    promotion_id: gate.promotion,
    metric: opts.metric,
    min_drop: opts.min_drop,
    odd: {
      frames: odd.frames,
      min_share: opts.min_share,
      source: 'GET /api/odd/discover (absent and under-represented pairs)',
    },
    regressions: gate.regressions.length,
    odd_gaps: odd.gaps.length,
  };
  if (!gate.regressions.length && !odd.gaps.length)
    throw new RefusedError(
      `no_evidence: ${gate.promotion ? `the latest gate decision ${gate.promotion} shows no slice whose ${opts.metric} fell by ${opts.min_drop} or more` : 'no gate decision with a per-slice comparison is recorded'}, and ODD discovery finds no absent or under-represented pair`,
      { rule: 'no_evidence', ...evidence },
    );
  return { regressions: gate.regressions, odd_gaps: odd.gaps, evidence };
}
