import { RefusedError } from '../../core/errors';
import type { OddGap } from '../../core/flywheel/adaptive';
import { gateRegressions, type GateReading } from '../../core/flywheel/gate-directed';
import { ODD_ATTRIBUTES } from '../../core/odd/attributes';
import type { Db } from '../db';
import { oddDiscover } from '../odd/cliques';
import { classNames } from '../registry/evaluation';

/**
 * The platform's own evidence for an automatic cycle (docs/flywheel-adaptive.md): regressions from
 * the latest gate decision's per-slice comparison (activities/registry/gate.ts records it in
 * `promotions.report.slices`), ODD gaps from ODD discovery (absent and under-represented pairs).
 */

export interface EvidenceOptions extends GateReading {
  /** Pairs under this share of the frames are gaps. */
  min_share: number;
  /** At most this many gaps of each kind. */
  max_gaps: number;
}

async function latestGateRegressions(db: Db, opts: EvidenceOptions) {
  const decision = await db.promotion.findFirst({
    where: { outcome: { in: ['promoted', 'refused'] } },
    orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
  });
  if (!decision) return { promotion: null, regressions: [] };
  return {
    promotion: decision.id,
    regressions: gateRegressions(decision.report, await classNames(db), opts),
  };
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
  const [gate, odd] = await Promise.all([latestGateRegressions(db, opts), oddGaps(db, opts)]);
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
