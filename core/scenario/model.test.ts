import { buildScenario, type ScenarioClassRow, type ScenarioInput, type ScenarioObjectRow } from './model';

const CLASSES: ScenarioClassRow[] = [
  { id: 1, name: 'car', l0: 'object', l1: 'vehicle', parentId: null },
  { id: 2, name: 'taxi', l0: 'object', l1: 'vehicle', parentId: 1 },
  { id: 3, name: 'person', l0: 'object', l1: 'vru', parentId: null },
  { id: 4, name: 'traffic_cone', l0: 'infra', l1: 'barrier', parentId: null },
];

let seq = 0;
/** An object row; its frame's index is its time in tenths of a second. */
function row(over: Partial<ScenarioObjectRow> & { t: number }): ScenarioObjectRow {
  const { t, ...rest } = over;
  const id = `00000000-0000-4000-8000-${String(++seq).padStart(12, '0')}`;
  return {
    id,
    trackId: null,
    classId: 1,
    bbox: [10, 20, 30, 60],
    rbox: [],
    rotDeg: 0,
    state: 'accepted',
    source: 'human',
    conf: null,
    frame: { id: `frame-${t}`, index: t, timestampMs: t * 100 },
    ...rest,
  };
}

function input(objects: ScenarioObjectRow[], over: Partial<ScenarioInput> = {}): ScenarioInput {
  return {
    session: { id: 'session-1', name: 'drive' },
    frames: { count: 50, lastTimestampMs: 4900, size: { width: 640, height: 360 } },
    objects,
    classes: CLASSES,
    states: ['accepted', 'review'],
    generatedAt: new Date('2025-01-02T03:04:05.000Z'),
    ...over,
  };
}

