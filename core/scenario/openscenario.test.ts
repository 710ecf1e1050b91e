import { toScenarioJson } from './json';
import { buildScenario, type ScenarioObjectRow } from './model';
import { toOpenScenarioXml } from './openscenario';

const CLASSES = [
  { id: 1, name: 'car', l0: 'object', l1: 'vehicle', parentId: null },
  { id: 3, name: 'person', l0: 'object', l1: 'vru', parentId: null },
  { id: 4, name: 'traffic_cone', l0: 'infra', l1: 'barrier', parentId: null },
];

function obj(
  id: string,
  frame: number,
  trackId: string | null,
  classId: number,
  x: number,
): ScenarioObjectRow {
  return {
    id,
    trackId,
    classId,
    bbox: [x, 100, x + 40, 180],
    rbox: [],
    rotDeg: 0,
    state: 'accepted',
    source: 'fused',
    conf: 0.9,
    frame: { id: `f${frame}`, index: frame, timestampMs: frame * 250 },
  };
}

const model = (objects: ScenarioObjectRow[], name = 'drive 1') =>
  buildScenario({
    session: { id: 'sess', name },
    frames: { count: 8, lastTimestampMs: 1750, size: { width: 1280, height: 720 } },
    objects,
    classes: CLASSES,
    states: ['accepted'],
    generatedAt: new Date('2025-06-01T12:00:00.000Z'),
  });

const count = (xml: string, pattern: RegExp) => (xml.match(pattern) ?? []).length;

describe('OpenSCENARIO document', () => {
  const objects = [
    obj('a1', 0, 'T1', 1, 0),
    obj('a2', 1, 'T1', 1, 10),
    obj('a3', 2, 'T1', 1, 25),
    obj('p1', 3, 'T2', 3, 500),
    obj('p2', 5, 'T2', 3, 490),
    obj('cone', 4, null, 4, 900),
  ];
  const xml = toOpenScenarioXml(model(objects));

  it('declares OpenSCENARIO 1.2 and says positions are image-plane pixels', () => {
    expect(xml.startsWith('<?xml version="1.0" encoding="UTF-8"?>\n<OpenSCENARIO>\n')).toBe(true);
    expect(xml).toMatch(
      /<FileHeader revMajor="1" revMinor="2" date="2025-06-01T12:00:00.000Z" description="[^"]*image-plane pixel/,
    );
    expect(xml).toContain('<Property name="drivelab.coordinate_system" value="image_plane_px"/>');
    expect(xml).toContain('<Property name="drivelab.image_width_px" value="1280"/>');
  });

  it('writes one ScenarioObject per entity, of the kind its class calls for', () => {
    expect(count(xml, /<ScenarioObject /g)).toBe(3);
    expect(xml).toMatch(/<ScenarioObject name="track_T1">\s*<Vehicle name="car" vehicleCategory="car">/);
    expect(xml).toMatch(
      /<ScenarioObject name="track_T2">\s*<Pedestrian name="person" mass="0" pedestrianCategory="pedestrian">/,
    );
    expect(xml).toMatch(
      /<ScenarioObject name="object_cone">\s*<MiscObject name="traffic_cone" mass="0" miscObjectCategory="obstacle">/,
    );
    expect(xml).toContain('<Dimensions width="80" length="40" height="0"/>');
  });

  it('places each entity, hidden, at its first sample', () => {
    expect(count(xml, /<Private entityRef=/g)).toBe(3);
    expect(xml).toMatch(
      /<Private entityRef="track_T1">\s*<PrivateAction>\s*<TeleportAction>\s*<Position>\s*<WorldPosition x="20" y="140" z="0" h="0"\/>/,
    );
  });

  it('replays tracks as polylines on the drive clock and shows single samples only when seen', () => {
    expect(count(xml, /<FollowTrajectoryAction>/g)).toBe(2);
    const times = [...xml.matchAll(/<Vertex time="([^"]+)">/g)].map((m) => Number(m[1]));
    expect(times).toEqual([0, 0.25, 0.5, 0.75, 1.25]);
    expect(xml).toContain('<Timing domainAbsoluteRelative="absolute" scale="1" offset="0"/>');
    expect(xml).toMatch(
      /name="object_cone first seen"[^>]*>\s*<ByValueCondition>\s*<SimulationTimeCondition value="1" rule="greaterOrEqual"/,
    );
    expect(xml).toMatch(
      /name="object_cone last seen"[^>]*>\s*<ByValueCondition>\s*<SimulationTimeCondition value="1" rule="greaterThan"/,
    );
    expect(xml).toMatch(
      /name="drive ends"[^>]*>\s*<ByValueCondition>\s*<SimulationTimeCondition value="1.75" rule="greaterThan"/,
    );
  });

  it('writes the heading in radians from the rotation in degrees', () => {
    const rotated = { ...obj('r', 0, null, 1, 0), rotDeg: -90, rbox: [0, 100, 40, 180] };
    expect(toOpenScenarioXml(model([rotated]))).toContain(
      '<WorldPosition x="20" y="140" z="0" h="-1.570796"/>',
    );
  });

  it('leaves the Story out when there is nothing to replay', () => {
    const empty = toOpenScenarioXml(model([]));
    expect(empty).toContain('<Entities/>');
    expect(empty).toMatch(/<Init>\s*<Actions\/>\s*<\/Init>\s*<StopTrigger>/);
    expect(empty).not.toContain('<Story ');
  });

  it('escapes whatever the session is called', () => {
    const named = toOpenScenarioXml(model([], 'a "b" <c> & d\ne'));
    expect(named).toContain('value="a &quot;b&quot; &lt;c&gt; &amp; d&#10;e"');
  });
});

describe('JSON description', () => {
  it('carries the same entities and times, plus each sample’s object', () => {
    const m = model([obj('a1', 0, 'T1', 1, 0), obj('a2', 2, 'T1', 1, 10), obj('cone', 1, null, 4, 900)]);
    const json = toScenarioJson(m);
    expect(json).toMatchObject({
      format: 'drivelab.scenario',
      format_version: 1,
      session: { id: 'sess', end_time_s: 1.75, image_size: { width: 1280, height: 720 } },
      coordinate_system: { kind: 'image_plane', unit: 'px', origin: 'top_left', y_axis: 'down' },
      states: ['accepted'],
      entity_count: 2,
    });
    expect(json.entities.map((e) => [e.name, e.kind, e.category, e.samples.map((s) => s.time_s)])).toEqual([
      ['track_T1', 'vehicle', 'car', [0, 0.5]],
      ['object_cone', 'misc_object', 'obstacle', [0.25]],
    ]);
    expect(json.entities[0]!.samples[1]).toEqual({
      time_s: 0.5,
      frame_id: 'f2',
      frame_index: 2,
      object_id: 'a2',
      class_id: 1,
      class_name: 'car',
      center_px: [30, 140],
      size_px: [40, 80],
      bbox_px: [10, 100, 50, 180],
      rot_deg: 0,
      state: 'accepted',
      source: 'fused',
      conf: 0.9,
    });
    // It survives JSON as it is: no undefined, no NaN.
    expect(JSON.parse(JSON.stringify(json))).toEqual(json);
  });
});
