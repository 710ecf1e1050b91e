import type { SafetyFloors } from './safety';
import type { MapDifferenceTest } from './significance';

/**
 * The promotion gate's rules (docs/promotion.md, spec Other lifecycles), judged in this order; the
 * first that fails names the refusal, and every failing one gives a readable reason:
 *
 * 1. `reconstructed_run` — the challenger's run was rebuilt from history (null confidences): there
 *    is nothing to evaluate, so the other rules are not judged;
 * 2. `harness_divergence` — on some scope, for either run, the two COCO harnesses disagree beyond
 *    the configured epsilon: no figure of that evaluation can be trusted;
 * 3. `safety_floor` — a safety class's AP or recall is under its floor;
 * 4. `not_better` — the challenger does not beat the champion's mAP by the significance test.
 *
 * Two more refusals are not rules about the challenger but fail closed: `run_failed` (an inference
 * run the gate needed did not complete) and `champion_changed` (another promotion replaced the
 * champion while this one was evaluated).
 */
export const GATE_RULES = ['reconstructed_run', 'harness_divergence', 'safety_floor', 'not_better'] as const;
export type GateRule = (typeof GATE_RULES)[number] | 'run_failed' | 'champion_changed';

export interface GateReason {
  rule: GateRule;
  reason: string;
}

export interface GateDecision {
  outcome: 'promoted' | 'refused';
  /** The first failing rule; null when promoted. */
  rule: GateRule | null;
  reasons: GateReason[];
}

export interface HarnessCheck {
  /** The scope evaluated (`all`, `lighting=dark` ...). */
  scope: string;
  side: 'challenger' | 'champion';
  within: boolean;
  epsilon: number;
  max_abs_delta: number;
  /** The figures beyond epsilon. */
  diverging: string[];
}

export interface GateEvidence {
  challenger: string;
  champion: string;
  harness: readonly HarnessCheck[];
  safety: SafetyFloors;
  significance: MapDifferenceTest;
}

export const refusal = (rule: GateRule, reason: string): GateDecision => ({
  outcome: 'refused',
  rule,
  reasons: [{ rule, reason }],
});

const fmt = (v: number | null) => (v === null ? 'n/a' : v.toFixed(4));

export function judgeChallenger(e: GateEvidence): GateDecision {
  const reasons: GateReason[] = [];
  const diverging = e.harness.filter((h) => !h.within);
  if (diverging.length)
    reasons.push({
      rule: 'harness_divergence',
      reason: `the two COCO harnesses diverge beyond epsilon ${diverging[0]!.epsilon} on ${diverging
        .map(
          (h) =>
            `${h.side} ${h.scope} (max |Δ| ${h.max_abs_delta.toExponential(2)}: ${h.diverging.slice(0, 5).join(', ')})`,
        )
        .join('; ')}`,
    });
  for (const c of e.safety.failing)
    reasons.push({
      rule: 'safety_floor',
      reason: `safety class ${c.class_name}: ${c.under
        .map((u) =>
          u === 'ap'
            ? `AP50 ${fmt(c.ap50)} under the floor ${c.ap_floor}`
            : `recall ${fmt(c.recall)} (${c.tp}/${c.gold} at conf ≥ ${e.safety.conf_thr}) under the floor ${c.recall_floor}`,
        )
        .join(' and ')}`,
    });
  const s = e.significance;
  if (!s.better)
    reasons.push({
      rule: 'not_better',
      reason:
        s.difference === null
          ? `no class of the gold set could be measured: ${e.challenger} cannot be shown to beat ${e.champion}`
          : `${e.challenger} does not beat ${e.champion}: mAP ${fmt(s.challenger_map)} against ${fmt(s.champion_map)} (difference ${fmt(s.difference)}, one-sided ${Math.round((1 - s.alpha) * 100)}% lower bound ${fmt(s.lower_bound)} over ${s.frames} frames, not above 0)`,
    });
  return reasons.length
    ? { outcome: 'refused', rule: reasons[0]!.rule, reasons }
    : { outcome: 'promoted', rule: null, reasons: [] };
}
