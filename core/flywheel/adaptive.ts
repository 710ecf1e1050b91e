import { RefusedError } from '../errors';
import { largestRemainder } from '../odd/bandit';
import { ODD_ATTRIBUTES, type OddAttribute } from '../odd/attributes';

/**
 * The adaptive cycle's allocation (docs/flywheel-adaptive.md): a label budget and a number of fleet
 * samples shared across regressions (slices where a challenger got worse) and ODD gaps (cliques the
 * corpus lacks), safety first.
 *
 * 1. Every safety slice gets `safety_floor` labels before anything else; floors above the label
 *    budget are refused rather than silently shrunk, because a safety floor that is not met is a
 *    promise broken.
 * 2. What is left of the label budget, and all the fleet samples, go to the targets in proportion
 *    to their severity in frame-equivalents: a regression weighs `drop × frames` (the frames' worth
 *    of quality lost), a gap weighs `frames_short` (the frames missing). Integers by largest
 *    remainder, so each budget sums exactly.
 * 3. Ties (equal remainders) go to the more severe target, then by target name: the same input
 *    always gives the same allocation.
 * A safety slice that is neither a regression nor a gap gets its floor as a target of its own
 * (kind `safety`, severity 0); with no regression or gap at all, the remainders are shared equally
 * among the safety slices.
 */

export interface Regression {
  slice: string;
  metric: string;
  /** How much the metric fell (champion − challenger), > 0. */
  drop: number;
  /** Gold frames in the slice. */
  frames: number;
  classes?: string[] | undefined;
  session_ids?: string[] | undefined;
}

export interface OddGap {
  clique: string;
  frames_short: number;
  classes?: string[] | undefined;
  session_ids?: string[] | undefined;
}

export interface AdaptiveRequest {
  regressions: readonly Regression[];
  odd_gaps: readonly OddGap[];
  total_label_budget: number;
  total_fleet_samples: number;
  safety_floor: number;
  safety_slices: readonly string[] | null;
}

export type TargetKind = 'regression' | 'odd_gap' | 'safety';

export interface Allocation {
  /** `regression:<slice>:<metric>`, `odd_gap:<clique>` or `safety:<slice>`: unique in a cycle. */
  target: string;
  kind: TargetKind;
  /** The slice or clique the labels and samples are for. */
  slice: string;
  severity: number;
  /** Of all targets' severity. */
  share: number;
  safety_floor: number;
  /** Labels beyond the floor, by severity. */
  proportional_labels: number;
  labels: number;
  fleet_samples: number;
  classes: string[] | null;
  session_ids: string[] | null;
  reason: string;
}

export interface AllocationResult {
  rule: string;
  total_label_budget: number;
  total_fleet_samples: number;
  safety_labels: number;
  allocations: Allocation[];
}

export const ALLOCATION_RULE =
  'safety first: each safety slice gets safety_floor labels; the remaining labels and all fleet samples are shared by severity (regression: drop × frames; ODD gap: frames_short) with largest-remainder rounding, ties to the more severe target, then by name';

interface Target {
  target: string;
  kind: TargetKind;
  slice: string;
  severity: number;
  detail: string;
  classes: string[] | null;
  session_ids: string[] | null;
}

const round = (x: number) => Math.round(x * 1000) / 1000;

function targetsOf(req: AdaptiveRequest): Target[] {
  const targets: Target[] = [
    ...req.regressions.map((r) => ({
      target: `regression:${r.slice}:${r.metric}`,
      kind: 'regression' as const,
      slice: r.slice,
      severity: r.drop * r.frames,
      detail: `${r.metric} fell by ${round(r.drop)} on ${r.frames} frames`,
      classes: r.classes ?? null,
      session_ids: r.session_ids ?? null,
    })),
    ...req.odd_gaps.map((g) => ({
      target: `odd_gap:${g.clique}`,
      kind: 'odd_gap' as const,
      slice: g.clique,
      severity: g.frames_short,
      detail: `${g.frames_short} frames short`,
      classes: g.classes ?? null,
      session_ids: g.session_ids ?? null,
    })),
  ];
  const covered = new Set(targets.map((t) => t.slice));
  for (const slice of req.safety_slices ?? [])
    if (!covered.has(slice))
      targets.push({
        target: `safety:${slice}`,
        kind: 'safety',
        slice,
        severity: 0,
        detail: 'a safety slice with no regression or gap',
        classes: null,
        session_ids: null,
      });
  // The order is the tie-break of the rounding: most severe first, then by name.
  return targets.sort((a, b) => b.severity - a.severity || a.target.localeCompare(b.target));
}

