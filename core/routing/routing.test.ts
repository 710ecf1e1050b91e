import { InputError } from '../errors';
import { isUncertain, resolvePolicy, routeObject, type AgentPolicy } from '.';

const defaults: AgentPolicy = { auto_accept_conf: 0.8, require_agreement: false, review_low: 0.35 };
const obj = (
  conf: number,
  extra: Partial<{ agreement: number; entropy: number; pathsRan: string[] }> = {},
) => ({ conf, agreement: 1, entropy: 0, pathsRan: ['closed_set'], ...extra });

describe('routing', () => {
  it('fills nulls from the defaults and refuses review_low above auto_accept_conf', () => {
    expect(resolvePolicy({ auto_accept_conf: null, review_low: 0.5 }, defaults)).toEqual({
      auto_accept_conf: 0.8,
      require_agreement: false,
      review_low: 0.5,
    });
    expect(() => resolvePolicy({ review_low: 0.9 }, defaults)).toThrow(InputError);
  });

  it('routes by confidence bands', () => {
    expect(routeObject(obj(0.8), defaults).route).toBe('auto_accept');
    expect(routeObject(obj(0.79), defaults).route).toBe('review');
    expect(routeObject(obj(0.35), defaults).route).toBe('review');
    expect(routeObject(obj(0.34), defaults).route).toBe('annotate');
  });

  it('with require_agreement, needs two paths that all proposed it', () => {
    const p = { ...defaults, require_agreement: true };
    expect(routeObject(obj(0.95), p).route).toBe('review');
    expect(routeObject(obj(0.95, { pathsRan: ['closed_set', 'open_vocab'], agreement: 0.5 }), p).route).toBe(
      'review',
    );
    expect(routeObject(obj(0.95, { pathsRan: ['closed_set', 'open_vocab'], agreement: 1 }), p).route).toBe(
      'auto_accept',
    );
  });

  it('holds back a confident object whose class the paths dispute', () => {
    expect(routeObject(obj(0.95, { entropy: 0.9 }), defaults)).toMatchObject({
      route: 'review',
      reason: expect.stringMatching(/disagree/),
    });
  });

  it('counts as uncertain only what a verdict could still move', () => {
    expect(isUncertain(obj(0.9), defaults)).toBe(false);
    expect(isUncertain(obj(0.5), defaults)).toBe(true);
    expect(isUncertain(obj(0.9, { entropy: 1 }), defaults)).toBe(true);
    expect(isUncertain(obj(0.1), defaults)).toBe(false);
  });
});

describe('per-class thresholds', () => {
  const p: AgentPolicy = { ...defaults, class_thresholds: { car: 0.6, bus: null } };

  it('uses a class threshold, never auto-accepts a class fitted as unreachable, and leaves other classes at auto_accept_conf', () => {
    expect(routeObject({ ...obj(0.65), className: 'car' }, p)).toMatchObject({
      route: 'auto_accept',
      reason: expect.stringMatching(/car, threshold fit/),
    });
    expect(routeObject({ ...obj(0.99), className: 'bus' }, p)).toMatchObject({
      route: 'review',
      reason: expect.stringMatching(/never auto-accepts/),
    });
    expect(routeObject({ ...obj(0.2), className: 'bus' }, p).route).toBe('annotate');
    expect(routeObject({ ...obj(0.65), className: 'truck' }, p).route).toBe('review');
    expect(routeObject({ ...obj(0.85), className: 'truck' }, p).route).toBe('auto_accept');
    expect(isUncertain({ ...obj(0.99), className: 'bus' }, p)).toBe(true);
  });

  it('carries the fit through resolvePolicy while the caller overrides the scalar fields', () => {
    const resolved = resolvePolicy({ auto_accept_conf: 0.9 }, { ...p, threshold_fit_id: 'fit-1' });
    expect(resolved).toEqual({
      auto_accept_conf: 0.9,
      require_agreement: false,
      review_low: 0.35,
      class_thresholds: { car: 0.6, bus: null },
      threshold_fit_id: 'fit-1',
    });
  });
});
