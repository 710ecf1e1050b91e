import { entityCategory, type EntityCategory } from './categories';

/**
 * A session's objects over time as a scenario (docs/scenario.md): each track becomes one entity
 * with a trajectory of image-plane boxes, each object without a track an entity of one sample.
 * Pure: the route reads the rows, the serialisers (OpenSCENARIO XML, JSON) write the model.
 */

/** Bumped when the JSON description changes shape. */
export const SCENARIO_FORMAT_VERSION = 1;

/** An object as the route reads it, with the frame it sits on. */
export interface ScenarioObjectRow {
  id: string;
  trackId: string | null;
  classId: number;
  /** [x1, y1, x2, y2] in frame pixels; encloses the shape. */
  bbox: number[];
  /** The box before rotation for a rotated box, else empty (docs/annotations.md, Geometry). */
  rbox: number[];
  rotDeg: number;
  state: string;
  source: string;
  conf: number | null;
  frame: { id: string; index: number; timestampMs: number };
}

export interface ScenarioClassRow {
  id: number;
  name: string;
  l0: string;
  l1: string;
  parentId: number | null;
}

export interface ScenarioInput {
  session: { id: string; name: string };
  /** All of the session's frames, objects or not: the scenario lasts as long as the drive. */
  frames: { count: number; lastTimestampMs: number | null; size: ImageSize | null };
  objects: readonly ScenarioObjectRow[];
  /** The ontology, for each class's l0/l1 and ancestors. */
  classes: readonly ScenarioClassRow[];
  /** The object states the export kept. */
  states: readonly string[];
  generatedAt: Date;
}

export interface ImageSize {
  width: number;
  height: number;
}

export interface ScenarioSample {
  /** Seconds from the start of the drive (the frame's timestamp). */
  timeS: number;
  frameId: string;
  frameIndex: number;
  objectId: string;
  classId: number;
  className: string;
  /** Box centre, pixels (x right, y down from the top-left corner). */
  center: [number, number];
  /** The box's own width and height in pixels, before rotation. */
  size: [number, number];
  /** The enclosing box as stored, [x1, y1, x2, y2] pixels. */
  bbox: [number, number, number, number];
  /** Clockwise in the image, degrees, (−180, 180]. */
  rotDeg: number;
  state: string;
  source: string;
  conf: number | null;
}

export interface ScenarioEntity {
  /** Unique in the scenario: `track_<track id>` or `object_<object id>`. */
  name: string;
  trackId: string | null;
  /** The class most of its samples carry. */
  class: { id: number; name: string; l0: string; l1: string };
  category: EntityCategory;
  /** Strictly increasing in time, one per instant. */
  samples: ScenarioSample[];
  /** Other boxes of the track at an instant that already had one (tracker duplicates). */
  duplicatesDropped: number;
  /** Median box size over the samples, pixels [width, height]. */
  medianSize: [number, number];
  /** What the recorded motion itself needs, in pixels per second (and per second squared). */
  motion: { maxSpeed: number; maxAcceleration: number; maxDeceleration: number };
}

export interface ScenarioModel {
  formatVersion: typeof SCENARIO_FORMAT_VERSION;
  generatedAt: string;
  session: {
    id: string;
    name: string;
    frameCount: number;
    /** The last frame's time, seconds: when the scenario stops. */
    endTimeS: number;
    /** The frames' size when they all share one, else null. */
    imageSize: ImageSize | null;
  };
  states: string[];
  entities: ScenarioEntity[];
}

/** Microseconds: finer than any frame rate, coarse enough that two readings of one instant agree. */
const TIME_DIGITS = 6;
/** A thousandth of a pixel. */
const PIXEL_DIGITS = 3;

export function roundTo(value: number, digits: number): number {
  const f = 10 ** digits;
  const r = Math.round(value * f) / f;
  return r === 0 ? 0 : r;
}

const px = (v: number) => roundTo(v, PIXEL_DIGITS);

function sampleOf(row: ScenarioObjectRow, cls: ScenarioClassRow): ScenarioSample {
  const [x1, y1, x2, y2] = boxOf(row.bbox, `object ${row.id} bbox`);
  // A rotated box's own size is its unrotated box; its centre is the enclosure's.
  const own = row.rbox.length === 4 ? boxOf(row.rbox, `object ${row.id} rbox`) : [x1, y1, x2, y2];
  return {
    timeS: roundTo(row.frame.timestampMs / 1000, TIME_DIGITS),
    frameId: row.frame.id,
    frameIndex: row.frame.index,
    objectId: row.id,
    classId: cls.id,
    className: cls.name,
    center: [px((x1 + x2) / 2), px((y1 + y2) / 2)],
    size: [px(own[2]! - own[0]!), px(own[3]! - own[1]!)],
    bbox: [px(x1), px(y1), px(x2), px(y2)],
    rotDeg: roundTo(row.rotDeg, TIME_DIGITS),
    state: row.state,
    source: row.source,
    conf: row.conf,
  };
}

