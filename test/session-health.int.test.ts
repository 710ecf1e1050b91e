import fs from 'node:fs';
import path from 'node:path';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { Worker } from '@temporalio/worker';
import { createCpuActivities } from '../activities';
import { INSPECTOR_VERSION } from '../core/health';
import { createCpuWorker } from '../workers-cpu/worker';
import { startTestApi, createUserWithToken, type TestApi } from '../testkit/api';
import { createTestDatabase, type TestDatabase } from '../testkit/database';
import { createSessionFixture, type SessionFixtureOptions } from '../testkit/session-fixtures';
import { testConfig } from '../testkit/stack';
import {
  recordHistoryIfAsked,
  replayRecordedHistory,
  scheduledActivities,
  startTemporalTestEnv,
} from '../testkit/temporal';

const HISTORY = path.join(__dirname, 'histories/session-health.json');
const SWEEP_HISTORY = path.join(__dirname, 'histories/health-sweep.json');

let env: TestWorkflowEnvironment;
let db: TestDatabase;
let api: TestApi;
let worker: Worker;
let running: Promise<void>;
let admin: string;
let reviewer: string;
let annotator: string;

beforeAll(async () => {
  env = await startTemporalTestEnv();
  db = await createTestDatabase();
  const config = testConfig({ DATABASE_URL: db.url, APP_TEMPORAL__ADDRESS: env.address });
  api = await startTestApi(config);
  worker = await createCpuWorker({
    connection: env.nativeConnection,
    config,
    activities: createCpuActivities(api.deps),
  });
  running = worker.run();
  admin = (await createUserWithToken(api.deps, 'admin')).token;
  reviewer = (await createUserWithToken(api.deps, 'reviewer')).token;
  annotator = (await createUserWithToken(api.deps, 'annotator')).token;
});

afterAll(async () => {
  if (worker?.getState() === 'RUNNING') worker.shutdown();
  await running;
  await api?.close();
  await db?.drop();
  await env?.teardown();
});

/** A clean 2-second drive at 3 fps with its one declared camera present. */
const clean: SessionFixtureOptions = {
  frames: 7,
  session: { expectedSensors: ['camera_front'], presentSensors: ['camera_front'] },
};
/** The same drive, but dark and without the IMU it declares. */
const faulty: SessionFixtureOptions = {
  frames: 7,
  luma: () => 12,
  session: { expectedSensors: ['camera_front', 'imu'], presentSensors: ['camera_front'] },
};

/** Starts a health run through the API and waits for its workflow. */
async function runHealth(sessionId: string) {
  const res = await api.call('POST', `/api/sessionhealth/session/${sessionId}/run`, { token: reviewer });
  expect(res.status).toBe(202);
  expect(res.headers.get('location')).toBe(`/api/sessionhealth/session/${sessionId}`);
  expect(res.body.workflow_id).toBe(`health-${sessionId}`);
  const handle = env.client.workflow.getHandle(res.body.workflow_id, res.body.run_id);
  return { handle, result: (await handle.result()) as { passed: boolean; score: number } };
}

const gate = async (sessionId: string) =>
  (await api.call('GET', `/api/sessionhealth/gate/${sessionId}`, { token: annotator })).body;
const quarantined = async (sessionId: string) =>
  (await api.deps.db.session.findUniqueOrThrow({ where: { id: sessionId } })).quarantined;

