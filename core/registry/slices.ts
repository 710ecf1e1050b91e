import type { ScopeEvaluation } from '../evalgov';

/**
 * The slices the gate compares champion and challenger on, beyond the whole gold set: the frame
 * context a gold frame carries. `lighting` is derived from the exposure ingest measured
 * (core/curation/slice LIGHTING_SQL: dark, normal, bright, unknown); `weather` is the frame's
 * recorded `context.weather` where it has one. A dimension is sliced only when its frames take at
 * least two values: a slice equal to the whole set would repeat it.
 */

export const CONTEXT_DIMENSIONS = ['lighting', 'weather'] as const;
export type ContextDimension = (typeof CONTEXT_DIMENSIONS)[number];

export interface FrameContext {
  id: string;
  lighting: string;
  weather: string | null;
}

export interface ContextSlice {
  /** `lighting=dark`. */
  name: string;
  dimension: ContextDimension;
  value: string;
  /** In the gold set's frame order. */
  frameIds: string[];
}

export function contextSlices(frames: readonly FrameContext[]): ContextSlice[] {
  const out: ContextSlice[] = [];
  for (const dimension of CONTEXT_DIMENSIONS) {
    const byValue = new Map<string, string[]>();
    for (const f of frames) {
      const value = f[dimension];
      if (value === null) continue;
      const list = byValue.get(value);
      if (list) list.push(f.id);
      else byValue.set(value, [f.id]);
    }
    if (byValue.size < 2) continue;
    for (const [value, frameIds] of [...byValue].sort(([a], [b]) => a.localeCompare(b)))
      out.push({ name: `${dimension}=${value}`, dimension, value, frameIds });
  }
  return out;
}

/** The headline figures a slice comparison shows for each run. */
export const SLICE_FIGURES = ['map', 'ap50', 'ap75', 'ar100', 'precision', 'recall'] as const;
type Figure = (typeof SLICE_FIGURES)[number];

export interface SliceComparison {
  frames: number;
  gold: number;
  challenger: Record<Figure, number | null>;
  champion: Record<Figure, number | null>;
  /** challenger − champion; null where either is null. */
  delta: Record<Figure, number | null>;
  /** Per class with gold boxes: COCO AP of each run and the difference. */
  classes: Array<{
    class_id: number;
    gold: number;
    challenger_ap: number | null;
    champion_ap: number | null;
    delta_ap: number | null;
  }>;
}

const diff = (a: number | null, b: number | null) => (a === null || b === null ? null : a - b);

/** Two evaluations of one scope side by side. */
export function compareScope(challenger: ScopeEvaluation, champion: ScopeEvaluation): SliceComparison {
  const pick = (e: ScopeEvaluation) =>
    Object.fromEntries(SLICE_FIGURES.map((f) => [f, e[f]])) as Record<Figure, number | null>;
  const championAp = new Map(champion.classes.map((c) => [c.class_id, c.ap]));
  return {
    frames: challenger.frames,
    gold: challenger.gold,
    challenger: pick(challenger),
    champion: pick(champion),
    delta: Object.fromEntries(SLICE_FIGURES.map((f) => [f, diff(challenger[f], champion[f])])) as Record<
      Figure,
      number | null
    >,
    classes: challenger.classes
      .filter((c) => c.gold > 0)
      .map((c) => ({
        class_id: c.class_id,
        gold: c.gold,
        challenger_ap: c.ap,
        champion_ap: championAp.get(c.class_id) ?? null,
        delta_ap: diff(c.ap, championAp.get(c.class_id) ?? null),
      })),
  };
}
