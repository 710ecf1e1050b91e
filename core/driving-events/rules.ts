import { groundPoint } from '../critic';
import type { PointDynamics, TrackPoint } from '../dynamics';
import {
  DERIVER_VERSION,
  DRIVING_EVENT_PARTICIPANTS,
  DRIVING_EVENT_THRESHOLDS as T,
  EGO_CORRIDOR,
  type DrivingEventKind,
} from './taxonomy';

/** A track as the rules read it: its objects' points and their dynamics (by object id). */
export interface RuleTrack {
  track_id: string;
  points: readonly TrackPoint[];
  dynamics: readonly PointDynamics[];
  /** Whether the dynamics were read from `object_dynamics` or computed for this derivation. */
  dynamics_from: 'stored' | 'computed';
}

/** The ego speed of one frame (`frames.context.ego_speed_mps`). */
export interface EgoSample {
  frame_id: string;
  ts_ms: number;
  speed_mps: number;
}

/** A timeline event of source `inertial` (docs/ego-state.md), any kind. */
export interface InertialEvent {
  id: string;
  kind: string;
  t_start_ms: number;
  t_end_ms: number | null;
  attrs: Record<string, unknown>;
}

export interface DeriveInput {
  tracks: readonly RuleTrack[];
  ego: readonly EgoSample[];
  inertial: readonly InertialEvent[];
}

export interface DerivedEvent {
  kind: DrivingEventKind;
  t_start_ms: number;
  t_end_ms: number;
  start_frame: string | null;
  end_frame: string | null;
  track_ids: string[];
  classes: string[];
  evidence: Record<string, unknown>;
}

export interface Derivation {
  deriver_version: string;
  events: DerivedEvent[];
  ran: DrivingEventKind[];
  skipped: Array<{ kind: DrivingEventKind; reason: string }>;
}

interface Point extends TrackPoint {
  dyn: PointDynamics | null;
}

interface Prepared {
  track_id: string;
  l1: string;
  classes: string[];
  points: Point[];
  dynamics_from: RuleTrack['dynamics_from'];
}

const round = (x: number, digits = 3): number => Number(x.toFixed(digits));

/** Offset of the box's bottom centre from the image's vertical centre line, in frame widths. */
export const lateralOffset = (p: TrackPoint): number => (p.box[0] + p.box[2]) / 2 / p.width - 0.5;
const beside = (p: TrackPoint): boolean => Math.abs(lateralOffset(p)) > EGO_CORRIDOR.half_width;
export const inCorridor = (p: TrackPoint): boolean =>
  !beside(p) && p.box[3] / p.height >= EGO_CORRIDOR.min_bottom;
const sideOf = (p: TrackPoint): 'left' | 'right' => (lateralOffset(p) < 0 ? 'left' : 'right');

/** The track's most frequent l1 group (the rules' participant test) and the distinct classes of its objects. */
function prepare(track: RuleTrack): Prepared {
  const byObject = new Map(track.dynamics.map((d) => [d.object_id, d]));
  const points = [...track.points]
    .sort((a, b) => a.ts_ms - b.ts_ms || a.frame_index - b.frame_index)
    .map((p) => ({ ...p, dyn: byObject.get(p.object_id) ?? null }));
  const l1Counts = new Map<string, number>();
  for (const p of points) l1Counts.set(p.l1, (l1Counts.get(p.l1) ?? 0) + 1);
  const l1 = [...l1Counts].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))[0]?.[0] ?? '';
  return {
    track_id: track.track_id,
    l1,
    classes: [...new Set(points.map((p) => p.class_name))].sort(),
    points,
    dynamics_from: track.dynamics_from,
  };
}

function trackEvent(
  kind: DrivingEventKind,
  t: Prepared,
  from: Point,
  to: Point,
  evidence: Record<string, unknown>,
): DerivedEvent {
  return {
    kind,
    t_start_ms: from.ts_ms,
    t_end_ms: to.ts_ms,
    start_frame: from.frame_id,
    end_frame: to.frame_id,
    track_ids: [t.track_id],
    classes: t.classes,
    evidence: { ...evidence, dynamics_from: t.dynamics_from },
  };
}

