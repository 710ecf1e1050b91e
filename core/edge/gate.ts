import { deviceFields, type DeviceField, type TelemetryReport } from './telemetry';

/**
 * The stage gate of an edge rollout (docs/edge-rollout.md): the telemetry of a stage's devices
 * since the stage began, judged against the rollout's budgets. Rules are checked in this order and
 * the first one broken names the verdict: a device that refused or could not load or run the
 * artifact, or that runs another file under its id, breaches at once; error rate and p90 latency
 * are judged per device once it has reported `min_frames` frames; and a stage passes only when
 * enough of its devices have done so.
 */
export const GATE_RULES = [
  'artifact_verification',
  'device_failure',
  'model_hash',
  'max_error_rate',
  'max_p90_ms',
  'min_devices_reporting',
] as const;
export type GateRule = (typeof GATE_RULES)[number];

export interface RolloutGate {
  /** p90 latency budget per device in ms; null: no latency budget. */
  max_p90_ms: number | null;
  /** Failed frames / frames per device. */
  max_error_rate: number;
  /** Frames a device must have run before its figures count. */
  min_frames: number;
  /** Devices with `min_frames` frames needed to pass; null: every device of the stage (more than the stage has means all of them). */
  min_devices_reporting: number | null;
}

export type GateOutcome = 'pass' | 'breach' | 'insufficient';

export interface GateVerdict {
  outcome: GateOutcome;
  /** The rule broken (breach) or not yet met (insufficient); null on a pass. */
  rule: GateRule | null;
  reason: string;
  /** Devices of the stage, how many have reported `min_frames` frames, how many must. */
  devices: number;
  devices_reporting: number;
  required_reporting: number;
  /** Stage devices that have not reported `min_frames` frames of the artifact, by name. */
  waiting_for: string[];
  per_device: Array<DeviceField & { name: string }>;
}

export interface StageEvidence {
  devices: ReadonlyArray<{ id: string; name: string }>;
  /** Reports of the artifact's id since the stage began (other devices' reports are ignored). */
  reports: readonly TelemetryReport[];
  /** The artifact's registered SHA-256. */
  sha256: string;
  gate: RolloutGate;
}

const short = (sha: string) => sha.slice(0, 12);
/** Milliseconds to a tenth, or to three significant digits below one (a sub-millisecond budget stays readable). */
const ms = (v: number) => `${v >= 1 ? v.toFixed(1) : Number(v.toPrecision(3))} ms`;
const pct = (v: number) => `${(v * 100).toFixed(2)}%`;

type Check = (d: DeviceField & { name: string }) => string | null;

/** The per-device rules in order, each a reason when the device breaks it. */
function deviceChecks(sha256: string, gate: RolloutGate): Array<[GateRule, Check]> {
  const evidenced = (d: DeviceField) => d.frames >= gate.min_frames;
  return [
    [
      'artifact_verification',
      (d) =>
        d.statuses.verify_failed
          ? `device ${d.name} refused the artifact: the file it downloaded hashes to ${short(d.refused_sha256 ?? '?')}…, not the registered ${short(sha256)}…`
          : null,
    ],
    [
      'device_failure',
      (d) =>
        d.statuses.load_failed
          ? `device ${d.name} could not load the artifact`
          : d.statuses.run_failed
            ? `device ${d.name} loaded the artifact but every frame of a report failed to run`
            : null,
    ],
    [
      'model_hash',
      (d) =>
        d.foreign_sha256
          ? `device ${d.name} reports running the artifact with hash ${short(d.foreign_sha256)}…, not the registered ${short(sha256)}…`
          : null,
    ],
    [
      'max_error_rate',
      (d) =>
        evidenced(d) && d.error_rate! > gate.max_error_rate
          ? `device ${d.name} failed ${d.errors} of ${d.frames} frames (${pct(d.error_rate!)}), above the budget of ${pct(gate.max_error_rate)}`
          : null,
    ],
    [
      'max_p90_ms',
      (d) =>
        gate.max_p90_ms !== null && evidenced(d) && d.latency_ms && d.latency_ms.p90 > gate.max_p90_ms
          ? `device ${d.name} ran at p90 ${ms(d.latency_ms.p90)} over ${d.frames - d.errors} frames, above the budget of ${ms(gate.max_p90_ms)}`
          : null,
    ],
  ];
}

export function evaluateStageGate(input: StageEvidence): GateVerdict {
  const { gate, sha256 } = input;
  const names = new Map(input.devices.map((d) => [d.id, d.name]));
  const perDevice = deviceFields(
    input.reports.filter((r) => names.has(r.deviceId)),
    sha256,
  ).map((d) => ({ ...d, name: names.get(d.device_id)! }));
  const reporting = new Set(perDevice.filter((d) => d.frames >= gate.min_frames).map((d) => d.device_id));
  const required = Math.min(gate.min_devices_reporting ?? input.devices.length, input.devices.length);
  const base = {
    devices: input.devices.length,
    devices_reporting: reporting.size,
    required_reporting: required,
    waiting_for: input.devices.filter((d) => !reporting.has(d.id)).map((d) => d.name),
    per_device: perDevice,
  };
  for (const [rule, check] of deviceChecks(sha256, gate)) {
    for (const d of perDevice) {
      const reason = check(d);
      if (reason) return { outcome: 'breach', rule, reason, ...base };
    }
  }
  if (reporting.size < required)
    return {
      outcome: 'insufficient',
      rule: 'min_devices_reporting',
      reason: `${reporting.size} of ${input.devices.length} devices reported at least ${gate.min_frames} frames of the artifact; ${required} must (waiting for ${base.waiting_for.join(', ')})`,
      ...base,
    };
  const counted = perDevice.filter((d) => reporting.has(d.device_id));
  const worstP90 = Math.max(...counted.map((d) => d.latency_ms?.p90 ?? 0));
  const worstRate = Math.max(...counted.map((d) => d.error_rate ?? 0));
  return {
    outcome: 'pass',
    rule: null,
    reason: `${reporting.size} of ${input.devices.length} devices reported at least ${gate.min_frames} frames within the budgets (worst p90 ${ms(worstP90)}, worst error rate ${pct(worstRate)})`,
    ...base,
  };
}
