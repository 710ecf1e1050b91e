/**
 * Adam (Kingma & Ba), with bias correction, on float32 parameters. The moments are float32 like
 * the weights, so that the whole optimiser state round-trips through a checkpoint bit for bit and a
 * resumed job takes the very steps an uninterrupted one takes.
 */
export interface AdamOptions {
  learningRate: number;
  beta1: number;
  beta2: number;
  epsilon: number;
}

export const ADAM_DEFAULTS: Omit<AdamOptions, 'learningRate'> = { beta1: 0.9, beta2: 0.999, epsilon: 1e-8 };

export interface AdamState {
  /** Steps taken. */
  step: number;
  /** First moments of every parameter in order, then the second moments. */
  moments: Float32Array;
}

export class Adam {
  private t = 0;
  private readonly m: Float32Array[];
  private readonly v: Float32Array[];

  constructor(
    private readonly sizes: readonly number[],
    private readonly opts: AdamOptions,
  ) {
    this.m = sizes.map((n) => new Float32Array(n));
    this.v = sizes.map((n) => new Float32Array(n));
  }

  private get total(): number {
    return this.sizes.reduce((a, b) => a + b, 0);
  }

  /**
   * One step on `values` (updated in place) from `grads`, parameter by parameter in constructor
   * order, at `learningRate` (a schedule's current rate) or the configured one.
   */
  step(values: readonly Float32Array[], grads: readonly ArrayLike<number>[], learningRate?: number): void {
    const { beta1: b1, beta2: b2, epsilon } = this.opts;
    const lr = learningRate ?? this.opts.learningRate;
    this.t += 1;
    const c1 = 1 - b1 ** this.t;
    const c2 = 1 - b2 ** this.t;
    values.forEach((w, p) => {
      const g = grads[p]!;
      const m = this.m[p]!;
      const v = this.v[p]!;
      for (let j = 0; j < w.length; j++) {
        m[j] = b1 * m[j]! + (1 - b1) * g[j]!;
        v[j] = b2 * v[j]! + (1 - b2) * g[j]! * g[j]!;
        w[j] = w[j]! - (lr * (m[j]! / c1)) / (Math.sqrt(v[j]! / c2) + epsilon);
      }
    });
  }

  state(): AdamState {
    const moments = new Float32Array(2 * this.total);
    let at = 0;
    for (const arr of [...this.m, ...this.v]) {
      moments.set(arr, at);
      at += arr.length;
    }
    return { step: this.t, moments };
  }

  restore(state: AdamState): void {
    if (state.moments.length !== 2 * this.total)
      throw new Error(
        `optimiser state holds ${state.moments.length} moments; these parameters need ${2 * this.total}`,
      );
    let at = 0;
    for (const arr of [...this.m, ...this.v]) {
      arr.set(state.moments.subarray(at, at + arr.length));
      at += arr.length;
    }
    this.t = state.step;
  }
}

/**
 * Cosine decay from `base` to 0 over the job (YOLOX trains on a cosine schedule too): at `progress`
 * (0 at the first step, 1 after the last) the rate is base·(1 + cos πp)/2. A constant rate leaves
 * Adam stepping about its full rate around the optimum to the end; decay lets the weights settle.
 */
export const cosineRate = (base: number, progress: number): number =>
  (base * (1 + Math.cos(Math.PI * Math.min(1, Math.max(0, progress))))) / 2;
