import fs from 'node:fs';
import path from 'node:path';
import pino from 'pino';
import { insideRing, type Point } from '../core/drivable';
import type { WorkerProcess } from '../runtime/worker-process';
import { startGpuWorkerProcess } from '../workers-gpu/process';
import { startIngestStack, type IngestStack } from '../testkit/media/harness';
import { busPhoto, createVehicleSession, type VehicleFrame } from '../testkit/media/vehicles';
import { recordHistoryIfAsked, replayRecordedHistory } from '../testkit/temporal';

/**
 * Drivable area on the real stack (docs/drivable.md): the road model on a real street photograph
 * (the bus photograph, 810×1080: paved street across its bottom left, a building above, the bus
 * in the middle), reviewer edits with their version check, a backfill as a revertible agent run
 * and its revert, coverage, and the refusals.
 */
const HISTORY = path.join(__dirname, 'histories/drivable-backfill.json');

/** Hand-marked on the photograph: street surface (inside) and building, bus side (outside). */
const ROAD_POINTS: Point[] = [
  [60, 1070],
  [120, 1040],
  [150, 1000],
];
const NOT_ROAD_POINTS: Point[] = [
  [405, 100],
  [500, 500],
];

let stack: IngestStack;
let gpu: { process: WorkerProcess; running: Promise<void> };
let frameIds: string[];
let sessionId: string;

const api = (method: string, p: string, token: string, body?: unknown) =>
  stack.api.call(method, p, { token, ...(body === undefined ? {} : { body }) });

const ringsOf = (flat: number[][]): Point[][] =>
  flat.map((r) => r.flatMap((v, i) => (i % 2 === 0 ? [[v, r[i + 1]!] as Point] : [])));

beforeAll(async () => {
  stack = await startIngestStack();
  const process = await startGpuWorkerProcess(stack.config, pino({ level: 'silent' }));
  gpu = { process, running: process.run() };
  const jpeg = fs.readFileSync(busPhoto());
  const frame = { jpeg, width: 810, height: 1080 } as VehicleFrame;
  const made = await createVehicleSession(stack.api.deps, [frame, frame, frame]);
  frameIds = made.frames.map((f) => f.id);
  sessionId = made.session.id;
}, 120_000);

afterAll(async () => {
  if (gpu?.process.worker.getState() === 'RUNNING') gpu.process.worker.shutdown();
  await gpu?.running.catch(() => undefined);
  await stack?.close();
});

