import { initializerFloats, setInitializerFloats, type OnnxModel } from '../onnx/graph';
import { convWeightNames } from '../onnx/quantize';

/**
 * Magnitude pruning for the co-optimisation grid (docs/edgeforge.md): in every convolution, the
 * `fraction` of its weights smallest in magnitude are set to zero (layer by layer, so no layer is
 * emptied by another's larger weights). The model is changed in place.
 */
export interface PruneReport {
  fraction: number;
  tensors: number;
  values: number;
  zeroed: number;
}

export function pruneConvWeights(model: OnnxModel, fraction: number): PruneReport {
  if (!(fraction >= 0 && fraction < 1))
    throw new RangeError(`a prune fraction is in [0, 1), not ${fraction}`);
  const names = convWeightNames(model);
  let values = 0;
  let zeroed = 0;
  for (const name of names) {
    const w = initializerFloats(model, name);
    values += w.length;
    const k = Math.floor(fraction * w.length);
    if (k > 0) {
      // The k-th smallest magnitude; ties at it are zeroed in index order until k are.
      const threshold = Float32Array.from(w, Math.abs).sort()[k - 1]!;
      let ties = k - w.filter((v) => Math.abs(v) < threshold).length;
      const pruned = w.map((v) => {
        const m = Math.abs(v);
        if (m < threshold) return 0;
        if (m === threshold && ties > 0) {
          ties--;
          return 0;
        }
        return v;
      });
      setInitializerFloats(model, name, pruned);
    }
    zeroed += k;
  }
  return { fraction, tensors: names.length, values, zeroed };
}
