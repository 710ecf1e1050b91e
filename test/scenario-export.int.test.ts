import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { OPENSCENARIO_1_2_ENUMS } from '../testkit/openscenario';
import { useApiForFile } from '../testkit/api';

/**
 * GET /api/export/scenario/session/{session_id} and GET /api/export/scenario/event/{event_id}
 * against the real PostgreSQL (docs/scenario.md). The OpenSCENARIO document is read back by an
 * independent XML parser (fast-xml-parser) and checked against the OpenSCENARIO 1.2 schema's
 * content model for every element it holds, and against the rows it was made from.
 */
const ctx = useApiForFile();

interface XmlNode {
  name: string;
  attrs: Record<string, string>;
  children: XmlNode[];
}

/** The document as a tree, by a parser that shares no code with the writer. */
function parseXml(xml: string): XmlNode {
  expect(XMLValidator.validate(xml)).toBe(true);
  const parser = new XMLParser({
    preserveOrder: true,
    ignoreAttributes: false,
    attributeNamePrefix: '',
    parseAttributeValue: false,
    htmlEntities: true,
  });
  type Entry = Record<string, unknown>;
  const convert = (entry: Entry): XmlNode | null => {
    const name = Object.keys(entry).find((k) => k !== ':@');
    if (!name || name.startsWith('?') || name === '#text') return null;
    return {
      name,
      attrs: (entry[':@'] as Record<string, string> | undefined) ?? {},
      children: (entry[name] as Entry[]).map(convert).filter((n): n is XmlNode => n !== null),
    };
  };
  const roots = (parser.parse(xml) as Entry[]).map(convert).filter((n): n is XmlNode => n !== null);
  expect(roots).toHaveLength(1);
  return roots[0]!;
}

const walk = (
  node: XmlNode,
  visit: (n: XmlNode, parent: XmlNode | null) => void,
  parent: XmlNode | null = null,
) => {
  visit(node, parent);
  for (const c of node.children) walk(c, visit, node);
};
const all = (root: XmlNode, name: string) => {
  const found: XmlNode[] = [];
  walk(root, (n) => n.name === name && found.push(n));
  return found;
};
const child = (node: XmlNode, name: string) => {
  const c = node.children.find((n) => n.name === name);
  if (!c) throw new Error(`${node.name} has no ${name}`);
  return c;
};

/**
 * The OpenSCENARIO 1.2 schema's content model (ASAM OpenSCENARIO 1.2 XSD) for the elements the
 * export writes: each element's children as a sequence pattern over their names (or an xsd:all
 * set), its required attributes, and the enumerations of the attributes it uses. An element outside
 * this table fails: the export writes nothing it was not checked for.
 */