describe('drivable area', () => {
  it('runs the road model on a frame: the street is inside, the building and the bus are not', async () => {
    const [f0] = frameIds;
    expect((await api('GET', `/api/frames/${f0}/drivable`, stack.reviewer)).status).toBe(404);
    const made = await api('POST', `/api/frames/${f0}/drivable`, stack.reviewer, {});
    expect(made.status).toBe(201);
    const area = made.body as {
      polygons: number[][];
      holes: number[][];
      source: string;
      version: number;
      candidates: Array<{ kind: string; points: Point[] }>;
      stats: { road_fraction: number };
    };
    expect(area.source).toBe('model');
    const rings = ringsOf(area.polygons);
    const holes = ringsOf(area.holes);
    const drivable = (p: Point) =>
      rings.some((r) => insideRing(p, r)) && !holes.some((h) => insideRing(p, h));
    for (const p of ROAD_POINTS) expect(drivable(p)).toBe(true);
    for (const p of NOT_ROAD_POINTS) expect(drivable(p)).toBe(false);
    expect(area.stats.road_fraction).toBeGreaterThan(0.03);
    // The curb by the bollards: candidates in the lower part of the frame.
    const curb = area.candidates.filter((c) => c.kind === 'curb');
    expect(curb.length).toBeGreaterThan(0);
    for (const c of curb) for (const [, y] of c.points) expect(y).toBeGreaterThan(540);
  });

  it('edits with expected_version and refuses a stale one', async () => {
    const [f0] = frameIds;
    const before = (await api('GET', `/api/frames/${f0}/drivable`, stack.annotator)).body as {
      version: number;
    };
    const polygons = [[0, 900, 400, 900, 400, 1080, 0, 1080]];
    const edited = await api('PUT', `/api/frames/${f0}/drivable`, stack.reviewer, {
      polygons,
      expected_version: before.version,
    });
    expect(edited.status).toBe(200);
    expect(edited.body).toMatchObject({ source: 'human', version: before.version + 1, polygons });
    const stale = await api('PUT', `/api/frames/${f0}/drivable`, stack.reviewer, {
      polygons,
      expected_version: before.version,
    });
    expect(stale.status).toBe(409);
    expect((await api('POST', `/api/frames/${f0}/drivable`, stack.reviewer, {})).status).toBe(409);
    expect(
      (await api('PUT', `/api/frames/${f0}/drivable`, stack.annotator, { polygons, expected_version: 2 }))
        .status,
    ).toBe(403);
  });

  it('backfills the session as a revertible run that never touches the human area, and reverts', async () => {
    const [f0, f1] = frameIds;
    const started = await api('POST', '/api/drivable/backfill', stack.admin, { session_ids: [sessionId] });
    expect(started.status).toBe(202);
    const run = started.body as { run_id: string; workflow_id: string };
    await stack.env.client.workflow.getHandle(run.workflow_id).result();
    await recordHistoryIfAsked(HISTORY, () =>
      stack.env.client.workflow.getHandle(run.workflow_id).fetchHistory(),
    );
    const done = (await api('GET', `/api/agent/runs/${run.run_id}`, stack.reviewer)).body as {
      status: string;
      changes: { frames: number };
    };
    expect(done).toMatchObject({ status: 'completed', changes: { frames: 2 } });
    expect(
      ((await api('GET', `/api/frames/${f0}/drivable`, stack.reviewer)).body as { source: string }).source,
    ).toBe('human');
    expect(
      ((await api('GET', `/api/frames/${f1}/drivable`, stack.reviewer)).body as { run_id: string }).run_id,
    ).toBe(run.run_id);
    const coverage = await api('GET', `/api/drivable/coverage?session_ids=${sessionId}`, stack.annotator);
    expect(coverage.body).toMatchObject({
      sessions: [{ session_id: sessionId, frames: 3, with_area: 3, by_source: { model: 2, human: 1 } }],
    });

    const revert = await api('POST', `/api/agent/runs/${run.run_id}/revert`, stack.admin);
    expect(revert.status).toBe(202);
    await stack.env.client.workflow.getHandle(`agent-run-revert-${run.run_id}`).result();
    expect((await api('GET', `/api/frames/${f1}/drivable`, stack.reviewer)).status).toBe(404);
    expect(
      ((await api('GET', `/api/frames/${f0}/drivable`, stack.reviewer)).body as { source: string }).source,
    ).toBe('human');
  });

  it('replaces model areas only when asked, and a revert restores the replaced area exactly', async () => {
    const [f0, f1, f2] = frameIds;
    expect((await api('POST', `/api/frames/${f1}/drivable`, stack.reviewer, {})).status).toBe(201);
    const original = (await api('GET', `/api/frames/${f1}/drivable`, stack.reviewer)).body as Record<
      string,
      unknown
    >;
    expect(original).toMatchObject({ source: 'model', run_id: null });
    const human = (await api('GET', `/api/frames/${f0}/drivable`, stack.reviewer)).body;
    const backfill = async (body: object) => {
      const started = await api('POST', '/api/drivable/backfill', stack.admin, body);
      expect(started.status).toBe(202);
      const run = started.body as { run_id: string; workflow_id: string };
      await stack.env.client.workflow.getHandle(run.workflow_id).result();
      const done = (await api('GET', `/api/agent/runs/${run.run_id}`, stack.reviewer)).body as {
        changes: { frames: number; areas_created: number; areas_replaced: number };
      };
      return { runId: run.run_id, changes: done.changes };
    };
    const revert = async (runId: string) => {
      expect((await api('POST', `/api/agent/runs/${runId}/revert`, stack.admin)).status).toBe(202);
      await stack.env.client.workflow.getHandle(`agent-run-revert-${runId}`).result();
    };

    // Without replace_model the model area stays as it is; only the frame with none gets one.
    const keep = await backfill({ session_ids: [sessionId] });
    expect(keep.changes).toMatchObject({ frames: 1, areas_created: 1, areas_replaced: 0 });
    expect((await api('GET', `/api/frames/${f1}/drivable`, stack.reviewer)).body).toEqual(original);
    await revert(keep.runId);
    expect((await api('GET', `/api/frames/${f2}/drivable`, stack.reviewer)).status).toBe(404);

    const replace = await backfill({ session_ids: [sessionId], replace_model: true });
    expect(replace.changes).toMatchObject({ frames: 2, areas_created: 1, areas_replaced: 1 });
    const replaced = (await api('GET', `/api/frames/${f1}/drivable`, stack.reviewer)).body;
    expect(replaced).toMatchObject({ source: 'model', run_id: replace.runId });
    await revert(replace.runId);
    // The replaced row comes back whole: id, version, timestamps and polygons as they were.
    expect((await api('GET', `/api/frames/${f1}/drivable`, stack.reviewer)).body).toEqual(original);
    expect((await api('GET', `/api/frames/${f2}/drivable`, stack.reviewer)).status).toBe(404);
    expect((await api('GET', `/api/frames/${f0}/drivable`, stack.reviewer)).body).toEqual(human);
  });

  it('refuses by name', async () => {
    const unknown = '00000000-0000-4000-8000-000000000001';
    expect(
      (await api('POST', '/api/drivable/backfill', stack.admin, { session_ids: [unknown] })).status,
    ).toBe(422);
    expect(
      (await api('POST', '/api/drivable/backfill', stack.reviewer, { session_ids: [sessionId] })).status,
    ).toBe(403);
    expect((await api('GET', `/api/frames/${unknown}/drivable`, stack.annotator)).status).toBe(404);
    expect(
      (
        await api('POST', `/api/frames/${frameIds[2]}/drivable`, stack.reviewer, {
          holes: [[0, 0, 1, 0, 1, 1]],
        })
      ).status,
    ).toBe(422);
  });

  it('replays the recorded backfill history', async () => {
    await replayRecordedHistory(HISTORY, require.resolve('../workflows'), 'drivable-backfill');
  });
});
