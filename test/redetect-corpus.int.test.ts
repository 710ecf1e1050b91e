import path from 'node:path';
import { startIngestStack, type IngestStack } from '../testkit/media/harness';
import { createVehicleSession, vehicleFrames } from '../testkit/media/vehicles';
import { openEventStream, type SseEvent } from '../testkit/sse';
import { recordHistoryIfAsked, replayRecordedHistory } from '../testkit/temporal';

/**
 * redetect-all as one durable corpus run on the real stack (PostgreSQL, MinIO, Temporal, the gpu
 * worker running yolox_nano.onnx): it walks every machine-labelled session page by page (two per
 * workflow run here, so the walk continues as new), records itself as an AgentRun, and its revert
 * puts back exactly the rows it replaced.
 */
const HISTORY = path.join(__dirname, 'histories/redetect-corpus.json');

let stack: IngestStack;

beforeAll(async () => {
  stack = await startIngestStack({ gpu: true, env: { APP_AUTOLABEL__CORPUS_PAGE_SIZE: '2' } });
});

afterAll(async () => {
  await stack?.close();
});

const result = (workflowId: string, runId?: string) =>
  stack.env.client.workflow.getHandle(workflowId, runId).result();

async function autolabel(sessionId: string): Promise<void> {
  const res = await stack.api.call('POST', '/api/autolabel/start', {
    token: stack.reviewer,
    body: { session_id: sessionId },
  });
  expect(res.status).toBe(202);
  await result(res.body.workflow_id);
}

/** Every row a redetect or its revert may touch on these sessions' frames, whole and in a stable order. */
async function rowsOf(sessionIds: string[]) {
  const rows = await stack.api.deps.db.$queryRaw<Array<{ kind: string; id: string; row: unknown }>>`
    SELECT 'object' AS kind, o.id::text AS id, to_jsonb(o) AS row FROM objects o JOIN frames f ON f.id = o.frame_id
      WHERE f.session_id = ANY(${sessionIds}::uuid[])
    UNION ALL
    SELECT 'provenance', p.id::text, to_jsonb(p) FROM provenance p JOIN objects o ON o.id = p.object_id
      JOIN frames f ON f.id = o.frame_id WHERE f.session_id = ANY(${sessionIds}::uuid[])
    UNION ALL
    SELECT 'control', c.id::text, to_jsonb(c) FROM control_samples c WHERE c.session_id = ANY(${sessionIds}::uuid[])
    ORDER BY 1, 2`;
  return rows;
}

/**
 * The rows without their track links: each auto-label of the run ends with a retrack, which links
 * the run's objects and deletes the tracks only the replaced ones held, so a revert restores the
 * objects exactly but cannot point them at those tracks again (docs/agent-runs.md).
 */
const withoutTrackLinks = (rows: Awaited<ReturnType<typeof rowsOf>>) =>
  rows.map((r) => {
    if (r.kind !== 'object') return r;
    const { track_id: _track, ...row } = r.row as Record<string, unknown>;
    return { ...r, row };
  });

