/**
 * Runs side by side (GET /api/experiments/runs/compare): numbers flattened from configurations and
 * metrics so that any two runs can be compared key by key, deltas against a baseline, and a training
 * curve summarised to the figures a comparison reads.
 */

/** Numeric leaves of a JSON value by dotted path (`trained.map50`), at most `maxDepth` levels deep. */
export function numericLeaves(value: unknown, prefix = '', maxDepth = 4): Record<string, number> {
  const out: Record<string, number> = {};
  const walk = (v: unknown, path: string, depth: number) => {
    if (typeof v === 'number' && Number.isFinite(v)) out[path] = v;
    else if (v && typeof v === 'object' && !Array.isArray(v) && depth < maxDepth)
      for (const [k, child] of Object.entries(v)) walk(child, path ? `${path}.${k}` : k, depth + 1);
  };
  walk(value, prefix, 0);
  return out;
}

/** other − base for every key both have. */
export function deltas(base: Readonly<Record<string, number>>, other: Readonly<Record<string, number>>) {
  const out: Record<string, number> = {};
  for (const [k, v] of Object.entries(other)) if (k in base) out[k] = v - base[k]!;
  return out;
}

export interface CurvePoint {
  epoch: number;
  trainLoss: number;
  valLoss: number | null;
  metrics: Record<string, number>;
}

export interface CurveSummary {
  epochs: number;
  first_train_loss: number | null;
  last_train_loss: number | null;
  min_val_loss: number | null;
  min_val_loss_epoch: number | null;
  last_val_loss: number | null;
  /** Per validation metric: its best (highest) value and epoch, and its last value. */
  metrics: Record<string, { best: number; best_epoch: number; last: number }>;
}

export function summariseCurve(points: readonly CurvePoint[]): CurveSummary {
  const sorted = [...points].sort((a, b) => a.epoch - b.epoch);
  const first = sorted[0];
  const last = sorted[sorted.length - 1];
  let minVal: CurvePoint | undefined;
  const metrics: CurveSummary['metrics'] = {};
  for (const p of sorted) {
    if (p.valLoss !== null && (minVal === undefined || p.valLoss < minVal.valLoss!)) minVal = p;
    for (const [k, v] of Object.entries(p.metrics)) {
      const m = metrics[k];
      if (!m) metrics[k] = { best: v, best_epoch: p.epoch, last: v };
      else {
        if (v > m.best) Object.assign(m, { best: v, best_epoch: p.epoch });
        m.last = v;
      }
    }
  }
  return {
    epochs: sorted.length,
    first_train_loss: first?.trainLoss ?? null,
    last_train_loss: last?.trainLoss ?? null,
    min_val_loss: minVal?.valLoss ?? null,
    min_val_loss_epoch: minVal?.epoch ?? null,
    last_val_loss: last?.valLoss ?? null,
    metrics,
  };
}