/** The target of each safety slice that carries its floor: its most severe target (the first in order). */
function floorHolders(targets: readonly Target[], safety: readonly string[]): Set<string> {
  const holders = new Set<string>();
  for (const slice of new Set(safety)) {
    const first = targets.find((t) => t.slice === slice);
    if (first) holders.add(first.target);
  }
  return holders;
}

export function allocateCycle(req: AdaptiveRequest): AllocationResult {
  const safety = [...new Set(req.safety_slices ?? [])];
  const floors = safety.length * req.safety_floor;
  if (floors > req.total_label_budget)
    throw new RefusedError(
      `safety_floor_exceeds_budget: ${safety.length} safety slices × safety_floor ${req.safety_floor} = ${floors} labels, more than total_label_budget ${req.total_label_budget}`,
      { rule: 'safety_floor_exceeds_budget', needed: floors, total_label_budget: req.total_label_budget },
    );
  const targets = targetsOf(req);
  if (!targets.length)
    throw new RefusedError('nothing to allocate to: no regression, no ODD gap and no safety slice', {
      rule: 'no_target',
    });
  const holders = floorHolders(targets, safety);
  const totalSeverity = targets.reduce((s, t) => s + t.severity, 0);
  // Without any severity (safety slices only) every target weighs the same.
  const weights = targets.map((t) => (totalSeverity > 0 ? t.severity : 1));
  const labels = largestRemainder(weights, req.total_label_budget - floors);
  const samples = largestRemainder(weights, req.total_fleet_samples);
  const weightSum = weights.reduce((s, w) => s + w, 0);
  const allocations = targets.map((t, i): Allocation => {
    const floor = holders.has(t.target) ? req.safety_floor : 0;
    const share = weights[i]! / weightSum;
    const proportional = labels[i]!;
    const basis =
      totalSeverity > 0
        ? `severity ${round(t.severity)} (${t.detail}) is ${round(100 * share)} % of ${round(totalSeverity)}`
        : `an equal share of ${targets.length} safety slices`;
    return {
      target: t.target,
      kind: t.kind,
      slice: t.slice,
      severity: round(t.severity),
      share: round(share),
      safety_floor: floor,
      proportional_labels: proportional,
      labels: floor + proportional,
      fleet_samples: samples[i]!,
      classes: t.classes,
      session_ids: t.session_ids,
      reason:
        (floor ? `safety floor ${floor} labels first; then ` : '') +
        `${basis}: ${proportional} of the ${req.total_label_budget - floors} labels left after floors and ${samples[i]} of ${req.total_fleet_samples} fleet samples`,
    };
  });
  return {
    rule: ALLOCATION_RULE,
    total_label_budget: req.total_label_budget,
    total_fleet_samples: req.total_fleet_samples,
    safety_labels: floors,
    allocations,
  };
}

/** Where an allocation's batch can be drawn from: what selection can express, and what it cannot. */
export interface BatchScope {
  classes: string[] | null;
  session_ids: string[] | null;
  /** Frame conditions (attribute=value) that selection cannot filter on; sessions stand in for them. */
  conditions: Array<{ attribute: OddAttribute; value: string }>;
  /** Parts of the slice that no scope expresses, said plainly. */
  not_scoped: string[];
}

const isOddAttribute = (name: string): name is OddAttribute =>
  (ODD_ATTRIBUTES as readonly string[]).includes(name);

/**
 * The scope of an allocation's batch. A slice or clique is `part|part…`: `class=<name>` parts
 * narrow the classes, ODD attribute parts (`weather=rain`) become frame conditions, `all` is the
 * whole corpus, and anything else (a curation slice `slice <name>`, an unknown attribute) is
 * reported as not scoped. Classes and sessions the allocation names itself are kept.
 */
export function batchScope(a: Pick<Allocation, 'slice' | 'classes' | 'session_ids'>): BatchScope {
  const classes = new Set(a.classes ?? []);
  const conditions: BatchScope['conditions'] = [];
  const notScoped: string[] = [];
  if (a.slice !== 'all')
    for (const part of a.slice.split('|')) {
      const at = part.indexOf('=');
      const name = at > 0 ? part.slice(0, at) : '';
      const value = part.slice(at + 1);
      if (name === 'class' && value) classes.add(value);
      else if (isOddAttribute(name) && value) conditions.push({ attribute: name, value });
      else
        notScoped.push(`${part}: not a class or ODD attribute condition, so the batch is not narrowed by it`);
    }
  return {
    classes: classes.size ? [...classes].sort() : null,
    session_ids: a.session_ids,
    conditions,
    not_scoped: notScoped,
  };
}
