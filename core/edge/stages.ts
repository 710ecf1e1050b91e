/**
 * Stage planning of an edge rollout (docs/edge-rollout.md): which devices a stage of the rollout
 * reaches. Stages are cumulative fleet percentages; the devices join in one fixed order per
 * rollout, so stage k always holds every device of stage k − 1 and the plan can be recomputed at
 * any time from the fleet snapshot and the rollout's id.
 */

/** Device labels a rollout's selector must all match (`{ site: 'depot-3' }`). */
export type Labels = Record<string, string>;

/** Every label of the selector is on the device with the same value; an empty selector matches all. */
export const selectorMatches = (labels: Labels, selector: Labels): boolean =>
  Object.entries(selector).every(([k, v]) => labels[k] === v);

/**
 * Why a stage list cannot be rolled out, or null when it can: percentages in (0, 100], strictly
 * increasing, ending at 100 (a rollout that stops short of the fleet would never be complete).
 */
export function stagesProblem(stages: readonly number[]): string | null {
  if (stages.length === 0) return 'at least one stage is needed';
  for (const [i, p] of stages.entries()) {
    if (!(p > 0 && p <= 100)) return `stage ${i} is ${p}%; a stage is a percentage in (0, 100]`;
    if (i > 0 && !(p > stages[i - 1]!))
      return `stage ${i} (${p}%) does not grow the fleet share of stage ${i - 1}`;
  }
  if (stages.at(-1) !== 100) return `the last stage is ${stages.at(-1)}%; it must be 100`;
  return null;
}

/** Devices a stage of `percent` reaches in a fleet of `fleetSize`: the share rounded up, at least one. */
export const stageDeviceCount = (fleetSize: number, percent: number): number =>
  Math.min(fleetSize, Math.max(1, Math.ceil((fleetSize * percent) / 100 - 1e-9)));

/** 32-bit FNV-1a: a stable, dependency-free hash (the order must not change between processes or releases). */
function fnv1a(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}

/**
 * The order in which devices join a rollout: by a hash of the rollout's seed and the device id, so
 * each rollout canaries a different, reproducible subset rather than always the same first devices.
 */
export function rolloutOrder(deviceIds: readonly string[], seed: string): string[] {
  return [...deviceIds]
    .map((id) => ({ id, h: fnv1a(`${seed}:${id}`) }))
    .sort((a, b) => a.h - b.h || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
    .map((d) => d.id);
}

/** The devices of every stage, cumulative: stage k is the first `stageDeviceCount` devices of the order. */
export function planStages(
  deviceIds: readonly string[],
  stages: readonly number[],
  seed: string,
): string[][] {
  const order = rolloutOrder(deviceIds, seed);
  return stages.map((p) => order.slice(0, stageDeviceCount(order.length, p)));
}