/** Index ranges [a, b] of the maximal runs of consecutive indexes that satisfy `ok`. */
function runs(n: number, ok: (i: number) => boolean): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  for (let i = 0; i < n; i++) {
    if (!ok(i)) continue;
    let j = i;
    while (j + 1 < n && ok(j + 1)) j++;
    out.push([i, j]);
    i = j;
  }
  return out;
}

interface Entry {
  /** First and last of the consecutive points beside the corridor on one side before it entered. */
  firstOutside: number;
  lastOutside: number;
  entry: number;
  /** Last point of the run inside the corridor that starts at `entry`. */
  lastInside: number;
  /** Largest sideways distance from the last outside point while inside, frame widths. */
  lateralTravel: number;
}

/** Every time the track enters the corridor straight from beside it. */
function corridorEntries(pts: readonly Point[]): Entry[] {
  const out: Entry[] = [];
  for (const [entry, lastInside] of runs(pts.length, (i) => inCorridor(pts[i]!))) {
    const before = pts[entry - 1];
    if (!before || !beside(before)) continue;
    let firstOutside = entry - 1;
    while (
      firstOutside > 0 &&
      beside(pts[firstOutside - 1]!) &&
      sideOf(pts[firstOutside - 1]!) === sideOf(before)
    )
      firstOutside--;
    const from = lateralOffset(before);
    let lateralTravel = 0;
    for (let i = entry; i <= lastInside; i++)
      lateralTravel = Math.max(lateralTravel, Math.abs(lateralOffset(pts[i]!) - from));
    out.push({ firstOutside, lastOutside: entry - 1, entry, lastInside, lateralTravel });
  }
  return out;
}

function cutIns(t: Prepared): DerivedEvent[] {
  const th = T.cut_in;
  return corridorEntries(t.points).flatMap((e) => {
    const pts = t.points;
    const outside = e.lastOutside - e.firstOutside + 1;
    const stayMs = pts[e.lastInside]!.ts_ms - pts[e.entry]!.ts_ms;
    if (outside < th.min_outside_points || stayMs < th.min_stay_ms || e.lateralTravel < th.min_lateral_travel)
      return [];
    const entry = pts[e.entry]!;
    return [
      trackEvent('cut_in', t, pts[e.lastOutside]!, pts[e.lastInside]!, {
        from_side: sideOf(pts[e.lastOutside]!),
        outside_points: outside,
        entry_frame_index: entry.frame_index,
        stay_ms: round(stayMs),
        lateral_travel: round(e.lateralTravel),
        entry_speed_px_s: entry.dyn?.speed_px_s == null ? null : round(entry.dyn.speed_px_s),
        entry_heading_deg: entry.dyn?.heading_deg == null ? null : round(entry.dyn.heading_deg),
      }),
    ];
  });
}

function crossings(t: Prepared): DerivedEvent[] {
  const th = T.pedestrian_crossing;
  return corridorEntries(t.points).flatMap((e) => {
    const pts = t.points;
    const outside = e.lastOutside - e.firstOutside + 1;
    const inside = e.lastInside - e.entry + 1;
    if (
      outside < th.min_outside_points ||
      inside < th.min_inside_points ||
      e.lateralTravel < th.min_lateral_travel
    )
      return [];
    const left = pts[e.lastInside + 1];
    const fromSide = sideOf(pts[e.lastOutside]!);
    const leftBeside = left !== undefined && beside(left);
    return [
      trackEvent('pedestrian_crossing', t, pts[e.lastOutside]!, left ?? pts[e.lastInside]!, {
        from_side: fromSide,
        to_side: leftBeside ? sideOf(left) : null,
        crossed_fully: leftBeside && sideOf(left) !== fromSide,
        inside_points: inside,
        lateral_travel: round(e.lateralTravel),
      }),
    ];
  });
}

