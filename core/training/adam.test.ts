import { Adam, ADAM_DEFAULTS } from './adam';

const quadraticGrad = (w: Float32Array, target: number[]) =>
  Float64Array.from(w, (v, j) => 2 * (v - target[j]!));

describe('Adam', () => {
  it('takes a first step of the learning rate against the gradient’s sign (bias correction)', () => {
    const w = Float32Array.from([1, 1]);
    new Adam([2], { ...ADAM_DEFAULTS, learningRate: 0.1 }).step([w], [[3, -0.001]]);
    expect(w[0]).toBeCloseTo(0.9, 6);
    expect(w[1]).toBeCloseTo(1.1, 4);
  });

  it('minimises a quadratic', () => {
    const w = Float32Array.from([5, -3, 0]);
    const target = [1, 2, -4];
    const adam = new Adam([3], { ...ADAM_DEFAULTS, learningRate: 0.05 });
    for (let i = 0; i < 3000; i++) adam.step([w], [quadraticGrad(w, target)]);
    Array.from(w).forEach((v, j) => expect(v).toBeCloseTo(target[j]!, 3));
  });

  it('resumed from its saved state, takes exactly the steps an uninterrupted run takes', () => {
    const target = [0.3, -0.7, 2];
    const opts = { ...ADAM_DEFAULTS, learningRate: 0.01 };
    const straight = Float32Array.from([1, 1, 1]);
    const a = new Adam([1, 2], opts);
    const run = (adam: Adam, w: Float32Array, steps: number) => {
      for (let i = 0; i < steps; i++) {
        const g = quadraticGrad(w, target);
        adam.step([w.subarray(0, 1), w.subarray(1)], [g.subarray(0, 1), g.subarray(1)]);
      }
    };
    run(a, straight, 20);
    const split = Float32Array.from([1, 1, 1]);
    const b = new Adam([1, 2], opts);
    run(b, split, 8);
    const saved = b.state();
    const c = new Adam([1, 2], opts);
    c.restore({ step: saved.step, moments: saved.moments.slice() });
    run(c, split, 12);
    expect(Array.from(split)).toEqual(Array.from(straight));
    expect(() => c.restore({ step: 1, moments: new Float32Array(4) })).toThrow('holds 4 moments');
  });
});
