import { InputError } from '../errors';
import { applyMap, type CalibrationMap, type CalibrationMethod } from '../quality/calibration';

/**
 * Routing of fused objects by policy (the spec's AgentPolicyIn, whose fields are nullable: null
 * takes the deployment's default, config `autolabel.*`, documented in docs/autolabel.md):
 *
 * - `auto_accept`: conf ≥ auto_accept_conf, the paths agree on the class (entropy ≤
 *   MAX_AUTO_ACCEPT_ENTROPY_BITS) and, with require_agreement, at least two paths ran and every one
 *   of them proposed the object (one path cannot agree with itself);
 * - `review`: conf ≥ review_low, or would-be auto-accepts held back by agreement or entropy;
 * - `annotate`: below review_low — too weak to review, a person draws it.
 *
 * The uncertain subset, the only objects the verifier sees, is what a verdict could still move:
 * conf in [review_low, auto_accept_conf), or held back by agreement or entropy.
 *
 * With an active confidence calibration (POST /api/quality/calibrate/fit, docs/quality-measure.md)
 * every comparison above uses the calibrated confidence (`routingConf`): the class's fitted map, or
 * the global one for a class the fit did not see. The object keeps its raw conf; the route's reason
 * names both.
 */
export const OBJECT_ROUTES = ['auto_accept', 'review', 'annotate'] as const;
export type ObjectRoute = (typeof OBJECT_ROUTES)[number];

export interface AgentPolicy {
  auto_accept_conf: number;
  require_agreement: boolean;
  review_low: number;
  /**
   * Per-class auto-accept thresholds from the active threshold fit (docs/autolabel.md, Threshold
   * fits): a number replaces auto_accept_conf for that class; null means the class never
   * auto-accepts (the fit found no threshold that reaches its target precision). Absent classes
   * use auto_accept_conf.
   */
  class_thresholds?: Record<string, number | null>;
  /** The threshold fit the class thresholds and defaults came from. */
  threshold_fit_id?: string;
  /** The active confidence calibration: routing compares the calibrated conf with the thresholds. */
  calibration?: RoutingCalibration;
}

/**
 * A calibration as routing applies it: the fitted maps by class name (the name a fused object
 * carries), the global map for any other class.
 */
export interface RoutingCalibration {
  calibration_id: string;
  method: CalibrationMethod;
  global: CalibrationMap;
  classes: Record<string, CalibrationMap>;
}

/** The calibrated confidence of an object of `className` (the global map for a class without its own). */
export function calibratedConf(c: RoutingCalibration, className: string | undefined, conf: number): number {
  const map =
    className !== undefined && Object.hasOwn(c.classes, className) ? c.classes[className]! : c.global;
  return applyMap(map, conf);
}

export interface AgentPolicyInput {
  auto_accept_conf?: number | null;
  require_agreement?: boolean | null;
  review_low?: number | null;
}

/** A fused object whose class distribution is wider than this (bits) never auto-accepts. */
export const MAX_AUTO_ACCEPT_ENTROPY_BITS = 0.5;

export function resolvePolicy(input: AgentPolicyInput, defaults: AgentPolicy): AgentPolicy {
  const policy: AgentPolicy = {
    auto_accept_conf: input.auto_accept_conf ?? defaults.auto_accept_conf,
    require_agreement: input.require_agreement ?? defaults.require_agreement,
    review_low: input.review_low ?? defaults.review_low,
    ...(defaults.class_thresholds ? { class_thresholds: defaults.class_thresholds } : {}),
    ...(defaults.threshold_fit_id ? { threshold_fit_id: defaults.threshold_fit_id } : {}),
    ...(defaults.calibration ? { calibration: defaults.calibration } : {}),
  };
  if (policy.review_low > policy.auto_accept_conf) {
    throw new InputError(
      `review_low ${policy.review_low} is above auto_accept_conf ${policy.auto_accept_conf}`,
      [{ field: 'body.review_low', message: 'must not exceed auto_accept_conf' }],
    );
  }
  return policy;
}

export interface Routable {
  conf: number;
  agreement: number;
  entropy: number;
  pathsRan: readonly string[];
  /** The fused class, for a per-class threshold. */
  className?: string;
}

/** The auto-accept threshold for an object's class: its fitted one, else the policy's; null when the class never auto-accepts. */
export function autoAcceptThreshold(p: AgentPolicy, className: string | undefined): number | null {
  const fitted = className === undefined ? undefined : p.class_thresholds?.[className];
  return fitted === undefined ? p.auto_accept_conf : fitted;
}

/** The confidence routing compares with the thresholds: calibrated under the policy's calibration, else the raw conf. */
export function routingConf(o: Pick<Routable, 'conf' | 'className'>, p: AgentPolicy): number {
  return p.calibration ? calibratedConf(p.calibration, o.className, o.conf) : o.conf;
}

/** How a reason names the confidence: `conf 0.850`, or `calibrated conf 0.612 (raw 0.850)`. */
const confText = (o: Routable, p: AgentPolicy, conf: number): string =>
  p.calibration ? `calibrated conf ${conf.toFixed(3)} (raw ${o.conf.toFixed(3)})` : `conf ${conf.toFixed(3)}`;

export interface RoutingDecision {
  route: ObjectRoute;
  /** Why, in words a reviewer reads in provenance. */
  reason: string;
}

const agreementHolds = (o: Routable, p: AgentPolicy): boolean =>
  !p.require_agreement || (o.pathsRan.length >= 2 && o.agreement >= 1);

export function routeObject(o: Routable, p: AgentPolicy): RoutingDecision {
  const threshold = autoAcceptThreshold(p, o.className);
  const bar =
    threshold === p.auto_accept_conf ? `${threshold}` : `${threshold} (${o.className}, threshold fit)`;
  const conf = routingConf(o, p);
  const c = confText(o, p, conf);
  if (threshold === null) {
    if (conf >= p.review_low)
      return {
        route: 'review',
        reason: `class ${o.className} never auto-accepts under the active threshold fit; ${c} ≥ ${p.review_low}`,
      };
  } else if (conf >= threshold) {
    if (!agreementHolds(o, p))
      return {
        route: 'review',
        reason: `${c} ≥ ${bar} but agreement is required and ${o.pathsRan.length < 2 ? 'only one path ran' : `agreement is ${o.agreement.toFixed(2)}`}`,
      };
    if (o.entropy > MAX_AUTO_ACCEPT_ENTROPY_BITS)
      return {
        route: 'review',
        reason: `${c} ≥ ${bar} but the paths disagree on the class (entropy ${o.entropy.toFixed(2)} bits)`,
      };
    return { route: 'auto_accept', reason: `${c} ≥ ${bar}` };
  }
  if (conf >= p.review_low) return { route: 'review', reason: `${c} in [${p.review_low}, ${bar})` };
  return { route: 'annotate', reason: `${c} < ${p.review_low}` };
}

/** Whether the verifier could change this object's route (the only objects it is asked about). */
export function isUncertain(o: Routable, p: AgentPolicy): boolean {
  if (routingConf(o, p) < p.review_low) return false;
  return routeObject(o, p).route !== 'auto_accept';
}

/** How close an object is to its class's auto-accept threshold: the verifier and reviewers take the closest calls first. */
export function distanceToAutoAccept(o: Routable, p: AgentPolicy): number {
  const threshold = autoAcceptThreshold(p, o.className);
  return threshold === null ? 1 : Math.abs(routingConf(o, p) - threshold);
}