describe('sessionHealthWorkflow', () => {
  it('scores a clean session from its stored frames, writes an inspector row and leaves it released', async () => {
    const { session } = await createSessionFixture(api.deps, clean);
    const { result, handle } = await runHealth(session.id);
    expect(result).toEqual({ passed: true, score: 1 });

    const rows = await api.deps.db.sessionHealth.findMany({ where: { sessionId: session.id } });
    expect(rows).toHaveLength(1);
    expect(rows[0]!.indexerVersion).toBe(INSPECTOR_VERSION);
    const checks = rows[0]!.checks as any;
    expect(checks.exposure).toMatchObject({ passed: true, source: 'storage', examined: 7, unreadable: 0 });
    expect(checks.frame_rate).toMatchObject({ expected_frames: 7, delivered_frames: 7 });
    expect(await gate(session.id)).toMatchObject({
      verdict: 'passed',
      quarantined: false,
      autolabel_allowed: true,
      decided_by: 'inspector',
    });

    // The activity reads as the business step in the history.
    const history = await handle.fetchHistory();
    expect(scheduledActivities(history)).toEqual(['inspectSessionHealth']);
    await recordHistoryIfAsked(HISTORY, () => Promise.resolve(history));
  });

  it('replays its recorded history against the current workflow code', async () => {
    expect(JSON.parse(fs.readFileSync(HISTORY, 'utf8')).events.length).toBeGreaterThan(5);
    await expect(
      replayRecordedHistory(HISTORY, require.resolve('../workflows'), 'recorded'),
    ).resolves.toBeUndefined();
  });

  it('quarantines a failing session, naming the failed checks, and audits it', async () => {
    const { session } = await createSessionFixture(api.deps, faulty);
    const { result } = await runHealth(session.id);
    expect(result.passed).toBe(false);
    expect(result.score).toBeLessThan(1);
    expect(await quarantined(session.id)).toBe(true);

    const detail = (await api.call('GET', `/api/sessionhealth/session/${session.id}`, { token: annotator }))
      .body;
    expect(detail.gate).toMatchObject({ verdict: 'failed', quarantined: true, autolabel_allowed: false });
    expect(detail.rows[0].checks.exposure.passed).toBe(false);
    expect(detail.rows[0].checks.sensors.missing).toEqual(['imu']);
    expect(detail.rows[0].gate_reads).toBe(true);
    const audit = await api.deps.db.auditLog.findMany({
      where: { subjectId: session.id },
      orderBy: { id: 'asc' },
    });
    expect(audit.map((a) => a.action)).toEqual([
      'session.health.run.started',
      'session.health.inspected',
      'session.quarantined',
    ]);
  });

  it('uses exposure stats ingest recorded instead of decoding frames', async () => {
    // The stored JPEGs are dark, but ingest recorded good exposure: the recorded stats are what count.
    const { session } = await createSessionFixture(api.deps, {
      ...clean,
      luma: () => 10,
      context: () => ({ exposure: { mean_luma: 120, clipped_dark: 0, clipped_bright: 0 } }),
    });
    const { result } = await runHealth(session.id);
    expect(result.passed).toBe(true);
    const row = await api.deps.db.sessionHealth.findFirstOrThrow({ where: { sessionId: session.id } });
    expect((row.checks as any).exposure).toMatchObject({ source: 'ingest', mean_luma: 120 });
  });

  it('fails exposure when the stored frames cannot be read, rather than calling them well exposed', async () => {
    const { session } = await createSessionFixture(api.deps, { ...clean, storeImages: false });
    const { result } = await runHealth(session.id);
    expect(result.passed).toBe(false);
    const row = await api.deps.db.sessionHealth.findFirstOrThrow({ where: { sessionId: session.id } });
    expect((row.checks as any).exposure).toMatchObject({ passed: false, examined: 0, unreadable: 7 });
  });
});