type Content = { seq: RegExp } | { all: { required: string[]; optional: string[] } };
interface ElementRule {
  content: Content;
  required?: string[];
}
const EMPTY: Content = { seq: /^$/ };
const TRIGGER: ElementRule = { content: { seq: /^(ConditionGroup )*$/ } };
const AXLE: ElementRule = {
  content: EMPTY,
  required: ['maxSteering', 'positionX', 'positionZ', 'trackWidth', 'wheelDiameter'],
};
const ENTITY_ALL = (required: string[], optional: string[]): Content => ({ all: { required, optional } });
const CONTENT_MODEL: Record<string, ElementRule> = {
  OpenSCENARIO: {
    content: {
      seq: /^FileHeader (ParameterDeclarations )?(VariableDeclarations )?CatalogLocations RoadNetwork Entities Storyboard $/,
    },
  },
  FileHeader: {
    content: { seq: /^(License )?(Properties )?$/ },
    required: ['author', 'date', 'description', 'revMajor', 'revMinor'],
  },
  Properties: { content: { seq: /^(Property )*(File )*(CustomContent )*$/ } },
  Property: { content: EMPTY, required: ['name', 'value'] },
  CatalogLocations: {
    content: ENTITY_ALL(
      [],
      [
        'VehicleCatalog',
        'ControllerCatalog',
        'PedestrianCatalog',
        'MiscObjectCatalog',
        'EnvironmentCatalog',
        'ManeuverCatalog',
        'TrajectoryCatalog',
        'RouteCatalog',
      ],
    ),
  },
  RoadNetwork: { content: { seq: /^(LogicFile )?(SceneGraphFile )?(TrafficSignals )?(UsedArea )?$/ } },
  Entities: { content: { seq: /^(ScenarioObject )*(EntitySelection )*$/ } },
  ScenarioObject: {
    content: {
      seq: /^(CatalogReference |Vehicle |Pedestrian |MiscObject |ExternalObjectReference )(ObjectController )*$/,
    },
    required: ['name'],
  },
  Vehicle: {
    content: ENTITY_ALL(['BoundingBox', 'Performance', 'Axles', 'Properties'], ['ParameterDeclarations']),
    required: ['name', 'vehicleCategory'],
  },
  Pedestrian: {
    content: ENTITY_ALL(['BoundingBox', 'Properties'], ['ParameterDeclarations']),
    required: ['mass', 'name', 'pedestrianCategory'],
  },
  MiscObject: {
    content: ENTITY_ALL(['BoundingBox', 'Properties'], ['ParameterDeclarations']),
    required: ['mass', 'miscObjectCategory', 'name'],
  },
  BoundingBox: { content: ENTITY_ALL(['Center', 'Dimensions'], []) },
  Center: { content: EMPTY, required: ['x', 'y', 'z'] },
  Dimensions: { content: EMPTY, required: ['height', 'length', 'width'] },
  Performance: { content: EMPTY, required: ['maxAcceleration', 'maxDeceleration', 'maxSpeed'] },
  Axles: { content: { seq: /^FrontAxle RearAxle (AdditionalAxle )*$/ } },
  FrontAxle: AXLE,
  RearAxle: AXLE,
  Storyboard: { content: { seq: /^Init (Story )*StopTrigger $/ } },
  Init: { content: { seq: /^Actions $/ } },
  Actions: { content: { seq: /^(GlobalAction )*(UserDefinedAction )*(Private )*$/ } },
  Private: { content: { seq: /^(PrivateAction )+$/ }, required: ['entityRef'] },
  PrivateAction: {
    content: {
      seq: /^(LongitudinalAction |LateralAction |VisibilityAction |SynchronizeAction |ControllerAction |TeleportAction |RoutingAction )$/,
    },
  },
  TeleportAction: { content: { seq: /^Position $/ } },
  Position: {
    content: {
      seq: /^(WorldPosition |RelativeWorldPosition |RelativeObjectPosition |RoadPosition |RelativeRoadPosition |LanePosition |RelativeLanePosition |RoutePosition |GeoPosition |TrajectoryPosition )$/,
    },
  },
  WorldPosition: { content: EMPTY, required: ['x', 'y'] },
  VisibilityAction: {
    content: { seq: /^(SensorReferenceSet )?$/ },
    required: ['graphics', 'sensors', 'traffic'],
  },
  Story: { content: { seq: /^(ParameterDeclarations )?(Act )+$/ }, required: ['name'] },
  Act: { content: { seq: /^(ManeuverGroup )+StartTrigger (StopTrigger )?$/ }, required: ['name'] },
  ManeuverGroup: {
    content: { seq: /^Actors (CatalogReference )*(Maneuver )*$/ },
    required: ['maximumExecutionCount', 'name'],
  },
  Actors: { content: { seq: /^(EntityRef )*$/ }, required: ['selectTriggeringEntities'] },
  EntityRef: { content: EMPTY, required: ['entityRef'] },
  Maneuver: { content: { seq: /^(ParameterDeclarations )?(Event )+$/ }, required: ['name'] },
  Event: { content: { seq: /^(Action )+(StartTrigger )?$/ }, required: ['name', 'priority'] },
  Action: { content: { seq: /^(GlobalAction |UserDefinedAction |PrivateAction )$/ }, required: ['name'] },
  RoutingAction: {
    content: { seq: /^(AssignRouteAction |FollowTrajectoryAction |AcquirePositionAction )$/ },
  },
  // Trajectory and CatalogReference directly under the action are deprecated in 1.2: only TrajectoryRef.
  FollowTrajectoryAction: {
    content: ENTITY_ALL(['TimeReference', 'TrajectoryFollowingMode', 'TrajectoryRef'], []),
  },
  TrajectoryRef: { content: { seq: /^(Trajectory |CatalogReference )$/ } },
  Trajectory: { content: { seq: /^(ParameterDeclarations )?Shape $/ }, required: ['closed', 'name'] },
  Shape: { content: { seq: /^(Polyline |Clothoid |Nurbs )$/ } },
  Polyline: { content: { seq: /^Vertex (Vertex )+$/ } },
  Vertex: { content: { seq: /^Position $/ } },
  TimeReference: { content: { seq: /^(None |Timing )$/ } },
  Timing: { content: EMPTY, required: ['domainAbsoluteRelative', 'offset', 'scale'] },
  TrajectoryFollowingMode: { content: EMPTY, required: ['followingMode'] },
  StartTrigger: TRIGGER,
  StopTrigger: TRIGGER,
  ConditionGroup: { content: { seq: /^(Condition )+$/ } },
  Condition: {
    content: { seq: /^(ByEntityCondition |ByValueCondition )$/ },
    required: ['conditionEdge', 'delay', 'name'],
  },
  ByValueCondition: {
    content: {
      seq: /^(ParameterCondition |TimeOfDayCondition |SimulationTimeCondition |StoryboardElementStateCondition |UserDefinedValueCondition |TrafficSignalCondition |TrafficSignalControllerCondition |VariableCondition )$/,
    },
  },
  SimulationTimeCondition: { content: EMPTY, required: ['rule', 'value'] },
};

