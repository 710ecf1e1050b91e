import { boxArea, iou, type Box } from '../geometry';
import type { ObjectRoute } from '../routing';

/**
 * The critic: five hand-set checks over a frame's fused objects (spec "Critic constants"). A check
 * that flags an object vetoes it; a veto demotes `auto_accept` to `review` and never promotes
 * anything. A check that cannot run (no previous frame, no LiDAR, no ego speed) says so instead of
 * passing silently.
 */
export const CRITIC_CHECKS = ['temporal', 'geometric', 'motion', 'cross_modal', 'relationship'] as const;
export type CriticCheck = (typeof CRITIC_CHECKS)[number];

export const CRITIC_CONSTANTS = {
  /** temporal: a track's centroid may not move more than this share of the frame diagonal between frames. */
  maxCentroidJumpDiagonal: 0.6,
  /** motion: ground speed limits (km/h). */
  maxSpeedVruKmh: 45,
  maxSpeedOtherKmh: 220,
  /** cross_modal: LiDAR points that must fall in the box's frustum. */
  minLidarPoints: 3,
} as const;

/** Vulnerable road users for the motion limit: the ontology's `vru` l1 (people, riders). */
export const VRU_L1 = ['vru'] as const;
/** Classes that stand on the ground, whose box bottom must lie below the horizon. */
export const GROUNDED_L1 = ['vru', 'animal', 'two_wheeler', 'vehicle'] as const;
/** Riders: each needs a two-wheeler under its lower half. */
export const RIDER_CLASSES = ['rider', 'bicyclist', 'motorcyclist', 'other_rider', 'pillion_rider'] as const;
export const TWO_WHEELER_L1 = 'two_wheeler';
/** Share of a rider's lower half a two-wheeler must cover. */
export const RIDER_SUPPORT_COVER = 0.25;
/** Association of objects between consecutive frames when no track says which is which. */
export const ASSOCIATION_MIN_IOU = 0.3;

/**
 * A pinhole camera on the ego vehicle: focal lengths and principal point in pixels, mounting
 * height above the road in metres, pitch in degrees (positive: tilted down).
 */
export interface EgoCamera {
  fx: number;
  fy: number;
  cx: number;
  cy: number;
  heightM: number;
  pitchDeg: number;
}

/** Without a calibration the critic assumes a level dashcam of 90° horizontal field at 1.4 m. */
export function defaultCamera(width: number, height: number): EgoCamera {
  const f = width / 2 / Math.tan(Math.PI / 4);
  return { fx: f, fy: f, cx: width / 2, cy: height / 2, heightM: 1.4, pitchDeg: 0 };
}

/**
 * A calibration in the session's source metadata (`camera`: fx, fy, cx, cy, height_m, pitch_deg)
 * wins over the default. Shared by the critic's auto-label pass and dynamics (docs/dynamics.md).
 */
export function sessionCamera(
  sourceMeta: unknown,
  width: number,
  height: number,
): { camera: EgoCamera; source: 'session' | 'default' } {
  const c = (sourceMeta as { camera?: Record<string, unknown> } | null)?.camera;
  const n = (k: string) => (typeof c?.[k] === 'number' ? (c[k] as number) : null);
  if (c && n('fx') && n('fy') && n('cx') !== null && n('cy') !== null) {
    return {
      camera: {
        fx: n('fx')!,
        fy: n('fy')!,
        cx: n('cx')!,
        cy: n('cy')!,
        heightM: n('height_m') ?? 1.4,
        pitchDeg: n('pitch_deg') ?? 0,
      },
      source: 'session',
    };
  }
  return { camera: defaultCamera(width, height), source: 'default' };
}

/** A frame's recorded ego speed (`frames.context.ego_speed_mps`, docs/ego-state.md), m/s. */
export const contextEgoSpeed = (context: unknown): number | null => {
  const v = (context as { ego_speed_mps?: unknown } | null)?.ego_speed_mps;
  return typeof v === 'number' && Number.isFinite(v) ? v : null;
};

export const horizonRow = (cam: EgoCamera): number =>
  cam.cy - cam.fy * Math.tan((cam.pitchDeg * Math.PI) / 180);

export interface CriticObject {
  key: string;
  className: string;
  l1: string;
  box: Box;
  /** A tracker's id when the object has one; otherwise objects are associated by overlap. */
  trackKey?: string | null;
}

export interface CriticFrame {
  timestampMs: number;
  width: number;
  height: number;
  objects: CriticObject[];
  /** Ego speed over ground (m/s) when the drive recorded it. */
  egoSpeedMps: number | null;
}