describe('the health gate', () => {
  it('is not lifted by a passing row of another writer, through the API or written directly', async () => {
    const { session } = await createSessionFixture(api.deps, faulty);
    await runHealth(session.id);
    expect(await quarantined(session.id)).toBe(true);

    const posted = await api.call('POST', `/api/inspector/sessions/${session.id}/health`, {
      token: reviewer,
      body: { indexer_version: 'lidar-indexer@3', passed: true, score: 1, checks: { lidar: 'ok' } },
    });
    expect(posted.status).toBe(201);
    expect(posted.body.row).toMatchObject({
      indexer_version: 'lidar-indexer@3',
      passed: true,
      gate_reads: false,
    });
    expect(posted.body.gate).toMatchObject({ verdict: 'failed', quarantined: true });
    await api.deps.db.sessionHealth.create({
      data: { sessionId: session.id, indexerVersion: 'inspector-fork@9', passed: true, score: 1 },
    });

    expect(await quarantined(session.id)).toBe(true);
    expect(await gate(session.id)).toMatchObject({
      verdict: 'failed',
      quarantined: true,
      decided_by: 'inspector',
    });
    const writers = (
      await api.call('GET', `/api/inspector/sessions/${session.id}/health`, { token: annotator })
    ).body.writers;
    expect(writers.map((w: any) => [w.indexer_version, w.passed, w.gate_reads])).toEqual([
      ['inspector-fork@9', true, false],
      [INSPECTOR_VERSION, false, true],
      ['lidar-indexer@3', true, false],
    ]);
  });

  it("refuses rows under the inspector's own indexer_version from anyone but the inspector", async () => {
    const { session } = await createSessionFixture(api.deps, faulty);
    for (const version of [INSPECTOR_VERSION, 'inspector@2']) {
      const res = await api.call('POST', `/api/inspector/sessions/${session.id}/health`, {
        token: admin,
        body: { indexer_version: version, passed: true, score: 1 },
      });
      expect(res.status).toBe(422);
      expect(res.body.detail).toMatch(/belongs to the inspector/);
    }
    expect(await api.deps.db.sessionHealth.count({ where: { sessionId: session.id } })).toBe(0);
  });

  it('lifts a quarantine on a newer passing row of its own version', async () => {
    const { session } = await createSessionFixture(api.deps, { ...faulty, luma: () => 128 });
    await runHealth(session.id);
    expect(await quarantined(session.id)).toBe(true);
    // The IMU stream turns out to be there after all (ingest re-read the drive).
    await api.deps.db.session.update({
      where: { id: session.id },
      data: { presentSensors: ['camera_front', 'imu'] },
    });
    const { result } = await runHealth(session.id);
    expect(result.passed).toBe(true);
    expect(await quarantined(session.id)).toBe(false);
    const actions = (
      await api.deps.db.auditLog.findMany({ where: { subjectId: session.id }, orderBy: { id: 'asc' } })
    ).map((a) => a.action);
    expect(actions.filter((a) => a === 'session.quarantined' || a === 'session.released')).toEqual([
      'session.quarantined',
      'session.released',
    ]);
  });

  it('takes an admin override with a reason and an audit record; a later inspector row decides again', async () => {
    const { session } = await createSessionFixture(api.deps, faulty);
    await runHealth(session.id);
    const url = `/api/sessionhealth/session/${session.id}/override`;

    expect(
      (
        await api.call('POST', url, {
          token: reviewer,
          body: { quarantined: false, reason: 'IMU not fitted on this rig' },
        })
      ).status,
    ).toBe(403);
    const noReason = await api.call('POST', url, { token: admin, body: { quarantined: false } });
    expect(noReason.status).toBe(422);
    expect(noReason.body.errors.map((e: any) => e.field)).toContain('body.reason');
    expect(
      (await api.call('POST', url, { token: admin, body: { quarantined: false, reason: '  ' } })).status,
    ).toBe(422);
    expect(await quarantined(session.id)).toBe(true);
    expect(await api.deps.db.sessionHealthOverride.count({ where: { sessionId: session.id } })).toBe(0);

    const res = await api.call('POST', url, {
      token: admin,
      body: { quarantined: false, reason: 'IMU not fitted on this rig' },
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      verdict: 'passed',
      quarantined: false,
      decided_by: 'override',
      override: { reason: 'IMU not fitted on this rig' },
    });
    expect(await quarantined(session.id)).toBe(false);
    const audit = await api.deps.db.auditLog.findFirstOrThrow({
      where: { subjectId: session.id, action: 'session.health.overridden' },
    });
    expect(audit.detail).toMatchObject({ quarantined: false, reason: 'IMU not fitted on this rig' });
    expect(audit.actorId).not.toBeNull();

    await runHealth(session.id);
    expect(await gate(session.id)).toMatchObject({
      verdict: 'failed',
      quarantined: true,
      decided_by: 'inspector',
    });
    expect(await quarantined(session.id)).toBe(true);
  });

  it('answers unknown and malformed session ids with problem+json', async () => {
    const unknown = '00000000-0000-4000-8000-000000000000';
    const missing = await api.call('GET', `/api/sessionhealth/gate/${unknown}`, { token: annotator });
    expect(missing.status).toBe(404);
    expect(missing.headers.get('content-type')).toMatch(/application\/problem\+json/);
    const bad = await api.call('GET', '/api/sessionhealth/gate/not-a-uuid', { token: annotator });
    expect(bad.status).toBe(422);
    expect(bad.body.errors).toEqual([{ field: 'path.session_id', message: 'must be a UUID' }]);
    expect(
      (await api.call('POST', `/api/sessionhealth/session/${unknown}/run`, { token: reviewer })).status,
    ).toBe(404);
    expect(
      (
        await api.call('POST', `/api/sessionhealth/session/${unknown}/override`, {
          token: admin,
          body: { quarantined: true, reason: 'test' },
        })
      ).status,
    ).toBe(404);
    expect(
      (await api.call('POST', `/api/sessionhealth/session/${unknown}/run`, { token: annotator })).status,
    ).toBe(403);
  });

  it('answers 409 while a health run of the session is already running', async () => {
    const { session } = await createSessionFixture(api.deps, clean);
    // A run parked on a queue nobody polls stays open.
    const parked = await env.client.workflow.start('sessionHealthWorkflow', {
      taskQueue: 'nobody-polls',
      workflowId: `health-${session.id}`,
      args: [{ sessionId: session.id }],
    });
    const res = await api.call('POST', `/api/sessionhealth/session/${session.id}/run`, { token: reviewer });
    expect(res.status).toBe(409);
    expect(res.body.detail).toMatch(/already running/);
    await parked.terminate('test over');
  });
});