/** Enumerated attributes (OpenSCENARIO 1.2 simple types), as the schema lists them. */
const ENUMS = OPENSCENARIO_1_2_ENUMS;
/** xsd:double attributes: a finite decimal. */
const DOUBLES = new Set([
  'x',
  'y',
  'z',
  'h',
  'time',
  'value',
  'delay',
  'mass',
  'width',
  'length',
  'height',
  'maxSpeed',
  'maxAcceleration',
  'maxDeceleration',
  'maxSteering',
  'positionX',
  'positionZ',
  'trackWidth',
  'wheelDiameter',
  'offset',
  'scale',
]);

/** Every schema violation in the document, as readable lines (none expected). */
function contentModelViolations(root: XmlNode): string[] {
  const problems: string[] = [];
  walk(root, (node, parent) => {
    const where = `${parent ? `${parent.name}/` : ''}${node.name}`;
    const rule = CONTENT_MODEL[node.name];
    if (!rule) return void problems.push(`${where}: not an element the export was checked for`);
    const names = node.children.map((c) => c.name);
    if ('seq' in rule.content) {
      if (!rule.content.seq.test(names.map((n) => `${n} `).join('')))
        problems.push(`${where}: children [${names.join(', ')}] break ${rule.content.seq}`);
    } else {
      const { required, optional } = rule.content.all;
      for (const r of required) if (!names.includes(r)) problems.push(`${where}: lacks ${r}`);
      for (const n of names)
        if (!required.includes(n) && !optional.includes(n)) problems.push(`${where}: ${n} not allowed`);
      if (new Set(names).size !== names.length) problems.push(`${where}: repeats a child of an xsd:all`);
    }
    for (const r of rule.required ?? []) if (!(r in node.attrs)) problems.push(`${where}: lacks @${r}`);
    for (const [k, v] of Object.entries(node.attrs)) {
      // The header's and Property's `value`/`name` are strings; the time condition's value a double.
      const isDouble = DOUBLES.has(k) && !(node.name === 'Property' && k === 'value');
      if (isDouble && !(v.trim() !== '' && Number.isFinite(Number(v))))
        problems.push(`${where}: @${k}="${v}" is not a double`);
      if (ENUMS[k] && !ENUMS[k].includes(v)) problems.push(`${where}: @${k}="${v}" not in its enumeration`);
    }
  });
  if (root.name !== 'OpenSCENARIO') problems.push(`root is ${root.name}`);
  return problems;
}

/** xmllint, where installed, as a second reader of well-formedness; never required. */
function xmllintProblems(xml: string): string | null {
  const run = spawnSync('xmllint', ['--noout', '-'], { input: xml, encoding: 'utf8' });
  if (run.error) return null;
  return run.status === 0 ? '' : run.stderr;
}