function boxOf(box: number[], what: string): [number, number, number, number] {
  if (box.length !== 4 || !box.every(Number.isFinite)) throw new Error(`${what} is not four numbers`);
  return [box[0]!, box[1]!, box[2]!, box[3]!];
}

/** A human-drawn box has no confidence and counts as certain; ties go to the smaller id, for a stable answer. */
function preferred(a: ScenarioSample, b: ScenarioSample): ScenarioSample {
  const ca = a.conf ?? 1;
  const cb = b.conf ?? 1;
  if (ca !== cb) return ca > cb ? a : b;
  return a.objectId <= b.objectId ? a : b;
}

function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

function motionOf(samples: ScenarioSample[]): ScenarioEntity['motion'] {
  const speeds: Array<{ v: number; t: number }> = [];
  for (let i = 1; i < samples.length; i++) {
    const a = samples[i - 1]!;
    const b = samples[i]!;
    const dt = b.timeS - a.timeS;
    const d = Math.hypot(b.center[0] - a.center[0], b.center[1] - a.center[1]);
    speeds.push({ v: d / dt, t: (a.timeS + b.timeS) / 2 });
  }
  let maxAcceleration = 0;
  let maxDeceleration = 0;
  for (let i = 1; i < speeds.length; i++) {
    const a = (speeds[i]!.v - speeds[i - 1]!.v) / (speeds[i]!.t - speeds[i - 1]!.t);
    maxAcceleration = Math.max(maxAcceleration, a);
    maxDeceleration = Math.max(maxDeceleration, -a);
  }
  return {
    maxSpeed: px(speeds.reduce((m, s) => Math.max(m, s.v), 0)),
    maxAcceleration: px(maxAcceleration),
    maxDeceleration: px(maxDeceleration),
  };
}

function ancestorsOf(cls: ScenarioClassRow, byId: Map<number, ScenarioClassRow>): string[] {
  const names: string[] = [];
  const seen = new Set([cls.id]);
  for (let p = cls.parentId; p !== null && !seen.has(p);) {
    seen.add(p);
    const parent = byId.get(p);
    if (!parent) break;
    names.push(parent.name);
    p = parent.parentId;
  }
  return names;
}

/** The class most samples carry; a tie goes to the class seen first. */
function majorityClass(samples: ScenarioSample[]): number {
  const counts = new Map<number, number>();
  for (const s of samples) counts.set(s.classId, (counts.get(s.classId) ?? 0) + 1);
  const top = Math.max(...counts.values());
  return samples.find((s) => counts.get(s.classId) === top)!.classId;
}

export function buildScenario(input: ScenarioInput): ScenarioModel {
  const classById = new Map(input.classes.map((c) => [c.id, c]));
  const classOf = (id: number) => {
    const cls = classById.get(id);
    if (!cls) throw new Error(`class ${id} is not in the ontology`);
    return cls;
  };

  // Objects of one track gather under it; each object without one stands alone.
  const groups = new Map<string, { trackId: string | null; samples: ScenarioSample[] }>();
  for (const row of input.objects) {
    const sample = sampleOf(row, classOf(row.classId));
    const name = row.trackId ? `track_${row.trackId}` : `object_${row.id}`;
    let group = groups.get(name);
    if (!group) groups.set(name, (group = { trackId: row.trackId, samples: [] }));
    group.samples.push(sample);
  }

  const entities: ScenarioEntity[] = [];
  for (const [name, group] of groups) {
    // One sample per instant keeps trajectory times strictly increasing.
    const byTime = new Map<number, ScenarioSample>();
    for (const s of group.samples) {
      const held = byTime.get(s.timeS);
      byTime.set(s.timeS, held ? preferred(held, s) : s);
    }
    const samples = [...byTime.values()].sort((a, b) => a.timeS - b.timeS || a.frameIndex - b.frameIndex);
    const cls = classOf(majorityClass(samples));
    entities.push({
      name,
      trackId: group.trackId,
      class: { id: cls.id, name: cls.name, l0: cls.l0, l1: cls.l1 },
      category: entityCategory(cls.name, cls.l1, ancestorsOf(cls, classById)),
      samples,
      duplicatesDropped: group.samples.length - samples.length,
      medianSize: [px(median(samples.map((s) => s.size[0]))), px(median(samples.map((s) => s.size[1])))],
      motion: motionOf(samples),
    });
  }
  entities.sort(
    (a, b) => a.samples[0]!.timeS - b.samples[0]!.timeS || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0),
  );

  // Reduced, not spread: a session can hold more entities than a call has arguments.
  const lastSampleS = entities.reduce((m, e) => Math.max(m, e.samples.at(-1)!.timeS), 0);
  const lastFrameS = roundTo((input.frames.lastTimestampMs ?? 0) / 1000, TIME_DIGITS);
  return {
    formatVersion: SCENARIO_FORMAT_VERSION,
    generatedAt: input.generatedAt.toISOString(),
    session: {
      id: input.session.id,
      name: input.session.name,
      frameCount: input.frames.count,
      endTimeS: Math.max(lastSampleS, lastFrameS),
      imageSize: input.frames.size,
    },
    states: [...new Set(input.states)],
    entities,
  };
}
