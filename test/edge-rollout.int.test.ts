import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sha256Hex } from '../activities/models/artifacts';
import { planStages } from '../core/edge/stages';
import type { EdgeArtifact } from '../generated/prisma/client';
import { createUserWithToken } from '../testkit/api';
import { startIngestStack, type IngestStack } from '../testkit/media/harness';
import { recordHistoryIfAsked, replayRecordedHistory, scheduledActivities } from '../testkit/temporal';
import { agentTails, startEdgeAgents, stopEdgeAgents, type EdgeAgent } from '../testkit/edge-agents';

/**
 * Edge rollout on the real stack (docs/edge-rollout.md): three edge agents run as real processes on
 * loopback, each registering its device, polling for its assignment, downloading the artifact from
 * MinIO through the presigned URL, verifying its SHA-256, running yolox_nano with onnxruntime on
 * real photographs and posting telemetry. Artifacts are made here (the shipped detector uploaded to
 * the models bucket under several keys, with EdgeArtifact rows), not through the compile routes.
 * A good artifact goes out stage by stage; an operator advances one stage and rolls the next back;
 * an artifact whose file does not match its registered hash, and one over its latency budget, are
 * rolled back at their first stage with the rule named, the devices back on the good artifact.
 */
const HISTORY = path.join(__dirname, 'histories/edge-rollout.json');
const HISTORY_OPERATOR = path.join(__dirname, 'histories/edge-rollout-operator.json');
const TARGET = 'cpu-x86-test';
const AGENTS = 3;

let stack: IngestStack;
let dir: string;
let agentUser: { userId: string; token: string };
let reviewerId: string;
const agents: EdgeAgent[] = [];
const artifacts = {} as Record<'good' | 'copy' | 'bad' | 'slow', EdgeArtifact>;
let modelSha: string;

const api = (method: string, p: string, body?: unknown, token = stack.reviewer) =>
  stack.api.call(method, p, { token, ...(body === undefined ? {} : { body }) });