describe('a redetect-all corpus run and its revert', () => {
  const ids = { a: '', b: '', unlabelled: '', quarantined: '' };
  let before: Awaited<ReturnType<typeof rowsOf>>;
  let started: Awaited<ReturnType<IngestStack['api']['call']>>;
  let human: { id: string };
  let imported: { id: string };
  let events: SseEvent[];

  beforeAll(async () => {
    const { db } = stack.api.deps;
    const make = async () => createVehicleSession(stack.api.deps, await vehicleFrames(1, { width: 640 }));
    const [a, b, unlabelled, quarantined] = [await make(), await make(), await make(), await make()];
    Object.assign(ids, {
      a: a.session.id,
      b: b.session.id,
      unlabelled: unlabelled.session.id,
      quarantined: quarantined.session.id,
    });
    await autolabel(ids.a);
    await autolabel(ids.b);
    // Rows the revert must bring back whole: a human object, an imported one, a legacy machine
    // spelling, a pending control and a judged one.
    const h = await stack.api.call('POST', `/api/frames/${a.frames[0]!.id}/objects`, {
      token: stack.reviewer,
      body: { class_name: 'bus', bbox: [5, 20, 300, 280] },
    });
    expect(h.status).toBe(201);
    human = h.body;
    imported = await db.annoObject.create({
      data: {
        frameId: b.frames[0]!.id,
        bbox: [1, 1, 50, 50],
        classId: 1,
        source: 'imported',
        state: 'accepted',
      },
    });
    await db.annoObject.create({
      data: { frameId: b.frames[0]!.id, bbox: [2, 2, 40, 40], classId: 1, source: 'interp', state: 'review' },
    });
    const fusedA = await db.annoObject.findMany({
      where: { frame: { sessionId: ids.a }, source: 'fused' },
      orderBy: { id: 'asc' },
    });
    expect(fusedA.length).toBeGreaterThanOrEqual(2);
    await db.controlSample.deleteMany({ where: { objectId: { in: fusedA.map((o) => o.id) } } });
    await db.controlSample.create({
      data: {
        objectId: fusedA[0]!.id,
        sessionId: ids.a,
        seed: 7,
        className: 'bus',
        conf: 0.9,
        checks: ['size'],
      },
    });
    await db.controlSample.create({
      data: { objectId: fusedA[1]!.id, sessionId: ids.a, seed: 7, verdict: 'correct', verdictAt: new Date() },
    });
    // A session with only a human object is not machine-labelled; a quarantined one is skipped.
    await stack.api.call('POST', `/api/frames/${unlabelled.frames[0]!.id}/objects`, {
      token: stack.reviewer,
      body: { class_name: 'car', bbox: [10, 10, 60, 60] },
    });
    await db.annoObject.create({
      data: {
        frameId: quarantined.frames[0]!.id,
        bbox: [3, 3, 30, 30],
        classId: 1,
        source: 'fused',
        state: 'review',
      },
    });
    await db.sessionHealthOverride.create({
      data: { sessionId: ids.quarantined, quarantined: true, reason: 'bad clock' },
    });
    before = await rowsOf(Object.values(ids));

    const stream = await openEventStream(stack.api.url, '/api/events/jobs', stack.annotator);
    started = await stack.api.call('POST', '/api/autolabel/redetect-all', {
      token: stack.admin,
      body: { session_ids: null },
    });
    expect(started.status).toBe(202);
    const ofRun = (all: SseEvent[]) =>
      all.filter((e) => (e.data as { run_id?: string }).run_id === started.body.run_id);
    const read = stream.readUntil((all) => ofRun(all).some((e) => e.event === 'agent.run.completed'));
    await result('redetect-all');
    events = ofRun(await read);
  });

  it('answers 202 with the AgentRun to watch and reports it on the jobs stream', async () => {
    expect(started.headers.get('location')).toBe(`/api/agent/runs/${started.body.run_id}`);
    expect(started.body).toMatchObject({
      kind: 'redetect-all',
      status: 'running',
      workflow_id: 'redetect-all',
    });
    expect(events.map((e) => e.event)).toEqual([
      'agent.run.started',
      'agent.run.progress',
      'agent.run.progress',
      'agent.run.progress',
      'agent.run.completed',
    ]);
  });

  it('walks every machine-labelled session across pages, skipping the quarantined one with its reason', async () => {
    const run = await stack.api.call('GET', `/api/agent/runs/${started.body.run_id}`, {
      token: stack.reviewer,
    });
    expect(run.status).toBe(200);
    expect(run.body).toMatchObject({
      status: 'completed',
      revertible: true,
      changes: { sessions: { completed: 2, failed: 0, skipped: 1 }, frames: 2 },
      not_labelled: [
        { session_id: ids.quarantined, outcome: 'skipped', reason: expect.stringMatching(/quarantined/) },
      ],
    });
    const walked = await stack.api.deps.db.agentRunSession.findMany({
      where: { runId: started.body.run_id },
    });
    expect(walked.map((s) => s.sessionId).sort()).toEqual([ids.a, ids.b, ids.quarantined].sort());
    // Three sessions at two per workflow run: the walk continued as new once.
    const first = stack.env.client.workflow.getHandle('redetect-all', started.body.workflow_run_id);
    expect((await first.describe()).status.name).toBe('CONTINUED_AS_NEW');
  });

  it('regenerates machine objects and never touches human or imported ones', async () => {
    const { db } = stack.api.deps;
    const after = await db.annoObject.findMany({ where: { frame: { sessionId: { in: [ids.a, ids.b] } } } });
    const byId = new Map(after.map((o) => [o.id, o]));
    expect(byId.get(human.id)).toMatchObject({ source: 'human', version: 1 });
    expect(byId.get(imported.id)).toMatchObject({ source: 'imported', version: 1 });
    const oldMachine = before.filter(
      (r) => r.kind === 'object' && ['fused', 'interp'].includes((r.row as { source: string }).source),
    );
    for (const r of oldMachine) expect(byId.has(r.id)).toBe(false);
    const jobs = await db.autolabelJob.findMany({ where: { agentRunId: started.body.run_id } });
    expect(jobs.map((j) => [j.mode, j.state])).toEqual([
      ['redetect', 'completed'],
      ['redetect', 'completed'],
    ]);
    expect(after.filter((o) => o.source === 'fused').every((o) => jobs.some((j) => j.id === o.jobId))).toBe(
      true,
    );
  });

  it('replays its recorded history', async () => {
    await recordHistoryIfAsked(HISTORY, () =>
      stack.env.client.workflow.getHandle('redetect-all', started.body.workflow_run_id).fetchHistory(),
    );
    await expect(
      replayRecordedHistory(HISTORY, require.resolve('../workflows'), 'redetect-all'),
    ).resolves.toBeUndefined();
  });

  it('reverts to exactly the rows it replaced, keeping an object a person reviewed since', async () => {
    const { db } = stack.api.deps;
    const made = await db.annoObject.findFirstOrThrow({
      where: { frame: { sessionId: ids.b }, source: 'fused' },
      orderBy: { id: 'asc' },
    });
    const reviewed = await stack.api.call('POST', `/api/objects/${made.id}/review`, {
      token: stack.reviewer,
      body: { action: 'confirm' },
    });
    expect(reviewed.status).toBe(200);
    const path_ = `/api/agent/runs/${started.body.run_id}/revert`;
    expect((await stack.api.call('POST', path_, { token: stack.reviewer })).status).toBe(403);
    const res = await stack.api.call('POST', path_, { token: stack.admin });
    expect(res.status).toBe(202);
    expect(res.headers.get('location')).toBe(`/api/agent/runs/${started.body.run_id}`);
    expect((await stack.api.call('POST', path_, { token: stack.admin })).status).toBe(409);
    await result(res.body.workflow_id);

    const after = await rowsOf(Object.values(ids));
    const keptIds = new Set([
      made.id,
      ...after
        .filter((r) => r.kind === 'provenance' && (r.row as { object_id: string }).object_id === made.id)
        .map((r) => r.id),
    ]);
    expect(withoutTrackLinks(after.filter((r) => !keptIds.has(r.id)))).toEqual(withoutTrackLinks(before));
    // No restored object points at a track that is gone.
    const linked = after.flatMap((r) =>
      r.kind === 'object' && (r.row as { track_id: string | null }).track_id
        ? [(r.row as { track_id: string }).track_id]
        : [],
    );
    expect(await db.track.count({ where: { id: { in: [...new Set(linked)] } } })).toBe(new Set(linked).size);
    expect(after.filter((r) => r.kind === 'object' && keptIds.has(r.id))).toEqual([
      expect.objectContaining({ row: expect.objectContaining({ source: 'human' }) }),
    ]);

    const run = await stack.api.call('GET', `/api/agent/runs/${started.body.run_id}`, {
      token: stack.reviewer,
    });
    expect(run.body).toMatchObject({
      status: 'reverted',
      revertible: false,
      changes: { reverted: { frames: 2, kept_human_edited: 1, superseded_frames: 0 } },
    });
    expect((await stack.api.call('POST', path_, { token: stack.admin })).status).toBe(409);
  });
});

