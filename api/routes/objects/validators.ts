import { z } from 'zod';
import { BoxIn, KeypointsIn, MaskRingsIn, PolylinesIn } from '../../http/shapes';

const triple = z.array(z.number()).length(3);

export const Cuboid3D = z.strictObject({
  center: triple,
  dims: z.array(z.number().positive()).length(3),
  yaw: z.number().default(0),
  pitch: z.number().default(0),
  roll: z.number().default(0),
});

export const CreateObjectIn = z.strictObject({
  class_name: z.string().min(1).max(128),
  bbox: BoxIn,
  attrs: z.record(z.string(), z.unknown()).default({}),
  cuboid_3d: Cuboid3D.nullable().default(null),
  idem_key: z.string().min(1).max(200).nullable().default(null),
  job_id: z.string().min(1).max(200).nullable().default(null),
  keypoints: KeypointsIn.nullable().default(null),
  mask_polygons: MaskRingsIn.nullable().default(null),
  polyline: PolylinesIn.nullable().default(null),
  rot_deg: z.number().default(0),
  /** Checked against the allowed list by the handler: a state outside it is a 400 (spec Errors). */
  state: z.string().max(32).default('accepted'),
});
export type CreateObjectIn = z.infer<typeof CreateObjectIn>;

export const MaskIn = z.strictObject({
  polygons: MaskRingsIn.min(1),
  expected_version: z.int().nullable().default(null),
});

export const CropSheetIn = z.strictObject({
  object_ids: z.array(z.uuid()).min(1).max(256),
  cell: z.int().min(16).max(512).default(128),
  cols: z.int().min(0).max(64).default(0),
  pad: z.number().min(0).max(2).default(0.15),
});

export const ClassifyIn = z.strictObject({
  frame_id: z.uuid(),
  box: z.array(z.number()).length(4),
});