/** Polls until `probe` answers something, or fails naming what it waited for and what the agents said. */
async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline)
      throw new Error(`timed out waiting for ${what}; agents said:\n${agentTails(agents)}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

async function storeArtifact(name: string, bytes: Buffer, sha256: string): Promise<EdgeArtifact> {
  const key = `edge/test-${randomUUID()}/${name}.onnx`;
  await stack.api.deps.storage.client.putObject(
    stack.api.deps.storage.bucket('models'),
    key,
    bytes,
    bytes.length,
  );
  return stack.api.deps.db.edgeArtifact.create({
    data: {
      modelVersion: `yolox_nano.onnx@${modelSha.slice(0, 12)}`,
      target: TARGET,
      precision: 'fp32',
      key,
      sha256,
      sizeBytes: bytes.length,
    },
  });
}

const fleet = async () => (await api('GET', `/api/edge/fleet?target=${TARGET}`)).body;
const deviceIds = async (): Promise<string[]> => (await fleet()).devices.map((d: { id: string }) => d.id);
const rolloutRow = (id: string) => stack.api.deps.db.edgeRollout.findUniqueOrThrow({ where: { id } });

/** Every device of the fleet assigned and running `artifactId`. */
const allRunning = (artifactId: string) =>
  until(`every device running ${artifactId}`, async () => {
    const f = await fleet();
    return f.devices.length === AGENTS &&
      f.devices.every(
        (d: any) => d.assigned_artifact_id === artifactId && d.running_artifact_id === artifactId,
      )
      ? f
      : undefined;
  });

async function startRollout(body: Record<string, unknown>) {
  const res = await api('POST', '/api/edgeforge/rollout', body);
  expect(res.status).toBe(202);
  expect(res.headers.get('location')).toBe(
    `/api/edge/artifacts/${body.artifact_id}/gate?rollout_id=${res.body.id}`,
  );
  return { id: res.body.id as string, handle: stack.env.client.workflow.getHandle(res.body.workflow_id) };
}

beforeAll(async () => {
  stack = await startIngestStack({ env: { APP_EDGE__GATE_CHECK_SECONDS: '2' } });
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'drivelab-edge-'));
  const bytes = fs.readFileSync(path.join(stack.config.models.dir, stack.config.models.closedSetDetector));
  modelSha = sha256Hex(bytes);
  artifacts.good = await storeArtifact('good', bytes, modelSha);
  artifacts.copy = await storeArtifact('copy', bytes, modelSha);
  artifacts.slow = await storeArtifact('slow', bytes, modelSha);
  // Registered with the hash of other bytes: every device's verification must refuse the file.
  artifacts.bad = await storeArtifact(
    'bad',
    bytes,
    sha256Hex(Buffer.concat([bytes, Buffer.from('tampered')])),
  );
  agentUser = await createUserWithToken(stack.api.deps, 'annotator');
  reviewerId = (await api('GET', '/api/users/me')).body.id;
  agents.push(
    ...(await startEdgeAgents({
      apiUrl: stack.api.url,
      token: agentUser.token,
      target: TARGET,
      count: AGENTS,
      dir,
    })),
  );
}, 180_000);

afterAll(async () => {
  await stopEdgeAgents(agents);
  await stack?.close();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
}, 60_000);

describe('edge fleet', () => {
  it('agents register their devices and report in, idle until something is assigned', async () => {
    const f = await until('three devices online', async () => {
      const view = await fleet();
      return view.counts.online === AGENTS ? view : undefined;
    });
    expect(f.devices.map((d: any) => d.name)).toEqual(['edge-cam-0', 'edge-cam-1', 'edge-cam-2']);
    expect(f.devices.every((d: any) => d.running_artifact_id === null && d.target === TARGET)).toBe(true);
    expect(f.counts).toMatchObject({ devices: AGENTS, idle: AGENTS });
    const one = await api('GET', '/api/edge/devices?name=edge-cam-1', undefined, agentUser.token);
    expect(one.body.items).toHaveLength(1);
    expect(one.body.items[0]).toMatchObject({ labels: { lane: '1' }, assignment: null, status: 'online' });
    const idle = await stack.api.deps.db.edgeTelemetry.count({ where: { status: 'idle' } });
    expect(idle).toBeGreaterThanOrEqual(AGENTS);
  });

  it('refuses a duplicate device, malformed telemetry and rollouts it cannot start', async () => {
    const dup = await api(
      'POST',
      '/api/edge/devices',
      { name: 'edge-cam-0', target: TARGET },
      agentUser.token,
    );
    expect(dup.status).toBe(409);
    expect(dup.body.detail).toBe('a device named edge-cam-0 is already registered');
    const bad = await api('POST', '/api/edge/telemetry', {
      device_id: randomUUID(),
      status: 'ok',
      frames: 2,
      errors: 3,
    });
    expect(bad.status).toBe(422);
    expect(bad.body.errors.map((e: any) => e.field).sort()).toEqual([
      'body.artifact_id',
      'body.errors',
      'body.model_sha256',
    ]);
    const unmeasured = await api('POST', '/api/edge/telemetry', {
      device_id: randomUUID(),
      artifact_id: artifacts.good.id,
      model_sha256: modelSha,
      status: 'ok',
      frames: 3,
    });
    expect(unmeasured.body.errors).toEqual([
      { field: 'body.latency_ms', message: 'required when frames ran' },
    ]);
    const ghost = await api('POST', '/api/edge/telemetry', { device_id: randomUUID(), status: 'idle' });
    expect(ghost.status).toBe(404);

    const unknown = await api('POST', '/api/edgeforge/rollout', { artifact_id: randomUUID() });
    expect(unknown.status).toBe(404);
    const stages = await api('POST', '/api/edgeforge/rollout', {
      artifact_id: artifacts.good.id,
      stages: [50, 40],
    });
    expect(stages.status).toBe(422);
    expect(stages.body.errors).toEqual([
      { field: 'body.stages', message: 'stage 1 (40%) does not grow the fleet share of stage 0' },
    ]);
    const neither = await api('POST', '/api/edgeforge/rollout', { action: 'advance' });
    expect(neither.status).toBe(422);
    expect(neither.body.errors.map((e: any) => e.field).sort()).toEqual(['body.action', 'body.artifact_id']);
    const nobody = await api('POST', '/api/edgeforge/rollout', {
      artifact_id: artifacts.good.id,
      selector: { lane: '9' },
    });
    expect(nobody.status).toBe(422);
    expect(nobody.body.detail).toMatch(/no registered device of target cpu-x86-test matches the selector/);
    const role = await api(
      'POST',
      '/api/edgeforge/rollout',
      { artifact_id: artifacts.good.id },
      stack.annotator,
    );
    expect(role.status).toBe(403);
    const noRollout = await api('GET', `/api/edge/artifacts/${artifacts.good.id}/gate`);
    expect(noRollout.status).toBe(404);
    // nothing above left a rollout behind
    expect(await stack.api.deps.db.edgeRollout.count()).toBe(0);
  });
});

describe('staged rollout', () => {
  it('rolls a good artifact out stage by stage, each stage gated on the telemetry of its devices', async () => {
    const { id, handle } = await startRollout({
      artifact_id: artifacts.good.id,
      stages: [10, 50, 100],
      stage_seconds: 12,
      gate: { max_p90_ms: 10_000, max_error_rate: 0, min_frames: 3 },
    });
    const again = await api('POST', '/api/edgeforge/rollout', { artifact_id: artifacts.good.id });
    expect(again.status).toBe(409);
    expect(again.body.detail).toMatch(`artifact ${artifacts.good.id} is already rolling out (rollout ${id})`);
    const other = await api('POST', '/api/edgeforge/rollout', { artifact_id: artifacts.copy.id });
    expect(other.status).toBe(409);
    expect(other.body.detail).toMatch(/one rollout per target runs at a time/);

    const outcome = await handle.result();
    expect(outcome).toMatchObject({ rollout_id: id, status: 'completed', stage: 2, rule: null });
    const row = await rolloutRow(id);
    expect(row.status).toBe('completed');
    const history = row.history as any[];
    const plan = planStages(await deviceIds(), [10, 50, 100], id);
    expect(history.map((h) => h.devices)).toEqual(plan);
    expect(history.map((h) => h.devices.length)).toEqual([1, 2, 3]);
    for (const h of history) {
      expect(h).toMatchObject({ outcome: 'pass', passed: true, rule: null, ended_by: 'timer' });
      expect(h.telemetry.devices_reporting).toBe(h.devices.length);
    }

    // Each device ran the artifact it verified: its own hash, real frames, real detections. Reports
    // during the rollout carry it; the agents go on reporting after it ended, untagged.
    const reports = await stack.api.deps.db.edgeTelemetry.findMany({
      where: { artifactId: artifacts.good.id },
    });
    expect(reports.every((t) => t.status === 'ok' && t.modelSha256 === modelSha)).toBe(true);
    const telemetry = reports.filter((t) => t.rolloutId === id);
    for (const deviceId of plan[2]!) {
      const mine = telemetry.filter((t) => t.deviceId === deviceId);
      expect(mine.length).toBeGreaterThan(0);
      expect(mine.reduce((n, t) => n + t.frames, 0)).toBeGreaterThanOrEqual(3);
      expect(mine.reduce((n, t) => n + ((t.detail as any).boxes ?? 0), 0)).toBeGreaterThan(0);
    }
    // The first device joined in stage 0, the last only in stage 2: its first report comes later.
    const firstAt = (d: string) =>
      Math.min(...telemetry.filter((t) => t.deviceId === d).map((t) => t.at.getTime()));
    expect(firstAt(plan[0]![0]!)).toBeLessThan(Date.parse(history[1].started_at));
    expect(firstAt(plan[2]![2]!)).toBeGreaterThan(Date.parse(history[2].started_at));

    const f = await allRunning(artifacts.good.id);
    const good = f.artifacts.find((a: any) => a.id === artifacts.good.id);
    expect(good.running).toEqual(['edge-cam-0', 'edge-cam-1', 'edge-cam-2']);
    expect(f.devices.every((d: any) => d.in_sync && d.running_sha256 === modelSha)).toBe(true);

    const field = await api('GET', `/api/edge/artifacts/${artifacts.good.id}/field?window_seconds=600`);
    expect(field.status).toBe(200);
    expect(field.body).toMatchObject({ devices_reporting: 3, errors: 0, error_rate: 0 });
    expect(field.body.latency_ms.p90).toBeGreaterThan(0);
    expect(field.body.frames).toBe(field.body.per_device.reduce((n: number, d: any) => n + d.frames, 0));
    const gate = await api('GET', `/api/edge/artifacts/${artifacts.good.id}/gate`);
    expect(gate.body.rollout).toMatchObject({ id, status: 'completed' });
    expect(gate.body.verdict).toMatchObject({ outcome: 'pass', devices: 3, devices_reporting: 3 });

    const workflowHistory = await handle.fetchHistory();
    expect(scheduledActivities(workflowHistory).filter((a) => a === 'startRolloutStage')).toHaveLength(3);
    await recordHistoryIfAsked(HISTORY, () => handle.fetchHistory());
  });

  it('advances a stage when an operator says so, and an operator rollback puts every device back', async () => {
    const { id, handle } = await startRollout({
      artifact_id: artifacts.copy.id,
      stages: [50, 100],
      advance: 'operator',
      gate: { min_frames: 3, max_error_rate: 0 },
    });
    const gateOf = () => api('GET', `/api/edge/artifacts/${artifacts.copy.id}/gate?rollout_id=${id}`);
    // No timer: the stage waits, however long its gate has passed, until the operator advances it.
    await until('stage 0 passing its gate', async () =>
      (await gateOf()).body.verdict?.outcome === 'pass' ? true : undefined,
    );
    expect((await rolloutRow(id)).stage).toBe(0);
    const advance = await api('POST', '/api/edgeforge/rollout', { rollout_id: id, action: 'advance' });
    expect(advance.status).toBe(202);
    expect(advance.body).toMatchObject({ rollout_id: id, action: 'advance', stage: 0 });
    await until('stage 1 to start', async () => ((await rolloutRow(id)).stage === 1 ? true : undefined));
    const [first] = (await rolloutRow(id)).history as any[];
    expect(first).toMatchObject({ passed: true, outcome: 'pass', ended_by: `operator:${reviewerId}` });
    expect(first.devices).toHaveLength(2);

    await until('stage 1 passing its gate', async () =>
      (await gateOf()).body.verdict?.outcome === 'pass' ? true : undefined,
    );
    const abort = await api('POST', '/api/edgeforge/rollout', {
      rollout_id: id,
      action: 'rollback',
      reason: 'field team asked',
    });
    expect(abort.status).toBe(202);
    const outcome = await handle.result();
    expect(outcome).toMatchObject({ status: 'rolled_back', rule: 'operator', stage: 1, restored: 3 });
    const row = await rolloutRow(id);
    expect(row.reason).toBe(`operator: operator ${reviewerId}: field team asked`);
    expect((row.history as any[])[1]).toMatchObject({ outcome: 'operator', passed: false, rule: 'operator' });
    // The agents go back to the artifact they ran before (from their cache, verified again).
    await allRunning(artifacts.good.id);
    const late = await api('POST', '/api/edgeforge/rollout', { rollout_id: id, action: 'advance' });
    expect(late.status).toBe(409);
    expect(late.body.detail).toMatch(`rollout ${id} is rolled_back`);
    await recordHistoryIfAsked(HISTORY_OPERATOR, () => handle.fetchHistory());
  });

  it('rolls back an artifact that fails verification at its first stage, naming the rule', async () => {
    const { id, handle } = await startRollout({
      artifact_id: artifacts.bad.id,
      // A long soak: the rollback must come from the gate's checks, not from the stage's end.
      stage_seconds: 600,
      gate: { min_frames: 3 },
    });
    const outcome = await handle.result();
    expect(outcome).toMatchObject({
      status: 'rolled_back',
      rule: 'artifact_verification',
      stage: 0,
      restored: 1,
    });
    const row = await rolloutRow(id);
    const [stage] = row.history as any[];
    expect((row.history as any[]).length).toBe(1);
    expect(stage).toMatchObject({ outcome: 'breach', passed: false, ended_by: 'gate' });
    expect(stage.reason).toBe(
      `device ${stage.device_names[0]} refused the artifact: the file it downloaded hashes to ${modelSha.slice(0, 12)}…, not the registered ${artifacts.bad.sha256.slice(0, 12)}…`,
    );
    expect(row.reason).toBe(`artifact_verification: ${stage.reason}`);
    const refusal = await stack.api.deps.db.edgeTelemetry.findFirstOrThrow({
      where: { artifactId: artifacts.bad.id, status: 'verify_failed' },
    });
    expect(refusal).toMatchObject({ deviceId: stage.devices[0], modelSha256: modelSha, rolloutId: id });
    expect(refusal.detail).toMatchObject({
      expected_sha256: artifacts.bad.sha256,
      running_artifact_id: artifacts.good.id,
    });
    // The refusing device never stopped running the good artifact, and every device is assigned it again.
    const f = await allRunning(artifacts.good.id);
    expect(f.devices.every((d: any) => d.in_sync)).toBe(true);
  });

  it('rolls back an artifact over its latency budget at its first stage', async () => {
    const { id, handle } = await startRollout({
      artifact_id: artifacts.slow.id,
      stage_seconds: 600,
      gate: { max_p90_ms: 0.001, min_frames: 2 },
    });
    const outcome = await handle.result();
    expect(outcome).toMatchObject({ status: 'rolled_back', rule: 'max_p90_ms', stage: 0 });
    const [stage] = (await rolloutRow(id)).history as any[];
    expect(stage.reason).toMatch(
      new RegExp(
        `^device ${stage.device_names[0]} ran at p90 \\d+\\.\\d ms over \\d+ frames, above the budget of 0\\.001 ms$`,
      ),
    );
    expect(stage.telemetry.per_device[0].latency_ms.p90).toBeGreaterThan(0.001);
    await allRunning(artifacts.good.id);
  });

  it('replays the recorded rollout histories', async () => {
    await replayRecordedHistory(HISTORY, require.resolve('../workflows'), 'recorded');
    await replayRecordedHistory(HISTORY_OPERATOR, require.resolve('../workflows'), 'recorded-operator');
  });

  it('an agent told to stop reports its last figures and exits cleanly', async () => {
    const agent = agents[0]!;
    const before = await stack.api.deps.db.edgeTelemetry.count();
    agent.proc.kill('SIGTERM');
    expect(await agent.exited).toBe(0);
    expect(agent.output()).toMatch(/"msg":"stopped"/);
    expect(await stack.api.deps.db.edgeTelemetry.count()).toBeGreaterThan(before);
  });
});
