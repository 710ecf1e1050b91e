import { hammingDistance } from '../media/phash';

/**
 * Scene changes from what ingest measured on every frame (docs/ego-state.md "Scene changes"):
 * the 64-bit perceptual hash (`frames.phash`) and the mean luma (`context.exposure.mean_luma`).
 * Consecutive frames whose hashes differ in at least `phash_distance` bits show another picture
 * (a cut, a camera knocked); a mean luma that moves by `luma_delta` or more is a change of light
 * (a tunnel's mouth, headlights, leaving a car park).
 */
export interface SceneThresholds {
  /** Bits of 64; two unrelated pictures differ in about 32, a drive's consecutive frames in far fewer. */
  phash_distance: number;
  /** Mean luma change on the 0–255 scale. */
  luma_delta: number;
}

export const DEFAULT_SCENE_THRESHOLDS: SceneThresholds = { phash_distance: 28, luma_delta: 40 };
export const SCENE_RULES_VERSION = 'scene-1';

export interface SceneFrame {
  id: string;
  index: number;
  timestampMs: number;
  phash: string | null;
  meanLuma: number | null;
}

export type SceneCause = 'appearance' | 'lighting';

export interface SceneChange {
  kind: 'scene_change';
  t_start_ms: number;
  t_end_ms: number;
  causes: SceneCause[];
  max_phash_distance: number | null;
  max_luma_delta: number | null;
  from_frame_id: string;
  to_frame_id: string;
  from_index: number;
  to_index: number;
}

/** The mean luma ingest stored in a frame's context, if it did. */
export function meanLumaOf(context: unknown): number | null {
  const exposure = (context as { exposure?: { mean_luma?: unknown } } | null)?.exposure;
  const v = exposure?.mean_luma;
  return typeof v === 'number' && Number.isFinite(v) ? v : null;
}

const PHASH = /^[0-9a-f]{16}$/i;

export function detectSceneChanges(
  frames: readonly SceneFrame[],
  th: SceneThresholds,
): { changes: SceneChange[]; pairs: number; compared: number } {
  const sorted = [...frames].sort((a, b) => a.index - b.index);
  const changes: SceneChange[] = [];
  let compared = 0;
  let open: SceneChange | null = null;
  for (let i = 1; i < sorted.length; i++) {
    const a = sorted[i - 1]!;
    const b = sorted[i]!;
    const distance =
      a.phash && b.phash && PHASH.test(a.phash) && PHASH.test(b.phash)
        ? hammingDistance(a.phash, b.phash)
        : null;
    const delta = a.meanLuma !== null && b.meanLuma !== null ? Math.abs(b.meanLuma - a.meanLuma) : null;
    if (distance !== null || delta !== null) compared++;
    const causes: SceneCause[] = [];
    if (distance !== null && distance >= th.phash_distance) causes.push('appearance');
    if (delta !== null && delta >= th.luma_delta) causes.push('lighting');
    if (!causes.length) {
      open = null;
      continue;
    }
    // A change spread over several frames (a fade, a tunnel's mouth) is one event.
    if (open && open.to_frame_id === a.id) {
      open.t_end_ms = b.timestampMs;
      open.to_frame_id = b.id;
      open.to_index = b.index;
      open.causes = [...new Set([...open.causes, ...causes])].sort();
      open.max_phash_distance = maxOf(open.max_phash_distance, distance);
      open.max_luma_delta = maxOf(open.max_luma_delta, delta);
      continue;
    }
    open = {
      kind: 'scene_change',
      t_start_ms: a.timestampMs,
      t_end_ms: b.timestampMs,
      causes,
      max_phash_distance: distance,
      max_luma_delta: delta,
      from_frame_id: a.id,
      to_frame_id: b.id,
      from_index: a.index,
      to_index: b.index,
    };
    changes.push(open);
  }
  return { changes, pairs: Math.max(0, sorted.length - 1), compared };
}

const maxOf = (a: number | null, b: number | null): number | null =>
  a === null ? b : b === null ? a : Math.max(a, b);