export interface CriticContext {
  camera: EgoCamera;
  /** Where the camera came from, recorded with geometric and motion vetoes. */
  cameraSource: 'session' | 'default';
  previous: CriticFrame | null;
  /** LiDAR points projected into this frame (pixels); null when the session has no LiDAR. */
  lidarPixels: ReadonlyArray<readonly [number, number]> | null;
}

export interface Veto {
  check: CriticCheck;
  reason: string;
  detail?: Record<string, unknown>;
}

export interface CriticVerdict {
  vetoes: Veto[];
  ran: CriticCheck[];
  skipped: Array<{ check: CriticCheck; reason: string }>;
}

const centroid = (b: Box): [number, number] => [(b[0] + b[2]) / 2, (b[1] + b[3]) / 2];
const includes = <T extends string>(list: readonly T[], v: string): boolean =>
  (list as readonly string[]).includes(v);

/** Pairs each current object with its previous-frame counterpart: same track first, then greedy best overlap. */
export function associate(
  previous: readonly CriticObject[],
  current: readonly CriticObject[],
): Map<string, CriticObject> {
  const out = new Map<string, CriticObject>();
  const taken = new Set<string>();
  for (const c of current) {
    const same = c.trackKey ? previous.find((p) => p.trackKey === c.trackKey) : undefined;
    if (same) {
      out.set(c.key, same);
      taken.add(same.key);
    }
  }
  const pairs: Array<{ c: CriticObject; p: CriticObject; o: number }> = [];
  for (const c of current) {
    if (out.has(c.key) || c.trackKey) continue;
    for (const p of previous) {
      if (taken.has(p.key) || p.trackKey) continue;
      const o = iou(c.box, p.box);
      if (o >= ASSOCIATION_MIN_IOU) pairs.push({ c, p, o });
    }
  }
  pairs.sort((a, b) => b.o - a.o);
  for (const { c, p } of pairs) {
    if (out.has(c.key) || taken.has(p.key)) continue;
    out.set(c.key, p);
    taken.add(p.key);
  }
  return out;
}

/** Ground position (metres: lateral X, forward Z) of a box's bottom centre; null at or above the horizon. */
export function groundPoint(b: Box, cam: EgoCamera): { x: number; z: number } | null {
  const below = b[3] - horizonRow(cam);
  if (below <= 0) return null;
  const z = (cam.heightM * cam.fy) / below;
  return { x: (((b[0] + b[2]) / 2 - cam.cx) * z) / cam.fx, z };
}

function temporal(o: CriticObject, prev: CriticObject | undefined, frame: CriticFrame): Veto | null {
  if (!prev) return null;
  if (prev.className !== o.className)
    return {
      check: 'temporal',
      reason: `class flips from ${prev.className} to ${o.className} between frames`,
      detail: { previous_class: prev.className },
    };
  const [ax, ay] = centroid(prev.box);
  const [bx, by] = centroid(o.box);
  const jump = Math.hypot(bx - ax, by - ay);
  const limit = CRITIC_CONSTANTS.maxCentroidJumpDiagonal * Math.hypot(frame.width, frame.height);
  if (jump > limit)
    return {
      check: 'temporal',
      reason: `centroid jumps ${jump.toFixed(0)} px, beyond 0.6 of the frame diagonal (${limit.toFixed(0)} px)`,
      detail: { jump_px: jump },
    };
  return null;
}

function geometric(o: CriticObject, ctx: CriticContext, frame: CriticFrame): Veto | null {
  if (!includes(GROUNDED_L1, o.l1)) return null;
  const horizon = horizonRow(ctx.camera);
  // A box whose bottom sits a hair above the horizon is a far object on a slight rise, not an error.
  const tolerance = 0.02 * frame.height;
  const bottom = o.box[3];
  if (bottom < horizon - tolerance) {
    return {
      check: 'geometric',
      reason: `box bottom (y ${bottom.toFixed(0)}) is above the horizon (y ${horizon.toFixed(0)}): its ground ray never meets the road`,
      detail: { horizon_y: horizon, camera: ctx.cameraSource },
    };
  }
  return null;
}

