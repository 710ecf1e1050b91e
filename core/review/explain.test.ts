import { routeObject, type AgentPolicy } from '../routing';
import { summariseTrace, thresholdInForce } from './explain';

const configured: AgentPolicy = { auto_accept_conf: 0.8, require_agreement: false, review_low: 0.35 };
const fitted: AgentPolicy = {
  ...configured,
  class_thresholds: { car: 0.6, bus: null },
  threshold_fit_id: 'fit-1',
};

describe('thresholdInForce', () => {
  it('names the configured threshold when no fit is active', () => {
    expect(thresholdInForce(configured, 'car', 0.85, false)).toEqual({
      class_name: 'car',
      value: 0.8,
      source: 'configured',
      basis: 'configured',
      clears: true,
    });
    expect(thresholdInForce(configured, 'car', 0.79, false).clears).toBe(false);
    expect(thresholdInForce(configured, 'car', null, false).clears).toBeNull();
  });

  it("takes a class's fitted threshold, and a never-class clears nothing", () => {
    expect(thresholdInForce(fitted, 'car', 0.65, false)).toMatchObject({
      value: 0.6,
      source: 'fit-1',
      basis: 'class_fit',
      clears: true,
    });
    expect(thresholdInForce(fitted, 'bus', 0.99, false)).toMatchObject({
      value: null,
      source: 'fit-1',
      basis: 'class_fit',
      clears: false,
    });
  });

  it('credits the fit for a class outside it only when the fit set the global threshold', () => {
    expect(thresholdInForce(fitted, 'person', 0.5, false)).toMatchObject({
      value: 0.8,
      source: 'configured',
      basis: 'configured',
    });
    const global = { ...fitted, auto_accept_conf: 0.7, review_low: 0.35 };
    expect(thresholdInForce(global, 'person', 0.75, true)).toMatchObject({
      value: 0.7,
      source: 'fit-1',
      basis: 'global_fit',
      clears: true,
    });
  });

  it('agrees with routing on which objects clear the bar', () => {
    for (const [cls, conf] of [
      ['car', 0.61],
      ['car', 0.59],
      ['bus', 0.99],
      ['person', 0.81],
      ['person', 0.79],
    ] as const) {
      const routed = routeObject(
        { conf, agreement: 1, entropy: 0, pathsRan: ['a', 'b'], className: cls },
        fitted,
      );
      expect(thresholdInForce(fitted, cls, conf, false).clears).toBe(routed.route === 'auto_accept');
    }
  });
});

describe('summariseTrace', () => {
  it('reads the route, critic and verifier of an auto-label trace', () => {
    const s = summariseTrace({
      paths_ran: ['closed_set'],
      route: { state: 'review', reason: 'conf 0.500 in [0.35, 0.8)', demoted_by_critic: false },
      critic: { vetoes: [], ran: ['geometric'], skipped: [{ check: 'temporal', reason: 'first frame' }] },
      verifier: null,
    });
    expect(s).toEqual({
      route: { state: 'review', reason: 'conf 0.500 in [0.35, 0.8)', demoted_by_critic: false },
      critic: { vetoes: [], ran: ['geometric'], skipped: [{ check: 'temporal', reason: 'first frame' }] },
      verifier: null,
    });
  });

  it('answers null for parts a trace does not carry', () => {
    expect(summariseTrace(null)).toEqual({ route: null, critic: null, verifier: null });
    expect(summariseTrace({ consensus: { fusion_run_id: 'x' } })).toEqual({
      route: null,
      critic: null,
      verifier: null,
    });
    expect(summariseTrace({ route: { state: 'review' } }).route).toEqual({
      state: 'review',
      reason: null,
      demoted_by_critic: null,
    });
  });
});
