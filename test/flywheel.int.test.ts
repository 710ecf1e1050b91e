import path from 'node:path';
import { startIngestStack, uploadDrive, type IngestStack } from '../testkit/media/harness';
import { makeDriveVideo, makePatternVideo } from '../testkit/media/video';
import { recordHistoryIfAsked, replayRecordedHistory } from '../testkit/temporal';
import { E_BIKE_SCENES, labelledEBikeDrive, sealEBikeGold } from '../testkit/training';
import { readFileSync } from 'node:fs';

/**
 * Flywheel runs on the real stack (PostgreSQL, MinIO, Temporal, the gpu worker running
 * yolox_nano.onnx and training): a drive is uploaded and its ingest started, and at once a flywheel
 * run of its session starts; it waits for the ingest, auto-labels the session, counts its review
 * routing, exports the corpus's training data, trains a challenger and gates it against the
 * champion on a sealed gold set — each of those the platform's own workflow, a child of the run.
 * A cpu worker restart in the middle changes nothing but the timing. A training cycle runs the
 * export → train → gate part alone; a run waiting on its ingest is cancelled through the jobs route.
 */
jest.setTimeout(600_000);
const HISTORY = path.join(__dirname, 'histories/flywheel-session.json');

let stack: IngestStack;

beforeAll(async () => {
  stack = await startIngestStack({
    gpu: true,
    env: { APP_FLYWHEEL__POLL_SECONDS: '1', APP_TRAINING__HEARTBEAT_TIMEOUT_SECONDS: '20' },
  });
}, 120_000);

afterAll(async () => {
  await stack?.close();
});

const call = (method: string, p: string, token: string, body?: unknown) =>
  stack.api.call(method, p, { token, ...(body === undefined ? {} : { body }) });

interface StageOut {
  stage: string;
  state: string;
  started_at: string | null;
  finished_at: string | null;
  detail: Record<string, unknown>;
}
interface RunOut {
  run_id: string;
  kind: string;
  session_id: string | null;
  status: string;
  stage: string;
  stages: StageOut[];
  outputs: Record<string, string | boolean | null>;
  error: string | null;
  workflow_id: string;
  params: Record<string, unknown>;
}

async function runOf(runId: string): Promise<RunOut> {
  const res = await call('GET', `/api/flywheel/stages?run_id=${runId}`, stack.annotator);
  expect(res.status).toBe(200);
  return res.body.runs[0] as RunOut;
}

