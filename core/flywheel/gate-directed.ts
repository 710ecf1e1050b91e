import { z } from 'zod';
import { SLICE_FIGURES } from '../registry/slices';
import type { AdaptiveRequest, Regression } from './adaptive';

/**
 * Reading a promotion gate's report for where a challenger fell short (docs/flywheel-gate-directed.md):
 * the one reading both the adaptive flywheel's automatic cycle and the gate-directed runs use.
 *
 * - a regression per slice of `report.slices` whose `metric` fell by at least `min_drop`
 *   (`frames` = the slice's gold frames);
 * - a regression per class of the `all` slice whose AP fell by at least `min_drop`
 *   (`class=<name>`, metric `ap`, `frames` = its gold boxes): a class is a slice selection can scope;
 * - a safety slice `class=<name>` per safety class under its floors (`report.safety.failing`).
 *
 * The report is JSON written by another part of the platform and kept across versions, so each
 * slice, class and safety entry is read on its own: a malformed one is skipped, not the whole report.
 */

export type GateFigure = (typeof SLICE_FIGURES)[number];

export interface GateReading {
  /** The slice figure a regression is read on. */
  metric: GateFigure;
  /** A fall smaller than this is noise, not a regression. */
  min_drop: number;
}

const figure = z.number().nullable().optional();
const Slice = z.object({
  name: z.string().min(1),
  frames: z.number(),
  delta: z.record(z.string(), figure),
  classes: z.array(z.unknown()).catch([]),
});
const ClassDelta = z.object({ class_id: z.number(), gold: z.number(), delta_ap: figure });
const FailingSafety = z.object({ class_name: z.string().min(1) });

/** The report's slices as an array, or null when it holds no per-slice comparison. */
function slicesOf(report: unknown): unknown[] | null {
  const slices = z.object({ slices: z.array(z.unknown()) }).safeParse(report);
  return slices.success ? slices.data.slices : null;
}

/** Where the challenger did worse than the champion, by `reading`; class names by ontology id. */
export function gateRegressions(
  report: unknown,
  names: ReadonlyMap<number, string>,
  reading: GateReading,
): Regression[] {
  const regressions: Regression[] = [];
  const fell = (delta: number | null | undefined): delta is number =>
    typeof delta === 'number' && -delta >= reading.min_drop;
  for (const raw of slicesOf(report) ?? []) {
    const slice = Slice.safeParse(raw);
    if (!slice.success) continue;
    const s = slice.data;
    const delta = s.delta[reading.metric];
    if (fell(delta) && s.frames > 0)
      regressions.push({ slice: s.name, metric: reading.metric, drop: -delta, frames: s.frames });
    if (s.name !== 'all') continue;
    for (const rawClass of s.classes) {
      const c = ClassDelta.safeParse(rawClass);
      const name = c.success ? names.get(c.data.class_id) : undefined;
      if (c.success && name && fell(c.data.delta_ap) && c.data.gold > 0)
        regressions.push({
          slice: `class=${name}`,
          metric: 'ap',
          drop: -c.data.delta_ap,
          frames: c.data.gold,
        });
    }
  }
  return regressions;
}

/** The safety classes the gate found under their floors, as safety slices `class=<name>`. */
export function gateSafetySlices(report: unknown): string[] {
  const safety = z.object({ safety: z.object({ failing: z.array(z.unknown()) }) }).safeParse(report);
  if (!safety.success) return [];
  const slices = new Set<string>();
  for (const raw of safety.data.safety.failing) {
    const c = FailingSafety.safeParse(raw);
    if (c.success) slices.add(`class=${c.data.class_name}`);
  }
  return [...slices].sort();
}

/** What a gate-directed run collects for: the reading it was made with and what it found. */
export interface GateDirectedTargets extends GateReading {
  regressions: Regression[];
  safety_slices: string[];
}

/** The part of a recorded gate decision a run is read from. */
export interface GateDecisionRecord {
  outcome: string;
  rule: string | null;
  report: unknown;
}

/**
 * The targets of a gate decision, or null when it opens no run: not a refusal; a `champion_changed`
 * refusal (the challenger was compared with a champion that no longer is, so its shortfalls say
 * nothing about the current one: the gate is run again instead); no per-slice comparison (a run that
 * failed, a reconstructed run); or neither a regression nor a failing safety class.
 */
export function gateDirectedTargets(
  decision: GateDecisionRecord,
  names: ReadonlyMap<number, string>,
  reading: GateReading,
): GateDirectedTargets | null {
  if (decision.outcome !== 'refused' || decision.rule === 'champion_changed') return null;
  if (!slicesOf(decision.report)) return null;
  const regressions = gateRegressions(decision.report, names, reading);
  const safetySlices = gateSafetySlices(decision.report);
  if (!regressions.length && !safetySlices.length) return null;
  return { ...reading, regressions, safety_slices: safetySlices };
}

export interface GateDirectedBudgets {
  total_label_budget: number;
  total_fleet_samples: number;
  safety_floor: number;
}

/** The adaptive cycle request a run's targets become: its regressions, its safety slices, no ODD gap. */
export function gateDirectedRequest(
  targets: GateDirectedTargets,
  budgets: GateDirectedBudgets,
): AdaptiveRequest {
  return {
    regressions: targets.regressions,
    odd_gaps: [],
    ...budgets,
    safety_slices: targets.safety_slices.length ? targets.safety_slices : null,
  };
}