describe('buildScenario', () => {
  it('makes one entity per track and one per untracked object, ordered by first appearance', () => {
    const model = buildScenario(
      input([
        row({ t: 3, trackId: 'B', classId: 3 }),
        row({ t: 1, trackId: 'A' }),
        row({ t: 2, trackId: 'A' }),
        row({ t: 2, classId: 4, id: 'cone' }),
        row({ t: 4, trackId: 'B', classId: 3 }),
      ]),
    );
    expect(model.entities.map((e) => [e.name, e.samples.length, e.category.kind])).toEqual([
      ['track_A', 2, 'vehicle'],
      ['object_cone', 1, 'misc_object'],
      ['track_B', 2, 'pedestrian'],
    ]);
    expect(model.session).toEqual({
      id: 'session-1',
      name: 'drive',
      frameCount: 50,
      endTimeS: 4.9,
      imageSize: { width: 640, height: 360 },
    });
    expect(model.generatedAt).toBe('2025-01-02T03:04:05.000Z');
  });

  it('samples centres, sizes and times in the image plane', () => {
    const [e] = buildScenario(input([row({ t: 7, trackId: 'A', bbox: [100, 50, 140, 130] })])).entities;
    expect(e!.samples[0]).toMatchObject({
      timeS: 0.7,
      frameIndex: 7,
      center: [120, 90],
      size: [40, 80],
      bbox: [100, 50, 140, 130],
    });
    expect(e!.medianSize).toEqual([40, 80]);
  });

  it('takes a rotated box its own size and keeps the enclosure centre', () => {
    const [e] = buildScenario(
      input([row({ t: 1, bbox: [90, 90, 110, 110], rbox: [95, 80, 105, 120], rotDeg: 90 })]),
    ).entities;
    expect(e!.samples[0]).toMatchObject({ center: [100, 100], size: [10, 40], rotDeg: 90 });
  });

  it('keeps times strictly increasing: one sample per instant, the most confident, a human box counting as certain', () => {
    const human = row({ t: 2, trackId: 'A', conf: null, source: 'human' });
    const model = buildScenario(
      input([
        row({ t: 1, trackId: 'A', conf: 0.4 }),
        row({ t: 1, trackId: 'A', conf: 0.9, bbox: [0, 0, 10, 10], id: 'sure' }),
        row({ t: 2, trackId: 'A', conf: 0.99 }),
        human,
        row({ t: 3, trackId: 'A', conf: 0.5 }),
      ]),
    );
    const [e] = model.entities;
    expect(e!.samples.map((s) => s.timeS)).toEqual([0.1, 0.2, 0.3]);
    expect(e!.samples.map((s) => s.objectId).slice(0, 2)).toEqual(['sure', human.id]);
    expect(e!.duplicatesDropped).toBe(2);
  });

  it('treats two frames at one timestamp as one instant', () => {
    const a = row({ t: 1, trackId: 'A', conf: 0.3 });
    const b = row({ t: 1, trackId: 'A', conf: 0.6 });
    b.frame = { id: 'other', index: 2, timestampMs: 100 };
    const [e] = buildScenario(input([a, b])).entities;
    expect(e!.samples.map((s) => s.objectId)).toEqual([b.id]);
  });

  it('names a track by the class most of its samples carry, a tie going to the first seen', () => {
    const model = buildScenario(
      input([
        row({ t: 1, trackId: 'A', classId: 2 }),
        row({ t: 2, trackId: 'A', classId: 1 }),
        row({ t: 3, trackId: 'A', classId: 1 }),
        row({ t: 1, trackId: 'B', classId: 2 }),
        row({ t: 2, trackId: 'B', classId: 1 }),
      ]),
    );
    expect(model.entities.map((e) => [e.name, e.class.name])).toEqual([
      ['track_A', 'car'],
      ['track_B', 'taxi'],
    ]);
    // taxi's category comes through its parent, car.
    expect(model.entities[1]!.category).toEqual({ kind: 'vehicle', category: 'car' });
    expect(model.entities[1]!.samples.map((s) => s.className)).toEqual(['taxi', 'car']);
  });

  it('measures the motion the trajectory needs, in pixels per second', () => {
    const [e] = buildScenario(
      input([
        row({ t: 0, trackId: 'A', bbox: [0, 0, 10, 10] }),
        row({ t: 10, trackId: 'A', bbox: [10, 0, 20, 10] }), // 10 px in 1 s
        row({ t: 20, trackId: 'A', bbox: [40, 0, 50, 10] }), // 30 px in 1 s
        row({ t: 30, trackId: 'A', bbox: [50, 0, 60, 10] }), // 10 px in 1 s
      ]),
    ).entities;
    expect(e!.motion).toEqual({ maxSpeed: 30, maxAcceleration: 20, maxDeceleration: 20 });
    const [still] = buildScenario(input([row({ t: 0 })])).entities;
    expect(still!.motion).toEqual({ maxSpeed: 0, maxAcceleration: 0, maxDeceleration: 0 });
  });

  it('answers an empty scenario for a session without objects, lasting as long as its frames', () => {
    const model = buildScenario(input([], { frames: { count: 3, lastTimestampMs: 666, size: null } }));
    expect(model.entities).toEqual([]);
    expect(model.session.endTimeS).toBe(0.666);
    const none = buildScenario(input([], { frames: { count: 0, lastTimestampMs: null, size: null } }));
    expect(none.session.endTimeS).toBe(0);
  });

  it('refuses rows that break the store’s invariants', () => {
    expect(() => buildScenario(input([row({ t: 1, classId: 99 })]))).toThrow(/class 99/);
    expect(() => buildScenario(input([row({ t: 1, bbox: [1, 2, 3] })]))).toThrow(/four numbers/);
  });

  it('handles a session with more entities than a call takes arguments', () => {
    const objects = Array.from({ length: 150_000 }, (_, i) => row({ t: i }));
    const model = buildScenario(input(objects));
    expect(model.entities).toHaveLength(150_000);
    expect(model.session.endTimeS).toBe(14_999.9);
  });
});