/** Polls the run until `done` holds; a run that ends otherwise fails with what its children did. */
async function runWhen(runId: string, what: string, done: (r: RunOut) => boolean): Promise<RunOut> {
  for (let i = 0; ; i++) {
    const r = await runOf(runId);
    if (done(r)) return r;
    if (r.status !== 'running' || i > 2000) {
      const { db } = stack.api.deps;
      const children = {
        autolabel: await db.autolabelJob.findMany({ select: { id: true, state: true, error: true } }),
        exports: await db.exportJob.findMany({ select: { id: true, state: true, error: true } }),
        training: await db.trainingJob.findMany({ select: { id: true, status: true, error: true } }),
      };
      throw new Error(`waited in vain for ${what}: ${JSON.stringify(r)}\n${JSON.stringify(children)}`);
    }
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** Uploads a drive and starts its ingest; answers its session. The pattern drive passes the health gate, the dashcam drive (blur, darkness, duplicates) does not. */
async function startIngest(drive: 'pattern' | 'dashcam', seconds: number, name: string): Promise<string> {
  const file =
    drive === 'pattern'
      ? makePatternVideo(path.join(stack.dir, `${name}.mp4`), { width: 640, height: 360, seconds })
      : makeDriveVideo(stack.dir, `${name}.mp4`);
  const video = readFileSync(file);
  const uploadId = await uploadDrive(stack, `${name}.mp4`, video);
  const res = await call('POST', '/api/ingest', stack.reviewer, { upload_id: uploadId, kind: 'video', name });
  expect(res.status).toBe(202);
  return res.body.session_id as string;
}

let goldSessionIds: string[];

beforeAll(async () => {
  // The gold set: a held-out drive, boxes drawn by a reviewer, sealed.
  goldSessionIds = [(await sealEBikeGold(stack.api, stack.reviewer, 'flywheel gold')).sessionId];
  // Drives people labelled already, one in each split of the export: the corpus's training data.
  for (const split of ['train', 'val'] as const)
    await labelledEBikeDrive(stack.api.deps, E_BIKE_SCENES.train.slice(0, 2), split);
}, 120_000);

describe('a session through the flywheel', () => {
  let sessionId: string;
  let run: RunOut;
  let started: { status: number; headers: Headers; body: Record<string, unknown> };

  beforeAll(async () => {
    sessionId = await startIngest('pattern', 4, 'flywheel-drive');
    // Started while the drive is still being ingested: the run waits for it.
    started = await call('POST', `/api/flywheel/session/${sessionId}/run`, stack.reviewer, {
      training_epochs: 2,
    });
    expect(started.status).toBe(202);
    const runId = started.body.run_id as string;
    await runWhen(runId, 'the auto-label stage', (r) =>
      ['autolabel', 'review', 'export', 'train', 'gate'].includes(r.stage),
    );
    await stack.restartWorker();
    run = await runWhen(runId, 'the end', (r) => r.status === 'completed');
  }, 560_000);

  it('answers 202 with its stages as Location and the workflow flywheel-session-<session_id>', () => {
    expect(started.headers.get('location')).toBe(`/api/flywheel/stages?run_id=${started.body.run_id}`);
    expect(started.body).toMatchObject({
      kind: 'session',
      session_id: sessionId,
      status: 'running',
      stage: 'ingest',
      workflow_id: `flywheel-session-${sessionId}`,
      params: { relabel: false, wait_for_review: false, training_epochs: 2 },
    });
  });

  it('went through every stage, in order, each saying what it made', async () => {
    expect(run.stages.map((s) => [s.stage, s.state])).toEqual([
      ['ingest', 'done'],
      ['autolabel', 'done'],
      ['review', 'done'],
      ['export', 'done'],
      ['train', 'done'],
      ['gate', 'done'],
    ]);
    for (let i = 1; i < run.stages.length; i++)
      expect(Date.parse(run.stages[i]!.started_at!)).toBeGreaterThanOrEqual(
        Date.parse(run.stages[i - 1]!.finished_at!),
      );
    const [ingest, autolabel, review, exported, train, gate] = run.stages as [
      StageOut,
      StageOut,
      StageOut,
      StageOut,
      StageOut,
      StageOut,
    ];
    expect(ingest.detail).toMatchObject({ session_state: 'ready' });
    expect(ingest.detail.frames).toBeGreaterThan(0);
    expect(autolabel.detail).toMatchObject({ reused: false, job_id: run.outputs.autolabel_job_id });
    expect(exported.detail).toMatchObject({
      export_job_id: run.outputs.export_job_id,
      commit_id: run.outputs.commit_id,
    });
    expect(train.detail).toMatchObject({
      training_job_id: run.outputs.training_job_id,
      model_version: run.outputs.model_version,
    });
    expect(gate.detail).toMatchObject({ promotion_id: run.outputs.promotion_id });

    const { db } = stack.api.deps;
    // What each stage says is what its workflow left in the database.
    const session = await db.session.findUniqueOrThrow({ where: { id: sessionId } });
    expect(ingest.detail.frames).toBe(session.frameCount);
    const label = await db.autolabelJob.findUniqueOrThrow({
      where: { id: run.outputs.autolabel_job_id as string },
    });
    expect(label).toMatchObject({ sessionId, state: 'completed' });
    const objects = await db.annoObject.groupBy({
      by: ['state'],
      where: { frame: { sessionId } },
      _count: { _all: true },
    });
    expect(review.detail.objects).toEqual(Object.fromEntries(objects.map((o) => [o.state, o._count._all])));
    const exportJob = await db.exportJob.findUniqueOrThrow({
      where: { id: run.outputs.export_job_id as string },
    });
    expect(exportJob).toMatchObject({ state: 'succeeded', commitId: run.outputs.commit_id });
    // A drive the challenger is judged on never trains it.
    expect((exportJob.predicate as { exclude_session_ids: string[] }).exclude_session_ids).toEqual(
      goldSessionIds,
    );
    const training = await db.trainingJob.findUniqueOrThrow({
      where: { id: run.outputs.training_job_id as string },
    });
    expect(training).toMatchObject({
      status: 'completed',
      datasetCommitId: run.outputs.commit_id,
      modelVersion: run.outputs.model_version,
    });
    expect(run.outputs.model_version).toMatch(/^trained-/);
    const promotion = await db.promotion.findUniqueOrThrow({
      where: { id: run.outputs.promotion_id as string },
    });
    expect(promotion).toMatchObject({
      challengerVersion: run.outputs.model_version,
      outcome: run.outputs.gate_outcome,
      rule: run.outputs.gate_rule,
    });
    expect(['promoted', 'refused']).toContain(promotion.outcome);
  });

  it('ran the platform’s own workflows as its children, under their usual ids', async () => {
    const parent = `flywheel-session-${sessionId}`;
    for (const id of [
      `autolabel-${sessionId}`,
      `export-${run.outputs.export_job_id}`,
      `training-${run.outputs.training_job_id}`,
      `promotion-${run.outputs.model_version}`,
    ]) {
      const d = await stack.env.client.workflow.getHandle(id).describe();
      expect([id, d.status.name, d.parentExecution?.workflowId]).toEqual([id, 'COMPLETED', parent]);
    }
  });

  it('shows in the jobs list, announced its end once, and refuses a second run while one runs', async () => {
    const jobs = await call('GET', '/api/jobs?kind=flywheel', stack.annotator);
    expect(jobs.body.items).toContainEqual(
      expect.objectContaining({ kind: 'flywheel', job_id: run.run_id, state: 'completed', progress: 1 }),
    );
    const { db } = stack.api.deps;
    const finished = await db.platformEvent.findMany({
      where: { kind: 'flywheel.finished', subjectId: run.run_id },
    });
    expect(finished).toHaveLength(1);
    expect(finished[0]!.payload).toMatchObject({
      status: 'completed',
      gate_outcome: run.outputs.gate_outcome,
    });
    expect(
      await db.auditLog.count({
        where: { subjectId: run.run_id, action: { in: ['flywheel.started', 'flywheel.completed'] } },
      }),
    ).toBe(2);
  });

  it('replays its recorded history', async () => {
    await recordHistoryIfAsked(HISTORY, () =>
      stack.env.client.workflow.getHandle(`flywheel-session-${sessionId}`).fetchHistory(),
    );
    await expect(
      replayRecordedHistory(HISTORY, require.resolve('../workflows'), `flywheel-session-${sessionId}`),
    ).resolves.toBeUndefined();
  });

  it('reuses the session’s auto-label on a second run unless relabel is asked', async () => {
    const again = await call('POST', `/api/flywheel/session/${sessionId}/run`, stack.reviewer, {
      training_epochs: 1,
    });
    expect(again.status).toBe(202);
    const second = await runWhen(again.body.run_id, 'its review stage', (r) =>
      r.stages.some((s) => s.stage === 'review' && s.state === 'done'),
    );
    expect(second.stages[1]).toMatchObject({
      state: 'done',
      detail: { reused: true, job_id: run.outputs.autolabel_job_id },
    });
    const busy = await call('POST', `/api/flywheel/session/${sessionId}/run`, stack.reviewer, {});
    if (busy.status === 409) expect(busy.body.detail).toMatch(/already running/);
    else expect(busy.status).toBe(202); // the second run had already ended
    await runWhen(again.body.run_id, 'its end', (r) => r.status === 'completed');
  });
});

describe('a training cycle', () => {
  it('exports, trains and gates as one parent workflow', async () => {
    const started = await call('POST', '/api/agent/training/cycle', stack.reviewer, { training_epochs: 1 });
    expect(started.status).toBe(202);
    expect(started.body).toMatchObject({
      kind: 'training_cycle',
      session_id: null,
      workflow_id: `training-cycle-${started.body.run_id}`,
    });
    const done = await runWhen(started.body.run_id, 'the end', (r) => r.status === 'completed');
    expect(done.stages.map((s) => [s.stage, s.state])).toEqual([
      ['export', 'done'],
      ['train', 'done'],
      ['gate', 'done'],
    ]);
    const { db } = stack.api.deps;
    const promotion = await db.promotion.findUniqueOrThrow({
      where: { id: done.outputs.promotion_id as string },
    });
    expect(promotion.challengerVersion).toBe(done.outputs.model_version);
  });
});

describe('refusals and cancels', () => {
  it('is cancelled through the jobs route while it waits for its ingest, leaving later stages pending', async () => {
    const sessionId = await startIngest('pattern', 3, 'cancelled-drive');
    const started = await call('POST', `/api/flywheel/session/${sessionId}/run`, stack.reviewer, {});
    expect(started.status).toBe(202);
    const cancel = await call('POST', `/api/jobs/flywheel/${started.body.run_id}/cancel`, stack.reviewer, {});
    expect(cancel.status).toBe(202);
    const ended = await runWhen(started.body.run_id, 'the cancel', (r) => r.status === 'cancelled').catch(
      async () => runOf(started.body.run_id as string),
    );
    expect(ended.status).toBe('cancelled');
    expect(ended.stages.map((s) => s.state)).toEqual([
      'cancelled',
      'pending',
      'pending',
      'pending',
      'pending',
      'pending',
    ]);
    // The ingest itself is not the run's child: it goes on.
    const d = await stack.env.client.workflow.getHandle(`ingest-${sessionId}`).result();
    expect(d).toMatchObject({ sessionId });
  });

  it('fails by name at the auto-label stage when the ingest quarantines the session', async () => {
    const sessionId = await startIngest('dashcam', 8, 'quarantined-drive');
    const started = await call('POST', `/api/flywheel/session/${sessionId}/run`, stack.reviewer, {});
    expect(started.status).toBe(202);
    const ended = await runWhen(started.body.run_id, 'its failure', (r) => r.status === 'failed').catch(
      async () => runOf(started.body.run_id as string),
    );
    expect(ended).toMatchObject({ status: 'failed', stage: 'autolabel' });
    expect(ended.error).toMatch(/quarantined by its health check/);
    expect(ended.stages.map((s) => s.state)).toEqual([
      'done',
      'failed',
      'pending',
      'pending',
      'pending',
      'pending',
    ]);
    const { db } = stack.api.deps;
    expect(await db.autolabelJob.count({ where: { sessionId } })).toBe(0);
    // Now that the session is quarantined, a new run is refused before it starts.
    const again = await call('POST', `/api/flywheel/session/${sessionId}/run`, stack.reviewer, {});
    expect(again.status).toBe(422);
    expect(again.body.detail).toMatch(/quarantined/);
  });

  it('refuses an unknown session, a bad gold set, a failed ingest, and callers without the role', async () => {
    const unknown = crypto.randomUUID();
    expect((await call('POST', `/api/flywheel/session/${unknown}/run`, stack.reviewer, {})).status).toBe(404);
    const { db } = stack.api.deps;
    const s = await db.session.create({
      data: { name: 'broken', sourceKind: 'video', state: 'failed', error: 'no video stream' },
    });
    const failed = await call('POST', `/api/flywheel/session/${s.id}/run`, stack.reviewer, {});
    expect(failed.status).toBe(422);
    expect(failed.body.detail).toMatch(/no video stream/);
    const noGold = await call('POST', '/api/agent/training/cycle', stack.reviewer, { gold_id: unknown });
    expect(noGold.status).toBe(404);
    const unsealed = await db.goldSet.create({ data: { name: 'draft', objectIds: [] } });
    const notSealed = await call('POST', '/api/agent/training/cycle', stack.reviewer, {
      gold_id: unsealed.id,
    });
    expect(notSealed.status).toBe(422);
    expect(notSealed.body.detail).toMatch(/not sealed/);
    expect((await call('POST', '/api/agent/training/cycle', stack.reviewer, { epochs: 3 })).status).toBe(422);
    expect((await call('POST', '/api/agent/training/cycle', stack.annotator, {})).status).toBe(403);
    expect((await stack.api.call('GET', '/api/flywheel/stages')).status).toBe(401);
    expect((await call('GET', `/api/flywheel/stages?run_id=${unknown}`, stack.annotator)).status).toBe(404);
    // A refused start leaves no run behind.
    expect(await db.flywheelRun.count({ where: { sessionId: s.id } })).toBe(0);
  });

  it('lists the stages with what each does and the runs by cursor', async () => {
    const first = await call('GET', '/api/flywheel/stages?limit=1', stack.annotator);
    expect(first.body.stages.map((s: { stage: string }) => s.stage)).toEqual([
      'ingest',
      'autolabel',
      'review',
      'export',
      'train',
      'gate',
    ]);
    expect(first.body.stages[3]).toMatchObject({
      child: 'export-<job_id>',
      kinds: ['session', 'training_cycle'],
    });
    expect(first.body.runs).toHaveLength(1);
    const next = await call(
      'GET',
      `/api/flywheel/stages?limit=1&cursor=${first.body.next_cursor}`,
      stack.annotator,
    );
    expect(next.body.runs[0].run_id).not.toBe(first.body.runs[0].run_id);
    const cycles = await call('GET', '/api/flywheel/stages?kind=training_cycle', stack.annotator);
    expect(cycles.body.runs.every((r: RunOut) => r.kind === 'training_cycle')).toBe(true);
  });
});

describe('the flywheel agent', () => {
  it('plans a turn from the platform’s state with dry_run, then acts on it', async () => {
    const { db } = stack.api.deps;
    // Every run before ended: a refused gate left its gate-directed run open, the labelled drives are new.
    expect(await db.flywheelRun.count({ where: { status: 'running' } })).toBe(0);
    const open = await db.gateDirectedRun.findMany({ where: { state: 'open' } });
    const dry = await call('POST', '/api/agent/flywheel', stack.reviewer, {
      dry_run: true,
      training_epochs: 1,
    });
    expect(dry.status).toBe(200);
    const planned = dry.body.actions as Array<{ action: string; outcome: string; session_id?: string }>;
    expect(planned.every((a) => a.outcome === 'planned')).toBe(true);
    expect(planned.filter((a) => a.action === 'materialize_gate_directed')).toHaveLength(open.length);
    const sessionActs = planned.filter((a) => a.action === 'run_session');
    expect(sessionActs).toHaveLength(1);
    // The gold set's drive is never taken through; a drive already through the flywheel is not new.
    expect(goldSessionIds).not.toContain(sessionActs[0]!.session_id);
    expect(await db.flywheelRun.count({ where: { sessionId: sessionActs[0]!.session_id! } })).toBe(0);
    expect(await db.flywheelRun.count({ where: { status: 'running' } })).toBe(0);

    const turn = await call('POST', '/api/agent/flywheel', stack.reviewer, { training_epochs: 1 });
    expect(turn.status).toBe(200);
    const acted = turn.body.actions as Array<{
      action: string;
      outcome: string;
      session_id?: string;
      result: { run_id?: string; state?: string; cycle?: { origin: string } } | null;
    }>;
    expect(acted.map((a) => [a.action, a.outcome])).toEqual(planned.map((a) => [a.action, 'done']));
    for (const m of acted.filter((a) => a.action === 'materialize_gate_directed'))
      expect(m.result).toMatchObject({ state: 'materialized', cycle: { origin: 'gate' } });
    const session = acted.find((a) => a.action === 'run_session')!;
    expect(session.session_id).toBe(sessionActs[0]!.session_id);
    const done = await runWhen(
      session.result!.run_id!,
      'the agent’s session run',
      (r) => r.status === 'completed',
    );
    expect(done.kind).toBe('session');
    expect(await db.auditLog.count({ where: { action: 'agent.flywheel' } })).toBe(2);
  });

  it('refuses a malformed turn and an annotator', async () => {
    expect((await call('POST', '/api/agent/flywheel', stack.reviewer, { max_sessions: 0 })).status).toBe(422);
    expect((await call('POST', '/api/agent/flywheel', stack.annotator, {})).status).toBe(403);
  });
});