describe('board, trends, compat matrix and sweep', () => {
  it('sweeps every session through a workflow and reports the board and trends from the gate', async () => {
    const vehicleId = `rig-${Date.now()}`;
    const good = await createSessionFixture(api.deps, { ...clean, session: { ...clean.session, vehicleId } });
    const bad = await createSessionFixture(api.deps, {
      ...faulty,
      session: { ...faulty.session, vehicleId },
    });
    const total = await api.deps.db.session.count();

    const res = await api.call('POST', '/api/inspector/health/sweep', { token: reviewer });
    expect(res.status).toBe(202);
    expect(res.body.workflow_id).toBe('health-sweep');
    const sweep = env.client.workflow.getHandle('health-sweep', res.body.run_id);
    const tally = await sweep.result();
    expect(tally).toMatchObject({ inspected: total, errored: 0 });
    expect(tally.passed + tally.failed).toBe(total);
    await recordHistoryIfAsked(SWEEP_HISTORY, () => sweep.fetchHistory());
    await expect(
      replayRecordedHistory(SWEEP_HISTORY, require.resolve('../workflows'), 'recorded-sweep'),
    ).resolves.toBeUndefined();

    const board = (await api.call('GET', '/api/sessionhealth/board', { token: annotator })).body;
    expect(board.totals.sessions).toBe(total);
    expect(board.totals.passed + board.totals.failed + board.totals.uninspected).toBe(total);
    expect(board.totals.quarantined).toBe(await api.deps.db.session.count({ where: { quarantined: true } }));
    const listed = board.quarantined.map((q: any) => q.session.id);
    expect(listed).toContain(bad.session.id);
    expect(listed).not.toContain(good.session.id);
    expect(board.quarantined.find((q: any) => q.session.id === bad.session.id).failed_checks).toEqual(
      expect.arrayContaining(['exposure', 'sensors']),
    );

    const trends = (await api.call('GET', `/api/sessionhealth/rig/${vehicleId}/trends`, { token: annotator }))
      .body;
    expect(trends.sessions.map((s: any) => [s.session_id, s.verdict])).toEqual([
      [good.session.id, 'passed'],
      [bad.session.id, 'failed'],
    ]);
    expect(trends.summary).toMatchObject({ sessions: 2, inspected: 2, pass_rate: 0.5 });
    expect(trends.sessions[1].check_scores.sensors).toBeCloseTo(0.5, 4);
    expect(
      (await api.call('GET', '/api/sessionhealth/rig/no-such-rig/trends', { token: annotator })).status,
    ).toBe(404);

    const matrix = (await api.call('GET', '/api/sessionhealth/compat-matrix', { token: annotator })).body;
    const inspector = matrix.versions.find((v: any) => v.indexer_version === INSPECTOR_VERSION);
    expect(inspector).toMatchObject({ gate_reads: true, sessions: total });
    expect(matrix.sessions_without_gate_row).toBe(0);
    expect(matrix.versions.find((v: any) => v.indexer_version === 'lidar-indexer@3')).toMatchObject({
      gate_reads: false,
      passed_sessions: 1,
    });
  });
});