function closePasses(t: Prepared): DerivedEvent[] {
  const max = T.close_pass.max_distance_m;
  const ground = t.points.map((p) => groundPoint(p.box, p.camera));
  const distance = ground.map((g) => (g ? Math.hypot(g.x, g.z) : Infinity));
  return runs(t.points.length, (i) => beside(t.points[i]!) && distance[i]! < max).map(([a, b]) => {
    let nearest = a;
    for (let i = a; i <= b; i++) if (distance[i]! < distance[nearest]!) nearest = i;
    const g = ground[nearest]!;
    return trackEvent('close_pass', t, t.points[a]!, t.points[b]!, {
      min_distance_m: round(distance[nearest]!),
      lateral_m: round(g.x),
      forward_m: round(g.z),
      nearest_frame_index: t.points[nearest]!.frame_index,
      side: sideOf(t.points[nearest]!),
    });
  });
}

/** The nearest corridor vehicle's range on each frame: the lead is the one at that range. */
function leadRanges(tracks: readonly Prepared[]): Map<string, number> {
  const out = new Map<string, number>();
  for (const t of tracks)
    for (const p of t.points) {
      const r = p.dyn?.range_m;
      if (r != null && inCorridor(p) && r < (out.get(p.frame_id) ?? Infinity)) out.set(p.frame_id, r);
    }
  return out;
}

function leadBraking(t: Prepared, lead: ReadonlyMap<string, number>): DerivedEvent[] {
  const th = T.lead_vehicle_braking;
  const pts = t.points;
  const braking = (i: number) => {
    const p = pts[i]!;
    const d = p.dyn;
    return (
      d !== null &&
      d.range_m !== null &&
      d.accel_mps2 !== null &&
      p.ego_speed_mps !== null &&
      inCorridor(p) &&
      lead.get(p.frame_id) === d.range_m &&
      d.accel_mps2 <= -th.min_lead_decel_mps2
    );
  };
  return runs(pts.length, braking).flatMap(([a, b]) => {
    const first = pts[a]!;
    const last = pts[b]!;
    const ms = last.ts_ms - first.ts_ms;
    if (ms < th.min_duration_ms) return [];
    const s = ms / 1000;
    const closing = (first.dyn!.range_m! - last.dyn!.range_m!) / s;
    const egoAccel = (last.ego_speed_mps! - first.ego_speed_mps!) / s;
    if (closing < th.min_closing_mps || Math.abs(egoAccel) > th.max_ego_accel_mps2) return [];
    const decels = pts.slice(a, b + 1).map((p) => -p.dyn!.accel_mps2!);
    return [
      trackEvent('lead_vehicle_braking', t, first, last, {
        peak_decel_mps2: round(Math.max(...decels)),
        mean_decel_mps2: round(decels.reduce((x, y) => x + y, 0) / decels.length),
        range_from_m: round(first.dyn!.range_m!),
        range_to_m: round(last.dyn!.range_m!),
        closing_mps: round(closing),
        ego_speed_from_mps: round(first.ego_speed_mps!),
        ego_speed_to_mps: round(last.ego_speed_mps!),
      }),
    ];
  });
}

const egoEvent = (
  from: { ts_ms: number; frame_id: string | null },
  to: { ts_ms: number; frame_id: string | null },
  evidence: Record<string, unknown>,
): DerivedEvent => ({
  kind: 'hard_braking',
  t_start_ms: from.ts_ms,
  t_end_ms: to.ts_ms,
  start_frame: from.frame_id,
  end_frame: to.frame_id,
  track_ids: [],
  classes: [],
  evidence,
});

