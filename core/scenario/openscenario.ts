import { roundTo, type ScenarioEntity, type ScenarioModel, type ScenarioSample } from './model';
import { element, serializeXml, type XmlElement } from './xml';

/**
 * The scenario as ASAM OpenSCENARIO 1.2 XML (`.xosc`), using only elements and attributes the 1.2
 * schema does not mark deprecated (docs/scenario.md, OpenSCENARIO mapping). Camera-only data has
 * no world coordinates: every position is an image-plane pixel centre carried in a WorldPosition
 * (x right, y down, z 0), and the header says so.
 */

export const OPENSCENARIO_REVISION = { major: 1, minor: 2 } as const;

export const IMAGE_PLANE_NOTE =
  'Positions are image-plane pixel coordinates of box centres, not world coordinates: WorldPosition x is ' +
  'pixels right and y pixels down from the top-left corner of the frame, z is 0 (camera-only data has no ' +
  'depth), h is the box rotation in radians (clockwise in the image). Times are seconds from the start of ' +
  'the drive. BoundingBox dimensions are the median box in pixels (length along x, width along y, height 0); ' +
  'Performance is the fastest recorded motion in pixels per second; mass 0 and zero axles mean unknown.';

const RAD_PER_DEG = Math.PI / 180;

const property = (name: string, value: string | number) =>
  element('Property', { name, value: String(value) });

function worldPosition(s: ScenarioSample): XmlElement {
  return element('Position', {}, [
    element('WorldPosition', {
      x: s.center[0],
      y: s.center[1],
      z: 0,
      h: roundTo(s.rotDeg * RAD_PER_DEG, 6),
    }),
  ]);
}

const visibility = (visible: boolean) =>
  element('PrivateAction', {}, [
    element('VisibilityAction', { graphics: visible, traffic: visible, sensors: visible }),
  ]);

/** A trigger that fires once simulation time meets the rule. */
function timeTrigger(tag: 'StartTrigger' | 'StopTrigger', name: string, rule: string, value: number) {
  return element(tag, {}, [
    element('ConditionGroup', {}, [
      element('Condition', { name, delay: 0, conditionEdge: 'none' }, [
        element('ByValueCondition', {}, [element('SimulationTimeCondition', { value, rule })]),
      ]),
    ]),
  ]);
}

function entityProperties(e: ScenarioEntity): XmlElement {
  const first = e.samples[0]!;
  const last = e.samples.at(-1)!;
  return element('Properties', {}, [
    property('drivelab.track_id', e.trackId ?? 'none'),
    property('drivelab.object_id', e.trackId ? 'none' : first.objectId),
    property('drivelab.class_id', e.class.id),
    property('drivelab.class_name', e.class.name),
    property('drivelab.class_l0', e.class.l0),
    property('drivelab.class_l1', e.class.l1),
    property('drivelab.samples', e.samples.length),
    property('drivelab.duplicates_dropped', e.duplicatesDropped),
    property('drivelab.first_time_s', first.timeS),
    property('drivelab.last_time_s', last.timeS),
    property('drivelab.units', 'px'),
  ]);
}

function scenarioObject(e: ScenarioEntity): XmlElement {
  const [length, width] = e.medianSize;
  const boundingBox = element('BoundingBox', {}, [
    element('Center', { x: 0, y: 0, z: 0 }),
    element('Dimensions', { width, length, height: 0 }),
  ]);
  const props = entityProperties(e);
  const { kind, category } = e.category;
  let object: XmlElement;
  if (kind === 'vehicle') {
    const axle = { maxSteering: 0, wheelDiameter: 0, trackWidth: 0, positionX: 0, positionZ: 0 };
    object = element('Vehicle', { name: e.class.name, vehicleCategory: category }, [
      boundingBox,
      element('Performance', {
        maxSpeed: e.motion.maxSpeed,
        maxAcceleration: e.motion.maxAcceleration,
        maxDeceleration: e.motion.maxDeceleration,
      }),
      element('Axles', {}, [element('FrontAxle', axle), element('RearAxle', axle)]),
      props,
    ]);
  } else if (kind === 'pedestrian') {
    object = element('Pedestrian', { name: e.class.name, mass: 0, pedestrianCategory: category }, [
      boundingBox,
      props,
    ]);
  } else {
    object = element('MiscObject', { name: e.class.name, mass: 0, miscObjectCategory: category }, [
      boundingBox,
      props,
    ]);
  }
  return element('ScenarioObject', { name: e.name }, [object]);
}

