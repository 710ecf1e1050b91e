/**
 * The cost gate (docs/billing.md): a job's cost is its GPU hours × the hourly price; it is allowed
 * when that cost is within the per-job cap and the spend so far plus that cost is within the
 * window cap. A cap that is null is no cap. Pure: the caller resolves caps and spend first.
 */

export interface CostGateInput {
  gpu_hours: number;
  hourly_usd: number;
  per_job_cap_usd: number | null;
  window_cap_usd: number | null;
  spent_usd: number;
}

export interface CapCheck {
  cap_usd: number | null;
  /** What is held against the cap: the job's cost, or the spend so far plus it. */
  amount_usd: number;
  /** cap − amount; negative when over; null without a cap. */
  headroom_usd: number | null;
  over: boolean;
}

export interface CostGateVerdict {
  decision: 'allow' | 'refuse';
  gpu_hours: number;
  hourly_usd: number;
  cost_usd: number;
  spent_usd: number;
  per_job: CapCheck;
  window: CapCheck;
  /** One sentence per cap that refuses, with its numbers; empty when allowed. */
  reasons: string[];
}

/** Money is kept to a millionth of a dollar, as cloud session costs are, so a short job is not free. */
export const roundUsd = (usd: number): number => Math.round(usd * 1e6) / 1e6;

function check(cap: number | null, amount: number): CapCheck {
  const amount_usd = roundUsd(amount);
  if (cap === null) return { cap_usd: null, amount_usd, headroom_usd: null, over: false };
  return { cap_usd: cap, amount_usd, headroom_usd: roundUsd(cap - amount_usd), over: amount_usd > cap };
}

const usd = (n: number) => `${n} USD`;

export function costGate(input: CostGateInput): CostGateVerdict {
  const cost = roundUsd(input.gpu_hours * input.hourly_usd);
  const spent = roundUsd(input.spent_usd);
  const perJob = check(input.per_job_cap_usd, cost);
  const window = check(input.window_cap_usd, spent + cost);
  const reasons: string[] = [];
  if (perJob.over)
    reasons.push(
      `the job would cost ${usd(cost)} (${input.gpu_hours} GPU hours × ${usd(input.hourly_usd)} per hour), over the per-job cap of ${usd(perJob.cap_usd as number)}`,
    );
  if (window.over)
    reasons.push(
      `${usd(spent)} spent in the window plus ${usd(cost)} is ${usd(window.amount_usd)}, over the window cap of ${usd(window.cap_usd as number)}`,
    );
  return {
    decision: reasons.length ? 'refuse' : 'allow',
    gpu_hours: input.gpu_hours,
    hourly_usd: input.hourly_usd,
    cost_usd: cost,
    spent_usd: spent,
    per_job: perJob,
    window,
    reasons,
  };
}