function motion(
  o: CriticObject,
  prev: CriticObject | undefined,
  ctx: CriticContext,
  frame: CriticFrame,
  egoSpeedMps: number,
  dtS: number,
): Veto | null {
  if (!prev) return null;
  const a = groundPoint(prev.box, ctx.camera);
  const b = groundPoint(o.box, ctx.camera);
  if (!a || !b) return null;
  // The camera moves forward with the ego vehicle: a standing object's Z shrinks by v·dt.
  const vx = (b.x - a.x) / dtS;
  const vz = (b.z - a.z) / dtS + egoSpeedMps;
  const kmh = Math.hypot(vx, vz) * 3.6;
  const vru = includes(VRU_L1, o.l1);
  const limit = vru ? CRITIC_CONSTANTS.maxSpeedVruKmh : CRITIC_CONSTANTS.maxSpeedOtherKmh;
  if (kmh > limit)
    return {
      check: 'motion',
      reason: `moves at ${kmh.toFixed(0)} km/h, above ${limit} km/h for ${vru ? 'a vulnerable road user' : 'its class'}`,
      detail: { speed_kmh: kmh, limit_kmh: limit, camera: ctx.cameraSource },
    };
  return null;
}

function crossModal(o: CriticObject, lidar: ReadonlyArray<readonly [number, number]>): Veto | null {
  const [x1, y1, x2, y2] = o.box;
  const n = lidar.filter(([u, v]) => u >= x1 && u <= x2 && v >= y1 && v <= y2).length;
  if (n < CRITIC_CONSTANTS.minLidarPoints)
    return {
      check: 'cross_modal',
      reason: `${n} LiDAR points in its frustum, fewer than ${CRITIC_CONSTANTS.minLidarPoints}`,
      detail: { points: n },
    };
  return null;
}

function relationship(o: CriticObject, frame: CriticFrame): Veto | null {
  if (!includes(RIDER_CLASSES, o.className)) return null;
  const [x1, y1, x2, y2] = o.box;
  const lower: Box = [x1, (y1 + y2) / 2, x2, y2];
  const area = boxArea(lower);
  const supported = frame.objects.some((t) => {
    if (t.l1 !== TWO_WHEELER_L1) return false;
    const ix = Math.max(0, Math.min(lower[2], t.box[2]) - Math.max(lower[0], t.box[0]));
    const iy = Math.max(0, Math.min(lower[3], t.box[3]) - Math.max(lower[1], t.box[1]));
    return area > 0 && (ix * iy) / area >= RIDER_SUPPORT_COVER;
  });
  return supported
    ? null
    : { check: 'relationship', reason: `a ${o.className} with no two-wheeler under its lower half` };
}

/** Runs the five checks on every object of a frame. */
export function criticiseFrame(frame: CriticFrame, ctx: CriticContext): Map<string, CriticVerdict> {
  const skipped: CriticVerdict['skipped'] = [];
  const ran: CriticCheck[] = ['geometric', 'relationship'];
  const prev = ctx.previous;
  const dtS = prev ? (frame.timestampMs - prev.timestampMs) / 1000 : 0;
  const matches = prev ? associate(prev.objects, frame.objects) : new Map<string, CriticObject>();
  if (prev) ran.push('temporal');
  else skipped.push({ check: 'temporal', reason: 'no previous frame in this run' });
  const ego = frame.egoSpeedMps;
  if (!prev || dtS <= 0)
    skipped.push({ check: 'motion', reason: 'no earlier frame to measure motion against' });
  else if (ego === null)
    skipped.push({
      check: 'motion',
      reason: 'no ego speed recorded for this frame, so ground speed is unknown',
    });
  else ran.push('motion');
  if (ctx.lidarPixels) ran.push('cross_modal');
  else skipped.push({ check: 'cross_modal', reason: 'no LiDAR in this session' });

  const out = new Map<string, CriticVerdict>();
  for (const o of frame.objects) {
    const before = matches.get(o.key);
    const vetoes = [
      ran.includes('temporal') ? temporal(o, before, frame) : null,
      geometric(o, ctx, frame),
      ran.includes('motion') ? motion(o, before, ctx, frame, ego!, dtS) : null,
      ctx.lidarPixels ? crossModal(o, ctx.lidarPixels) : null,
      relationship(o, frame),
    ].filter((v): v is Veto => v !== null);
    out.set(o.key, { vetoes, ran: CRITIC_CHECKS.filter((c) => ran.includes(c)), skipped });
  }
  return out;
}

/** A veto demotes an auto-accept to review; nothing else moves, and nothing ever becomes an auto-accept. */
export function applyCritic(
  route: ObjectRoute,
  verdict: CriticVerdict,
): { route: ObjectRoute; demoted: boolean } {
  if (route === 'auto_accept' && verdict.vetoes.length > 0) return { route: 'review', demoted: true };
  return { route, demoted: false };
}