describe('starting a redetect-all', () => {
  it('only an admin may, and a list of only refused sessions is 422 with why, leaving no run', async () => {
    const { session } = await createVehicleSession(stack.api.deps, await vehicleFrames(1, { width: 320 }));
    await stack.api.deps.db.sessionHealthOverride.create({
      data: { sessionId: session.id, quarantined: true, reason: 'bad clock' },
    });
    const call = (token: string) =>
      stack.api.call('POST', '/api/autolabel/redetect-all', { token, body: { session_ids: [session.id] } });
    expect((await call(stack.reviewer)).status).toBe(403);
    const runs = await stack.api.deps.db.agentRun.count();
    const res = await call(stack.admin);
    expect(res.status).toBe(422);
    expect(res.body.skipped).toEqual([
      { session_id: session.id, reason: expect.stringMatching(/quarantined/) },
    ]);
    expect(await stack.api.deps.db.agentRun.count()).toBe(runs);
  });

  it('answers 409 while a run is going and leaves no second run', async () => {
    const { session } = await createVehicleSession(stack.api.deps, await vehicleFrames(2, { width: 640 }));
    const body = { session_ids: [session.id] };
    const first = await stack.api.call('POST', '/api/autolabel/redetect-all', { token: stack.admin, body });
    expect(first.status).toBe(202);
    const runs = await stack.api.deps.db.agentRun.count();
    const second = await stack.api.call('POST', '/api/autolabel/redetect-all', { token: stack.admin, body });
    expect(second.status).toBe(409);
    expect(await stack.api.deps.db.agentRun.count()).toBe(runs);
    await result('redetect-all');
  });

  it('never takes a missing body for "every session"', async () => {
    for (const rawBody of [undefined, '{}']) {
      const res = await stack.api.call('POST', '/api/autolabel/redetect-all', {
        token: stack.admin,
        rawBody,
      });
      expect(res.status).toBe(422);
      expect(res.body.errors).toEqual([expect.objectContaining({ field: 'body.session_ids' })]);
    }
  });

  it('reads and reverts only runs that exist', async () => {
    const missing = '00000000-0000-4000-8000-000000000000';
    expect(
      (await stack.api.call('GET', `/api/agent/runs/${missing}`, { token: stack.reviewer })).status,
    ).toBe(404);
    expect(
      (await stack.api.call('POST', `/api/agent/runs/${missing}/revert`, { token: stack.admin })).status,
    ).toBe(404);
    expect((await stack.api.call('GET', '/api/agent/runs/nope', { token: stack.reviewer })).status).toBe(422);
  });
});