/** Placed at its first sample and hidden until it is first observed. */
function initialState(e: ScenarioEntity): XmlElement {
  return element('Private', { entityRef: e.name }, [
    element('PrivateAction', {}, [element('TeleportAction', {}, [worldPosition(e.samples[0]!)])]),
    visibility(false),
  ]);
}

/**
 * Shown while observed: from its first sample to its last, following the recorded trajectory
 * (vertex times are absolute, so the motion replays on the drive's own clock), hidden after.
 */
function maneuverGroup(e: ScenarioEntity): XmlElement {
  const first = e.samples[0]!;
  const last = e.samples.at(-1)!;
  // A polyline needs two vertices; an entity seen once just appears where it was seen.
  const follow =
    e.samples.length >= 2 &&
    element('Action', { name: `${e.name} follows its track` }, [
      element('PrivateAction', {}, [
        element('RoutingAction', {}, [
          element('FollowTrajectoryAction', {}, [
            element('TrajectoryRef', {}, [
              element('Trajectory', { name: `${e.name} trajectory`, closed: false }, [
                element('Shape', {}, [
                  element(
                    'Polyline',
                    {},
                    e.samples.map((s) => element('Vertex', { time: s.timeS }, [worldPosition(s)])),
                  ),
                ]),
              ]),
            ]),
            element('TimeReference', {}, [
              element('Timing', { domainAbsoluteRelative: 'absolute', scale: 1, offset: 0 }),
            ]),
            element('TrajectoryFollowingMode', { followingMode: 'position' }),
          ]),
        ]),
      ]),
    ]);
  return element('ManeuverGroup', { name: e.name, maximumExecutionCount: 1 }, [
    element('Actors', { selectTriggeringEntities: false }, [element('EntityRef', { entityRef: e.name })]),
    element('Maneuver', { name: `${e.name} observed` }, [
      element('Event', { name: `${e.name} appears`, priority: 'parallel' }, [
        element('Action', { name: `${e.name} shown` }, [visibility(true)]),
        follow,
        timeTrigger('StartTrigger', `${e.name} first seen`, 'greaterOrEqual', first.timeS),
      ]),
      element('Event', { name: `${e.name} disappears`, priority: 'parallel' }, [
        element('Action', { name: `${e.name} hidden` }, [visibility(false)]),
        timeTrigger('StartTrigger', `${e.name} last seen`, 'greaterThan', last.timeS),
      ]),
    ]),
  ]);
}

export function toOpenScenarioXml(model: ScenarioModel): string {
  const { session } = model;
  const headerProperties = [
    property('drivelab.format_version', model.formatVersion),
    property('drivelab.session_id', session.id),
    property('drivelab.session_name', session.name),
    property('drivelab.frame_count', session.frameCount),
    property('drivelab.coordinate_system', 'image_plane_px'),
    property('drivelab.states', model.states.join(',')),
    session.imageSize && property('drivelab.image_width_px', session.imageSize.width),
    session.imageSize && property('drivelab.image_height_px', session.imageSize.height),
  ];
  const story =
    model.entities.length > 0 &&
    element('Story', { name: `session ${session.id}` }, [
      element('Act', { name: 'observed objects' }, [
        ...model.entities.map(maneuverGroup),
        timeTrigger('StartTrigger', 'drive starts', 'greaterOrEqual', 0),
      ]),
    ]);
  const root = element('OpenSCENARIO', {}, [
    element(
      'FileHeader',
      {
        revMajor: OPENSCENARIO_REVISION.major,
        revMinor: OPENSCENARIO_REVISION.minor,
        date: model.generatedAt,
        description: `Objects of drive session "${session.name}" (${session.id}) over time. ${IMAGE_PLANE_NOTE}`,
        author: 'drivelab',
      },
      [element('Properties', {}, headerProperties)],
    ),
    element('CatalogLocations'),
    element('RoadNetwork'),
    element('Entities', {}, model.entities.map(scenarioObject)),
    element('Storyboard', {}, [
      element('Init', {}, [element('Actions', {}, model.entities.map(initialState))]),
      story,
      timeTrigger('StopTrigger', 'drive ends', 'greaterThan', session.endTimeS),
    ]),
  ]);
  return serializeXml(root);
}
