import { autoAcceptThreshold, type AgentPolicy } from '../routing';

/**
 * Pure parts of an object's explanation (GET /api/objects/{object_id}/explain, docs/annotations.md):
 * which auto-accept threshold governs its class and where that figure came from, and the pieces of
 * its provenance's reasoner trace a reviewer reads. Anything the data does not say is null, never a
 * default that would read as a measurement.
 */

/** class_fit: the active fit fitted this class (or found it never reaches the target); global_fit: the class follows the fit's global threshold; configured: the deployment's autolabel.auto_accept_conf. */
export type ThresholdBasis = 'class_fit' | 'global_fit' | 'configured';

export interface ThresholdInForce {
  class_name: string;
  /** null when the active fit says the class never auto-accepts. */
  value: number | null;
  /** The id of the threshold fit the value comes from, or 'configured'. */
  source: string;
  basis: ThresholdBasis;
  /** Whether conf reaches the value; null for an object without a confidence. */
  clears: boolean | null;
}

/**
 * The threshold routing applies to `className` under `policy` (as routingDefaults builds it), by
 * the same lookup routeObject uses. `globalFitted` says whether the policy's auto_accept_conf came
 * from the active fit: a policy alone cannot tell a fitted global threshold from a configured one
 * that happens to equal it.
 */
export function thresholdInForce(
  policy: AgentPolicy,
  className: string,
  conf: number | null,
  globalFitted: boolean,
): ThresholdInForce {
  const fitId = policy.threshold_fit_id ?? null;
  const classFitted =
    fitId !== null &&
    policy.class_thresholds !== undefined &&
    Object.hasOwn(policy.class_thresholds, className);
  const value = classFitted ? autoAcceptThreshold(policy, className) : policy.auto_accept_conf;
  const basis: ThresholdBasis = classFitted
    ? 'class_fit'
    : fitId !== null && globalFitted
      ? 'global_fit'
      : 'configured';
  return {
    class_name: className,
    value,
    source: basis === 'configured' || fitId === null ? 'configured' : fitId,
    basis,
    clears: conf === null ? null : value !== null && conf >= value,
  };
}

export interface TraceSummary {
  route: { state: string | null; reason: string | null; demoted_by_critic: boolean | null } | null;
  critic: { vetoes: unknown[] | null; ran: string[] | null; skipped: unknown[] | null } | null;
  verifier: unknown;
}

const record = (v: unknown): Record<string, unknown> | null =>
  v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
const stringOrNull = (v: unknown): string | null => (typeof v === 'string' ? v : null);
const arrayOrNull = (v: unknown): unknown[] | null => (Array.isArray(v) ? v : null);

/**
 * The route, critic and verifier parts of a provenance's reasoner_trace (activities/autolabel/store.ts
 * writes them). Older rows and consensus rows carry other keys, so each part is null when absent.
 */
export function summariseTrace(trace: unknown): TraceSummary {
  const t = record(trace);
  const route = record(t?.route);
  const critic = record(t?.critic);
  return {
    route: route
      ? {
          state: stringOrNull(route.state),
          reason: stringOrNull(route.reason),
          demoted_by_critic: typeof route.demoted_by_critic === 'boolean' ? route.demoted_by_critic : null,
        }
      : null,
    critic: critic
      ? {
          vetoes: arrayOrNull(critic.vetoes),
          ran: arrayOrNull(critic.ran)?.filter((x): x is string => typeof x === 'string') ?? null,
          skipped: arrayOrNull(critic.skipped),
        }
      : null,
    verifier: t && t.verifier !== undefined ? t.verifier : null,
  };
}
