import { z } from 'zod';
import { TELEMETRY_STATUSES } from '../../../core/edge/telemetry';
import { limitParam } from '../../http/session-reads';

/** Bodies and queries of the edge fleet routes (docs/edge-rollout.md). */

/** Device names and targets: short, printable, usable in a path or a label. */
const slug = (what: string, max: number) =>
  z
    .string()
    .regex(
      /^[A-Za-z0-9][A-Za-z0-9._:-]*$/,
      `${what}: letters, digits and . _ : - (starting with a letter or digit)`,
    )
    .max(max);

export const DeviceName = slug('a device name', 128);
export const TargetName = slug('a target', 64);

/** Device labels, matched by a rollout's selector. */
export const LabelsIn = z
  .record(z.string().min(1).max(64), z.string().max(128))
  .refine((l) => Object.keys(l).length <= 32, 'at most 32 labels');

export const DeviceIn = z
  .strictObject({ name: DeviceName, target: TargetName, labels: LabelsIn.default({}) })
  .meta({ description: 'a device of the edge fleet: a unique name, the edge target it runs, labels' });

export const DevicesQuery = z.strictObject({
  name: DeviceName.optional(),
  target: TargetName.optional(),
  limit: limitParam(100, 1000),
});

export const FleetQuery = z.strictObject({ target: TargetName.optional() });

const Sha256 = z.string().regex(/^[0-9a-f]{64}$/, 'a SHA-256 in lowercase hex');
const Ms = z.number().min(0).max(3_600_000);

export const TelemetryIn = z
  .strictObject({
    device_id: z.uuid(),
    artifact_id: z
      .uuid()
      .nullable()
      .default(null)
      .meta({ description: 'the artifact the report is about; null when idle' }),
    model_sha256: Sha256.nullable()
      .default(null)
      .meta({ description: 'the SHA-256 of the model file as the device computed it' }),
    frames: z
      .int()
      .min(0)
      .max(10_000_000)
      .default(0)
      .meta({ description: 'frames attempted since the last report' }),
    errors: z
      .int()
      .min(0)
      .max(10_000_000)
      .default(0)
      .meta({ description: 'of those, frames that failed to run' }),
    latency_ms: z
      .strictObject({ p50: Ms, p90: Ms, p99: Ms, mean: Ms })
      .nullable()
      .default(null)
      .meta({ description: 'over the frames that ran, in ms; required when any did' }),
    status: z.enum(TELEMETRY_STATUSES),
    detail: z
      .record(z.string(), z.unknown())
      .default({})
      .refine((d) => JSON.stringify(d).length <= 8192, 'at most 8 KiB of detail'),
  })
  .superRefine((t, ctx) => {
    const issue = (path: string, message: string) => ctx.addIssue({ code: 'custom', path: [path], message });
    if (t.errors > t.frames) issue('errors', 'cannot exceed frames');
    if (t.status === 'idle') {
      if (t.artifact_id !== null) issue('artifact_id', 'an idle device runs no artifact: must be null');
      if (t.frames > 0) issue('frames', 'an idle device runs no frames: must be 0');
    } else {
      if (t.artifact_id === null) issue('artifact_id', `required with status ${t.status}`);
      if (t.status !== 'load_failed' && t.model_sha256 === null)
        issue('model_sha256', `required with status ${t.status}`);
    }
    if (t.frames > t.errors && t.latency_ms === null) issue('latency_ms', 'required when frames ran');
  })
  .meta({ description: "a device's report over the frames since its last one" });

export const FieldQuery = z.strictObject({
  window_seconds: z.coerce
    .number()
    .int()
    .min(1)
    .max(30 * 24 * 3600)
    .default(3600),
});

export const GateQuery = z.strictObject({ rollout_id: z.uuid().optional() });