/** Runs of consecutive frame pairs decelerating at the threshold or more, from the frames' ego speed. */
function hardBrakingFromSpeed(ego: readonly EgoSample[]): DerivedEvent[] {
  const th = T.hard_braking;
  const s = [...ego].sort((a, b) => a.ts_ms - b.ts_ms);
  const decel = s.slice(1).map((b, k) => {
    const a = s[k]!;
    return b.ts_ms > a.ts_ms ? -(b.speed_mps - a.speed_mps) / ((b.ts_ms - a.ts_ms) / 1000) : -Infinity;
  });
  return runs(decel.length, (k) => decel[k]! >= th.min_decel_mps2).flatMap(([a, b]) => {
    const from = s[a]!;
    const to = s[b + 1]!;
    if (to.ts_ms - from.ts_ms < th.min_duration_ms) return [];
    return [
      egoEvent(from, to, {
        basis: 'ego_speed',
        speed_from_mps: round(from.speed_mps),
        speed_to_mps: round(to.speed_mps),
        peak_decel_mps2: round(Math.max(...decel.slice(a, b + 1))),
        mean_decel_mps2: round((from.speed_mps - to.speed_mps) / ((to.ts_ms - from.ts_ms) / 1000)),
      }),
    ];
  });
}

const eligible = (kind: DrivingEventKind, t: Prepared) => DRIVING_EVENT_PARTICIPANTS[kind].includes(t.l1);

/**
 * Derives a session's driving events by the taxonomy's rules (docs/driving-events.md). A rule that
 * lacks its input says so in `skipped` instead of finding nothing.
 */
export function deriveDrivingEvents(input: DeriveInput): Derivation {
  const tracks = input.tracks.map(prepare);
  const events: DerivedEvent[] = [];
  const ran: DrivingEventKind[] = ['cut_in', 'pedestrian_crossing', 'close_pass'];
  const skipped: Derivation['skipped'] = [];
  for (const t of tracks) {
    if (eligible('cut_in', t)) events.push(...cutIns(t));
    if (eligible('pedestrian_crossing', t)) events.push(...crossings(t));
    if (eligible('close_pass', t)) events.push(...closePasses(t));
  }

  if (tracks.some((t) => t.points.some((p) => p.ego_speed_mps !== null))) {
    ran.push('lead_vehicle_braking');
    const vehicles = tracks.filter((t) => eligible('lead_vehicle_braking', t));
    const lead = leadRanges(vehicles);
    for (const t of vehicles) events.push(...leadBraking(t, lead));
  } else
    skipped.push({
      kind: 'lead_vehicle_braking',
      reason: 'no tracked object is on a frame with context.ego_speed_mps, so no ground speed is known',
    });

  if (input.inertial.length) {
    ran.push('hard_braking');
    for (const e of input.inertial.filter((i) => i.kind === 'hard_braking'))
      events.push(
        egoEvent(
          { ts_ms: e.t_start_ms, frame_id: null },
          { ts_ms: e.t_end_ms ?? e.t_start_ms, frame_id: null },
          { basis: 'imu', timeline_event_id: e.id, imu: e.attrs },
        ),
      );
  } else if (input.ego.length >= 2) {
    ran.push('hard_braking');
    events.push(...hardBrakingFromSpeed(input.ego));
  } else
    skipped.push({
      kind: 'hard_braking',
      reason:
        'the session has no inertial timeline events and fewer than two frames with context.ego_speed_mps',
    });

  events.sort(
    (a, b) => a.t_start_ms - b.t_start_ms || a.kind.localeCompare(b.kind) || a.t_end_ms - b.t_end_ms,
  );
  return { deriver_version: DERIVER_VERSION, events, ran, skipped };
}

/** The same event: one kind, overlapping spans (ends included) and the same set of tracks. */
export function sameEvent(
  a: { kind: string; t_start_ms: number; t_end_ms: number; track_ids: readonly string[] },
  b: { kind: string; t_start_ms: number; t_end_ms: number; track_ids: readonly string[] },
): boolean {
  if (a.kind !== b.kind || a.t_start_ms > b.t_end_ms || b.t_start_ms > a.t_end_ms) return false;
  const ta = new Set(a.track_ids);
  const tb = new Set(b.track_ids);
  return ta.size === tb.size && [...ta].every((id) => tb.has(id));
}
