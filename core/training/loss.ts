/**
 * The head's losses and their gradients. Each level of a YOLOX head ends in two 1×1 convolutions
 * followed by a sigmoid: class scores from the class branch's features, objectness from the
 * regression branch's. A 1×1 convolution at one anchor is a dot product with the anchor's feature
 * vector, so a training sample is one anchor's two feature vectors and its target, and the losses
 * are YOLOX's own: binary cross-entropy over every class on positive anchors (one-hot target) and
 * binary cross-entropy of objectness on positives (1) and negatives (0).
 */
export interface HeadLevel {
  /** classes × channels */
  clsWeight: Float32Array;
  clsBias: Float32Array;
  /** channels */
  objWeight: Float32Array;
  /** one value */
  objBias: Float32Array;
}

export type HeadGradient = { [K in keyof HeadLevel]: Float64Array };

export interface HeadsTrained {
  cls: boolean;
  obj: boolean;
}

/** Anchor samples, packed: sample i's features are channels [i·C, (i+1)·C) of each array. */
export interface Samples {
  channels: number;
  count: number;
  level: Uint8Array;
  /** The class of a positive; -1 for a negative, which teaches objectness only. */
  target: Int16Array;
  clsFeatures: Float32Array;
  objFeatures: Float32Array;
}

/** Binary cross-entropy of sigmoid(z) against t, stable for any logit. */
export const bceWithLogits = (z: number, t: number): number =>
  Math.max(z, 0) - z * t + Math.log1p(Math.exp(-Math.abs(z)));

export const sigmoid = (z: number): number => 1 / (1 + Math.exp(-z));

export const zeroGradient = (level: HeadLevel): HeadGradient => ({
  clsWeight: new Float64Array(level.clsWeight.length),
  clsBias: new Float64Array(level.clsBias.length),
  objWeight: new Float64Array(level.objWeight.length),
  objBias: new Float64Array(level.objBias.length),
});

/** w·f + b for row `row` of a (rows × C) weight and the features at `offset`. */
function logit(
  weight: Float32Array,
  bias: Float32Array,
  row: number,
  f: Float32Array,
  offset: number,
  c: number,
): number {
  let z = bias[row]!;
  const w = row * c;
  for (let j = 0; j < c; j++) z += weight[w + j]! * f[offset + j]!;
  return z;
}

function accumulate(
  g: Float64Array,
  gb: Float64Array,
  row: number,
  f: Float32Array,
  offset: number,
  c: number,
  d: number,
): void {
  gb[row] = gb[row]! + d;
  const w = row * c;
  for (let j = 0; j < c; j++) g[w + j] = g[w + j]! + d * f[offset + j]!;
}

/**
 * Sample i's loss under `levels`; with `grads`, adds `scale` × its gradient there. Class loss only
 * on positives, summed over the classes (YOLOX sums, then averages over samples); objectness loss
 * on every sample.
 */
export function sampleLoss(
  levels: readonly HeadLevel[],
  samples: Samples,
  i: number,
  heads: HeadsTrained,
  grads?: readonly HeadGradient[],
  scale = 1,
): number {
  const c = samples.channels;
  const at = i * c;
  const l = samples.level[i]!;
  const p = levels[l]!;
  const g = grads?.[l];
  const target = samples.target[i]!;
  let loss = 0;
  if (heads.cls && target >= 0) {
    const classes = p.clsBias.length;
    for (let k = 0; k < classes; k++) {
      const z = logit(p.clsWeight, p.clsBias, k, samples.clsFeatures, at, c);
      const t = k === target ? 1 : 0;
      loss += bceWithLogits(z, t);
      if (g) accumulate(g.clsWeight, g.clsBias, k, samples.clsFeatures, at, c, scale * (sigmoid(z) - t));
    }
  }
  if (heads.obj) {
    const z = logit(p.objWeight, p.objBias, 0, samples.objFeatures, at, c);
    const t = target >= 0 ? 1 : 0;
    loss += bceWithLogits(z, t);
    if (g) accumulate(g.objWeight, g.objBias, 0, samples.objFeatures, at, c, scale * (sigmoid(z) - t));
  }
  return loss;
}

/** Mean loss over samples `indices` (all when omitted), and its gradient into `grads` when given. */
export function meanLoss(
  levels: readonly HeadLevel[],
  samples: Samples,
  heads: HeadsTrained,
  indices?: ArrayLike<number>,
  grads?: readonly HeadGradient[],
): number {
  const n = indices ? indices.length : samples.count;
  if (n === 0) return 0;
  let sum = 0;
  for (let j = 0; j < n; j++)
    sum += sampleLoss(levels, samples, indices ? indices[j]! : j, heads, grads, 1 / n);
  return sum / n;
}

/** The pull toward the parent's weights, λ/2 · Σ(w − w₀)², and its gradient added into `grad`. */
export function anchorPenalty(
  value: Float32Array,
  parent: Float32Array,
  lambda: number,
  grad?: Float64Array,
): number {
  let sum = 0;
  for (let j = 0; j < value.length; j++) {
    const d = value[j]! - parent[j]!;
    sum += d * d;
    if (grad) grad[j] = grad[j]! + lambda * d;
  }
  return (lambda / 2) * sum;
}
