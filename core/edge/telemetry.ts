import { quantileSorted } from '../quality/resample';

/**
 * Field performance from device telemetry (docs/edge-rollout.md): what the edge agent measures
 * over the frames of one report, and how reports add up per device and per artifact. A report
 * carries percentiles, not its frames' durations, so percentiles over several reports are the
 * frame-weighted means of the reports' percentiles: exact for one report, an approximation over
 * many (reports of one device cover similar frames, so it stays close).
 */

/** `idle`: the device runs no model; the others name what happened to the artifact it reports on. */
export const TELEMETRY_STATUSES = ['ok', 'idle', 'verify_failed', 'load_failed', 'run_failed'] as const;
export type TelemetryStatus = (typeof TELEMETRY_STATUSES)[number];

/** Statuses of a report whose frames ran the model. */
const RAN: ReadonlySet<TelemetryStatus> = new Set(['ok', 'run_failed']);

export interface LatencyMs {
  p50: number;
  p90: number;
  p99: number;
  mean: number;
}

/** A device's report as the agent posts it and the API takes it (POST /api/edge/telemetry, TelemetryIn). */
export interface TelemetryBody {
  device_id: string;
  artifact_id: string | null;
  model_sha256: string | null;
  frames: number;
  errors: number;
  latency_ms: LatencyMs | null;
  status: TelemetryStatus;
  detail: Record<string, unknown>;
}

export interface TelemetryReport {
  deviceId: string;
  status: TelemetryStatus;
  /** The SHA-256 of the model file as the device computed it. */
  modelSha256: string | null;
  /** Frames attempted, of which `errors` failed. */
  frames: number;
  errors: number;
  /** Over the frames that ran; null when none did. */
  latencyMs: LatencyMs | null;
  at: Date;
}

/** Percentiles (numpy's linear method) and mean of per-frame durations in ms; null for none. */
export function latencySummary(samples: readonly number[]): LatencyMs | null {
  if (samples.length === 0) return null;
  const sorted = Float64Array.from(samples).sort();
  const q = (p: number) => quantileSorted(sorted, p);
  return { p50: q(0.5), p90: q(0.9), p99: q(0.99), mean: sorted.reduce((a, b) => a + b, 0) / sorted.length };
}

/** Frame-weighted mean of report summaries (weights: the frames that ran). */
export function mergeLatency(
  parts: ReadonlyArray<{ weight: number; latency: LatencyMs | null }>,
): LatencyMs | null {
  const used = parts.filter((p) => p.latency && p.weight > 0);
  const total = used.reduce((n, p) => n + p.weight, 0);
  if (total === 0) return null;
  const mean = (k: keyof LatencyMs) => used.reduce((s, p) => s + p.latency![k] * p.weight, 0) / total;
  return { p50: mean('p50'), p90: mean('p90'), p99: mean('p99'), mean: mean('mean') };
}

export interface FieldFigures {
  reports: number;
  /** Frames of the artifact itself (reports that ran it with its registered hash). */
  frames: number;
  errors: number;
  /** errors / frames; null before any frame. */
  error_rate: number | null;
  latency_ms: LatencyMs | null;
  /** Reports by status. */
  statuses: Partial<Record<TelemetryStatus, number>>;
}

export interface DeviceField extends FieldFigures {
  device_id: string;
  /** A hash other than the artifact's that the device reported running under the artifact's id. */
  foreign_sha256: string | null;
  /** The hash the device computed when it refused the artifact (`verify_failed`). */
  refused_sha256: string | null;
  last_status: TelemetryStatus;
  last_at: string;
}

function figures(reports: readonly TelemetryReport[], sha256: string): FieldFigures {
  const ran = reports.filter((r) => RAN.has(r.status) && r.modelSha256 === sha256);
  const frames = ran.reduce((n, r) => n + r.frames, 0);
  const errors = ran.reduce((n, r) => n + r.errors, 0);
  const statuses: FieldFigures['statuses'] = {};
  for (const r of reports) statuses[r.status] = (statuses[r.status] ?? 0) + 1;
  return {
    reports: reports.length,
    frames,
    errors,
    error_rate: frames > 0 ? errors / frames : null,
    latency_ms: mergeLatency(ran.map((r) => ({ weight: r.frames - r.errors, latency: r.latencyMs }))),
    statuses,
  };
}

/** Each reporting device's figures for the artifact of hash `sha256`, in order of first report. */
export function deviceFields(reports: readonly TelemetryReport[], sha256: string): DeviceField[] {
  const byDevice = new Map<string, TelemetryReport[]>();
  for (const r of [...reports].sort((a, b) => a.at.getTime() - b.at.getTime())) {
    const list = byDevice.get(r.deviceId);
    if (list) list.push(r);
    else byDevice.set(r.deviceId, [r]);
  }
  return [...byDevice].map(([deviceId, list]) => {
    const last = list.at(-1)!;
    const hashOf = (wanted: (r: TelemetryReport) => boolean) =>
      list.find((r) => wanted(r) && r.modelSha256 !== null && r.modelSha256 !== sha256)?.modelSha256 ?? null;
    return {
      device_id: deviceId,
      ...figures(list, sha256),
      foreign_sha256: hashOf((r) => RAN.has(r.status)),
      refused_sha256: hashOf((r) => r.status === 'verify_failed'),
      last_status: last.status,
      last_at: last.at.toISOString(),
    };
  });
}

/** An artifact's field performance over a set of reports: totals over every device, and per device. */
export function fieldSummary(reports: readonly TelemetryReport[], sha256: string) {
  const perDevice = deviceFields(reports, sha256);
  return {
    ...figures(reports, sha256),
    devices_reporting: perDevice.filter((d) => d.frames > 0).length,
    per_device: perDevice,
  };
}