describe('scenario export', () => {
  // Markup, whitespace an attribute would normalise, and a control character XML cannot carry.
  const sessionName = 'Ring road <north> & "loop"\n\tdawn \u0001';
  let sessionId: string;
  let emptySessionId: string;
  let framelessSessionId: string;
  const frameTimesMs = [0, 333.3, 666.7, 1000, 1333.3];
  const frames: string[] = [];
  const tracks: Record<'car' | 'person' | 'rejected', string> = { car: '', person: '', rejected: '' };
  const ids: Record<string, string> = {};
  let classIds: Record<string, number>;

  const place = async (
    key: string,
    frame: number,
    className: string,
    bbox: [number, number, number, number],
    opts: { trackId?: string; state?: string; conf?: number | null; rotDeg?: number } = {},
  ) => {
    const id = randomUUID();
    await ctx.api.deps.db.annoObject.create({
      data: {
        id,
        frameId: frames[frame]!,
        bbox,
        classId: classIds[className]!,
        conf: opts.conf === undefined ? 0.9 : opts.conf,
        source: opts.conf === null ? 'human' : 'fused',
        state: opts.state ?? 'accepted',
        trackId: opts.trackId ?? null,
        rotDeg: opts.rotDeg ?? 0,
      },
    });
    ids[key] = id;
  };

  beforeAll(async () => {
    const { db } = ctx.api.deps;
    classIds = Object.fromEntries(
      (
        await db.ontologyClass.findMany({ where: { name: { in: ['car', 'person', 'traffic_cone', 'dog'] } } })
      ).map((c) => [c.name, c.id]),
    );
    const makeSession = async (name: string, frameCount: number) => {
      const s = await db.session.create({ data: { name, sourceKind: 'frames' } });
      const made: string[] = [];
      for (let i = 0; i < frameCount; i++) {
        const f = await db.frame.create({
          data: {
            sessionId: s.id,
            index: i,
            timestampMs: frameTimesMs[i] ?? i * 333,
            width: 1280,
            height: 720,
            uri: `s3://frames/test/${randomUUID()}.jpg`,
          },
        });
        made.push(f.id);
      }
      return { id: s.id, frames: made };
    };
    const main = await makeSession(sessionName, 5);
    sessionId = main.id;
    frames.push(...main.frames);
    emptySessionId = (await makeSession('no objects', 3)).id;
    framelessSessionId = (await makeSession('no frames', 0)).id;
    for (const k of Object.keys(tracks) as Array<keyof typeof tracks>)
      tracks[k] = (await db.track.create({ data: { sessionId, trackerVersion: 'test' } })).id;

    // A car driving right across frames 0–3, its last box rotated.
    for (let i = 0; i < 4; i++)
      await place(`car${i}`, i, 'car', [100 + 40 * i, 300, 180 + 40 * i, 360], {
        trackId: tracks.car,
        rotDeg: i === 3 ? 30 : 0,
      });
    // A person in frames 1–3, the tracker twice in frame 2; a rejected box of it in frame 4.
    await place('person1', 1, 'person', [600, 200, 640, 300], { trackId: tracks.person, conf: null });
    await place('person2weak', 2, 'person', [590, 200, 630, 300], { trackId: tracks.person, conf: 0.6 });
    await place('person2', 2, 'person', [596, 202, 636, 302], { trackId: tracks.person, conf: 0.8 });
    await place('person3', 3, 'person', [592, 204, 632, 304], { trackId: tracks.person, conf: 0.7 });
    await place('person4', 4, 'person', [588, 206, 628, 306], { trackId: tracks.person, state: 'rejected' });
    // A track a reviewer rejected entirely.
    await place('ghost0', 0, 'car', [10, 10, 50, 50], { trackId: tracks.rejected, state: 'rejected' });
    await place('ghost1', 1, 'car', [12, 10, 52, 50], { trackId: tracks.rejected, state: 'rejected' });
    // Objects no tracker followed.
    await place('cone', 0, 'traffic_cone', [900, 500, 930, 560], { state: 'accepted' });
    await place('dog', 3, 'dog', [300, 600, 380, 680], { state: 'review', conf: 0.4 });
  });

  const exportSession = (id: string, query = '', token = ctx.token.reviewer) =>
    ctx.api.call('GET', `/api/export/scenario/session/${id}${query}`, { token });

  /** Entities the rows call for, counted from the database itself: one per track, one per untracked object. */
  const expectedEntityNames = async (id: string, states: string[]) => {
    const rows = await ctx.api.deps.db.annoObject.findMany({
      where: { frame: { sessionId: id }, state: { in: states } },
      select: { id: true, trackId: true },
    });
    return new Set(rows.map((r) => (r.trackId ? `track_${r.trackId}` : `object_${r.id}`)));
  };
  const NOT_REJECTED = ['auto_accept', 'review', 'annotate', 'accepted', 'submitted'];

  describe('GET /api/export/scenario/session/{session_id}', () => {
    let xml: string;
    let doc: XmlNode;
    beforeAll(async () => {
      const res = await exportSession(sessionId);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^application\/xml\b/);
      expect(res.headers.get('content-disposition')).toBe(
        `attachment; filename="scenario-${sessionId}.xosc"`,
      );
      xml = res.body as string;
      doc = parseXml(xml);
    });

    it('is well-formed and follows the OpenSCENARIO 1.2 content model in every element', () => {
      expect(contentModelViolations(doc)).toEqual([]);
      const lint = xmllintProblems(xml);
      if (lint !== null) expect(lint).toBe('');
      expect(child(doc, 'FileHeader').attrs).toMatchObject({
        revMajor: '1',
        revMinor: '2',
        author: 'drivelab',
      });
    });

    it('has a content-model check that does catch a broken document', () => {
      const broken = xml
        .replace('revMinor="2" ', '')
        .replace(/<Vertex time="[^"]+">/, '<Vertex time="soon">')
        .replace('<CatalogLocations/>\n  <RoadNetwork/>', '<RoadNetwork/>\n  <CatalogLocations/>')
        .replace('vehicleCategory="car"', 'vehicleCategory="automobile"');
      expect(contentModelViolations(parseXml(broken))).toEqual([
        'OpenSCENARIO: children [FileHeader, RoadNetwork, CatalogLocations, Entities, Storyboard] break ' +
          String(
            /^FileHeader (ParameterDeclarations )?(VariableDeclarations )?CatalogLocations RoadNetwork Entities Storyboard $/,
          ),
        'OpenSCENARIO/FileHeader: lacks @revMinor',
        'ScenarioObject/Vehicle: @vehicleCategory="automobile" not in its enumeration',
        'Polyline/Vertex: @time="soon" is not a double',
      ]);
    });

    it('says in the header that positions are image-plane pixels, and names the session', () => {
      const header = child(doc, 'FileHeader');
      expect(header.attrs.description).toContain('image-plane pixel');
      expect(header.attrs.description).toContain('not world coordinates');
      const props = Object.fromEntries(
        child(header, 'Properties').children.map((p) => [p.attrs.name, p.attrs.value]),
      );
      expect(props).toMatchObject({
        'drivelab.session_id': sessionId,
        'drivelab.session_name': sessionName.replace('\u0001', '\uFFFD'),
        'drivelab.coordinate_system': 'image_plane_px',
        'drivelab.frame_count': '5',
        'drivelab.image_width_px': '1280',
        'drivelab.image_height_px': '720',
        'drivelab.states': NOT_REJECTED.join(','),
      });
    });

    it('has one entity per track and per untracked object, rejected ones left out', async () => {
      const names = all(doc, 'ScenarioObject').map((o) => o.attrs.name!);
      expect(new Set(names).size).toBe(names.length);
      expect(new Set(names)).toEqual(await expectedEntityNames(sessionId, NOT_REJECTED));
      expect(names).toHaveLength(4);
      const kindOf = (name: string) => {
        const o = all(doc, 'ScenarioObject').find((s) => s.attrs.name === name)!;
        return [o.children[0]!.name, o.children[0]!.attrs.name];
      };
      expect(kindOf(`track_${tracks.car}`)).toEqual(['Vehicle', 'car']);
      expect(kindOf(`track_${tracks.person}`)).toEqual(['Pedestrian', 'person']);
      expect(kindOf(`object_${ids.cone}`)).toEqual(['MiscObject', 'traffic_cone']);
      expect(kindOf(`object_${ids.dog}`)).toEqual(['Pedestrian', 'dog']);
    });

    it('refers only to entities it declares, and places each one in Init', () => {
      const declared = new Set(all(doc, 'ScenarioObject').map((o) => o.attrs.name));
      const refs = [...all(doc, 'Private'), ...all(doc, 'EntityRef')].map((n) => n.attrs.entityRef);
      expect(refs.every((r) => declared.has(r))).toBe(true);
      const init = child(child(child(doc, 'Storyboard'), 'Init'), 'Actions');
      expect(new Set(init.children.map((p) => p.attrs.entityRef))).toEqual(declared);
      expect(
        all(doc, 'ManeuverGroup').map((g) => child(child(g, 'Actors'), 'EntityRef').attrs.entityRef),
      ).toEqual([...declared]);
    });

    it("replays each track's boxes: vertex times strictly increasing, at the frames' times, at the box centres", async () => {
      const trajectoryOf = (entity: string) => {
        const group = all(doc, 'ManeuverGroup').find((g) => g.attrs.name === entity)!;
        return all(group, 'Vertex').map((v) => {
          const w = child(child(v, 'Position'), 'WorldPosition').attrs;
          return { t: Number(v.attrs.time), x: Number(w.x), y: Number(w.y), z: Number(w.z), h: Number(w.h) };
        });
      };
      for (const g of all(doc, 'Polyline')) {
        const times = g.children.map((v) => Number(v.attrs.time));
        for (let i = 1; i < times.length; i++) expect(times[i]!).toBeGreaterThan(times[i - 1]!);
      }
      const objects = await ctx.api.deps.db.annoObject.findMany({
        where: { trackId: tracks.car },
        include: { frame: true },
        orderBy: { frame: { index: 'asc' } },
      });
      expect(trajectoryOf(`track_${tracks.car}`)).toEqual(
        objects.map((o) => ({
          t: Number((o.frame.timestampMs / 1000).toFixed(6)),
          x: (o.bbox[0]! + o.bbox[2]!) / 2,
          y: (o.bbox[1]! + o.bbox[3]!) / 2,
          z: 0,
          h: Number(((o.rotDeg * Math.PI) / 180).toFixed(6)),
        })),
      );
      expect(trajectoryOf(`track_${tracks.car}`).at(-1)!.h).toBeCloseTo(Math.PI / 6, 6);
      // Frame 2 held two boxes of the person: the more confident one is the vertex.
      const person = trajectoryOf(`track_${tracks.person}`);
      expect(person.map((v) => v.t)).toEqual([0.3333, 0.6667, 1]);
      expect(person[1]).toMatchObject({ x: 616, y: 252 });
      // An object seen once has no trajectory, only its place.
      expect(trajectoryOf(`object_${ids.cone}`)).toEqual([]);
    });

    it('keeps the scenario running until the last frame', () => {
      const stop = child(child(doc, 'Storyboard'), 'StopTrigger');
      expect(all(stop, 'SimulationTimeCondition')[0]!.attrs).toEqual({
        value: '1.3333',
        rule: 'greaterThan',
      });
    });

    it('answers the same scenario as JSON, with each sample traced to its object', async () => {
      const res = await exportSession(sessionId, '?format=json');
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^application\/json\b/);
      const body = res.body;
      expect(body).toMatchObject({
        format: 'drivelab.scenario',
        format_version: 1,
        session: { id: sessionId, name: sessionName, frame_count: 5, end_time_s: 1.3333 },
        coordinate_system: { kind: 'image_plane', unit: 'px' },
        states: NOT_REJECTED,
        entity_count: 4,
      });
      const xmlEntities = all(doc, 'ScenarioObject').map((o) => o.attrs.name);
      expect(body.entities.map((e: any) => e.name)).toEqual(xmlEntities);
      for (const e of body.entities) {
        const vertices = all(
          all(doc, 'ManeuverGroup').find((g) => g.attrs.name === e.name)!,
          'Vertex',
        );
        if (e.samples.length > 1)
          expect(vertices.map((v) => Number(v.attrs.time))).toEqual(e.samples.map((s: any) => s.time_s));
      }
      const person = body.entities.find((e: any) => e.track_id === tracks.person);
      expect(person.samples.map((s: any) => s.object_id)).toEqual([ids.person1, ids.person2, ids.person3]);
      expect(person.duplicates_dropped).toBe(1);
      expect(person.samples[0]).toMatchObject({ conf: null, source: 'human', bbox_px: [600, 200, 640, 300] });
    });

    it('filters by object state', async () => {
      const res = await exportSession(sessionId, '?format=json&states=rejected');
      expect(res.status).toBe(200);
      expect(new Set(res.body.entities.map((e: any) => e.name))).toEqual(
        await expectedEntityNames(sessionId, ['rejected']),
      );
      expect(res.body.entities).toHaveLength(2);

      const xmlRes = await exportSession(sessionId, '?states=review,%20accepted');
      expect(xmlRes.status).toBe(200);
      const names = all(parseXml(xmlRes.body), 'ScenarioObject').map((o) => o.attrs.name!);
      expect(new Set(names)).toEqual(await expectedEntityNames(sessionId, ['review', 'accepted']));
    });

    it('refuses a state outside the allowed list (400) and an unknown format or parameter (422)', async () => {
      const bad = await exportSession(sessionId, '?states=accepted,approved');
      expect(bad.status).toBe(400);
      expect(bad.body.errors).toEqual([{ field: 'query.states', message: 'not an allowed state' }]);
      const format = await exportSession(sessionId, '?format=csv');
      expect(format.status).toBe(422);
      expect(format.body.errors[0].field).toBe('query.format');
      expect((await exportSession(sessionId, '?limit=3')).status).toBe(422);
    });

    it('answers a valid, empty scenario for a session without objects or without frames', async () => {
      for (const [id, end] of [
        [emptySessionId, '0.6667'],
        [framelessSessionId, '0'],
      ] as const) {
        const res = await exportSession(id);
        expect(res.status).toBe(200);
        const empty = parseXml(res.body);
        expect(contentModelViolations(empty)).toEqual([]);
        expect(all(empty, 'ScenarioObject')).toEqual([]);
        expect(all(empty, 'Story')).toEqual([]);
        expect(
          all(child(child(empty, 'Storyboard'), 'StopTrigger'), 'SimulationTimeCondition')[0]!.attrs.value,
        ).toBe(end);
        const json = await exportSession(id, '?format=json');
        expect(json.body).toMatchObject({ entity_count: 0, entities: [] });
      }
    });

    it('answers 404 for an unknown session and 422 for a malformed id', async () => {
      const missing = randomUUID();
      const res = await exportSession(missing);
      expect(res.status).toBe(404);
      expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(res.body).toMatchObject({
        type: 'urn:drivelab:problem:not-found',
        detail: `no session ${missing}`,
      });
      const malformed = await exportSession('not-a-uuid');
      expect(malformed.status).toBe(422);
      expect(malformed.body.errors[0].field).toBe('path.session_id');
    });

    it('needs a reviewer', async () => {
      expect((await exportSession(sessionId, '', ctx.token.annotator)).status).toBe(403);
      expect((await exportSession(sessionId, '', ctx.token.admin)).status).toBe(200);
      expect((await ctx.api.call('GET', `/api/export/scenario/session/${sessionId}`)).status).toBe(401);
    });
  });

  describe('GET /api/export/scenario/event/{event_id}', () => {
    const exportEvent = (id: string, token = ctx.token.reviewer) =>
      ctx.api.call('GET', `/api/export/scenario/event/${id}`, { token });

    it('answers 404 for every event, since driving events are not recorded yet', async () => {
      const id = randomUUID();
      const res = await exportEvent(id);
      expect(res.status).toBe(404);
      expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(res.body).toMatchObject({ type: 'urn:drivelab:problem:not-found', status: 404 });
      expect(res.body.detail).toContain(`no driving event ${id}`);
      expect(res.body.detail).toContain('not recorded yet');
    });

    it('validates the id and the role before saying so', async () => {
      const malformed = await exportEvent('42');
      expect(malformed.status).toBe(422);
      expect(malformed.body.errors[0].field).toBe('path.event_id');
      expect((await exportEvent(randomUUID(), ctx.token.annotator)).status).toBe(403);
    });
  });
});
