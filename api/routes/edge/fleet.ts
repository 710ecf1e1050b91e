import {
  artifactField,
  artifactGate,
  fleetView,
  listDevices,
  recordTelemetry,
  registerDevice,
} from '../../../activities/edge';
import type { AppDeps } from '../../deps';
import { RouteGroup, uuidParams } from '../../http/route-group';
import { DeviceIn, DevicesQuery, FieldQuery, FleetQuery, GateQuery, TelemetryIn } from './fleet-validators';

/**
 * The fleet routes of the `edge` group (docs/edge-rollout.md): devices register and read their
 * assignment, post telemetry; the fleet, field and gate views read it back. The edge agent calls
 * them with the token of an `annotator` account given to it, so every route here needs only that.
 */
export function createEdgeFleetRoutes(deps: AppDeps): RouteGroup {
  return new RouteGroup('edge')
    .get(
      '/api/edge/devices',
      {
        summary:
          'Devices by name, filtered by name or target; each with its state (online, failing, offline, registered), what it runs and its assignment: the artifact, its SHA-256 and a presigned download URL (config edge.downloadUrlSeconds)',
        access: 'annotator',
        query: DevicesQuery,
      },
      ({ query }) => listDevices(deps, query),
    )
    .post(
      '/api/edge/devices',
      {
        summary: 'Register a device of the edge fleet: a unique name, its target, labels; 201',
        access: 'annotator',
        body: { name: 'DeviceIn', schema: DeviceIn },
        successStatus: 201,
        statuses: { 409: 'a device of that name is registered' },
      },
      ({ body, principal }) => registerDevice(deps, body, principal.userId),
    )
    .get(
      '/api/edge/fleet',
      {
        summary:
          'Who runs what: every device with its state and its assigned and running artifact, per artifact the devices assigned it and running it, the running rollouts, counts by state',
        access: 'annotator',
        query: FleetQuery,
      },
      ({ query }) => fleetView(deps, query),
    )
    .post(
      '/api/edge/telemetry',
      {
        summary:
          "A device's report: the artifact and the model SHA-256 it computed, frames, errors, latency percentiles, status (ok, idle, verify_failed, load_failed, run_failed); moves the device's last seen and running artifact; 201",
        access: 'annotator',
        body: { name: 'TelemetryIn', schema: TelemetryIn },
        successStatus: 201,
        statuses: { 404: 'no such device or artifact' },
      },
      ({ body }) => recordTelemetry(deps, body),
    )
    .get(
      '/api/edge/artifacts/{artifact_id}/field',
      {
        summary:
          "An artifact's field performance over the last window_seconds (default 3600): frames, errors, error rate, latency percentiles (frame-weighted over reports), reports by status, devices reporting; per device the same",
        access: 'annotator',
        params: uuidParams('artifact_id'),
        query: FieldQuery,
        statuses: { 404: 'no such artifact' },
      },
      ({ params, query }) => artifactField(deps, params.artifact_id, query.window_seconds),
    )
    .get(
      '/api/edge/artifacts/{artifact_id}/gate',
      {
        summary:
          "A rollout of the artifact (rollout_id, else its latest) against its gate: the rollout with its per-stage history, the current stage's devices, and the gate's verdict (pass, breach, insufficient, with the rule) on their telemetry since the stage began",
        access: 'annotator',
        params: uuidParams('artifact_id'),
        query: GateQuery,
        statuses: { 404: 'no such artifact, or no (such) rollout of it' },
      },
      ({ params, query }) => artifactGate(deps, params.artifact_id, query.rollout_id),
    );
}
