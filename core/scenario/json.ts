import type { ScenarioModel } from './model';
import { IMAGE_PLANE_NOTE, OPENSCENARIO_REVISION } from './openscenario';

/**
 * The scenario as a JSON description (docs/scenario.md, JSON description): the entities and
 * trajectories of the OpenSCENARIO document, plus what OpenSCENARIO has no slot for (each sample's
 * object, frame, box, state and confidence). Field names are the API's snake_case.
 */

export const SCENARIO_JSON_FORMAT = 'drivelab.scenario';

export function toScenarioJson(model: ScenarioModel) {
  const { session } = model;
  return {
    format: SCENARIO_JSON_FORMAT,
    format_version: model.formatVersion,
    generated_at: model.generatedAt,
    openscenario_equivalent: `ASAM OpenSCENARIO ${OPENSCENARIO_REVISION.major}.${OPENSCENARIO_REVISION.minor} (format=xosc)`,
    session: {
      id: session.id,
      name: session.name,
      frame_count: session.frameCount,
      end_time_s: session.endTimeS,
      image_size: session.imageSize,
    },
    coordinate_system: {
      kind: 'image_plane',
      unit: 'px',
      origin: 'top_left',
      x_axis: 'right',
      y_axis: 'down',
      rotation: 'rot_deg clockwise in the image, degrees',
      time: 'seconds from the start of the drive',
      note: IMAGE_PLANE_NOTE,
    },
    states: model.states,
    entity_count: model.entities.length,
    entities: model.entities.map((e) => ({
      name: e.name,
      track_id: e.trackId,
      kind: e.category.kind,
      category: e.category.category,
      class: e.class,
      first_time_s: e.samples[0]!.timeS,
      last_time_s: e.samples.at(-1)!.timeS,
      duplicates_dropped: e.duplicatesDropped,
      median_size_px: e.medianSize,
      max_speed_px_s: e.motion.maxSpeed,
      samples: e.samples.map((s) => ({
        time_s: s.timeS,
        frame_id: s.frameId,
        frame_index: s.frameIndex,
        object_id: s.objectId,
        class_id: s.classId,
        class_name: s.className,
        center_px: s.center,
        size_px: s.size,
        bbox_px: s.bbox,
        rot_deg: s.rotDeg,
        state: s.state,
        source: s.source,
        conf: s.conf,
      })),
    })),
  };
}

export type ScenarioJson = ReturnType<typeof toScenarioJson>;
