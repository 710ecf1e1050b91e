import path from 'node:path';
import { startIngestStack, type IngestStack } from '../testkit/media/harness';
import { createVehicleSession, vehicleFrames } from '../testkit/media/vehicles';
import { recordHistoryIfAsked, replayRecordedHistory } from '../testkit/temporal';

/**
 * Corpus relabels on the real stack (PostgreSQL, MinIO, Temporal, the gpu worker running
 * yolox_nano.onnx): the closed-set detector reclassifies machine-made boxes whose class was made
 * wrong, every move goes to review as one AgentRun, human work is never touched, an imported
 * relabel is a run too, each revert restores the rows exactly, and a run whose workflow was
 * terminated mid-walk is found interrupted and resumed without writing anything twice.
 */
const HISTORY = path.join(__dirname, 'histories/relabel-corpus.json');

let stack: IngestStack;

beforeAll(async () => {
  // One frame a page: the walk continues as new between frames, so a test can stop it midway.
  stack = await startIngestStack({ gpu: true, env: { APP_RELABEL__PAGE_FRAMES: '1' } });
});

afterAll(async () => {
  await stack?.close();
});

const result = (workflowId: string, runId?: string) =>
  stack.env.client.workflow.getHandle(workflowId, runId).result();

/** Every row a relabel or its revert may touch on these sessions' frames, whole and in a stable order. */
async function rowsOf(sessionIds: string[]) {
  return stack.api.deps.db.$queryRaw<Array<{ kind: string; id: string; row: unknown }>>`
    SELECT 'object' AS kind, o.id::text AS id, to_jsonb(o) AS row FROM objects o JOIN frames f ON f.id = o.frame_id
      WHERE f.session_id = ANY(${sessionIds}::uuid[])
    UNION ALL
    SELECT 'provenance', p.id::text, to_jsonb(p) FROM provenance p JOIN objects o ON o.id = p.object_id
      JOIN frames f ON f.id = o.frame_id WHERE f.session_id = ANY(${sessionIds}::uuid[])
    UNION ALL
    SELECT 'control', c.id::text, to_jsonb(c) FROM control_samples c WHERE c.session_id = ANY(${sessionIds}::uuid[])
    ORDER BY 1, 2`;
}

const classId = async (name: string) =>
  (await stack.api.deps.db.ontologyClass.findUniqueOrThrow({ where: { name } })).id;

/**
 * A labelled session whose machine objects then carry a wrong vehicle class (a bus made a truck,
 * anything else made a bus): what a relabel should put right. Returns each object's true class.
 */
async function mislabelledSession(frames: number) {
  const { db } = stack.api.deps;
  const made = await createVehicleSession(stack.api.deps, await vehicleFrames(frames, { width: 640 }));
  const res = await stack.api.call('POST', '/api/autolabel/start', {
    token: stack.reviewer,
    body: { session_id: made.session.id },
  });
  expect(res.status).toBe(202);
  await result(res.body.workflow_id);
  const fused = await db.annoObject.findMany({
    where: { frame: { sessionId: made.session.id }, source: 'fused' },
    include: { class: true },
  });
  expect(fused.length).toBeGreaterThanOrEqual(frames);
  const truth = new Map<string, string>();
  for (const o of fused) {
    truth.set(o.id, o.class.name);
    const wrong = o.class.name === 'bus' ? 'truck' : 'bus';
    await db.annoObject.update({ where: { id: o.id }, data: { classId: await classId(wrong) } });
  }
  return { ...made, truth };
}

describe('a corpus relabel and its revert', () => {
  let a: Awaited<ReturnType<typeof mislabelledSession>>;
  let human: { id: string; class_id: number };
  let before: Awaited<ReturnType<typeof rowsOf>>;
  let run: { run_id: string; workflow_id: string; workflow_run_id: string };

  beforeAll(async () => {
    a = await mislabelledSession(2);
    const h = await stack.api.call('POST', `/api/frames/${a.frames[0]!.id}/objects`, {
      token: stack.reviewer,
      body: { class_name: 'truck', bbox: [5, 20, 300, 280] },
    });
    expect(h.status).toBe(201);
    human = h.body;
    before = await rowsOf([a.session.id]);
    const res = await stack.api.call('POST', '/api/relabel/start', {
      token: stack.reviewer,
      body: { session_ids: [a.session.id], min_score: 0.3 },
    });
    expect(res.status).toBe(202);
    expect(res.headers.get('location')).toBe(`/api/agent/runs/${res.body.run_id}`);
    expect(res.body).toMatchObject({ kind: 'relabel', status: 'running', workflow_id: 'relabel-corpus' });
    run = res.body;
    await result('relabel-corpus');
  });

  it('moves wrongly classed machine objects back to what the detector sees, into review, never touching human work', async () => {
    const { db } = stack.api.deps;
    const objects = await db.annoObject.findMany({
      where: { frame: { sessionId: a.session.id } },
      include: { class: true, provenance: true },
    });
    const moved = objects.filter((o) => o.source === 'relabel');
    expect(moved.length).toBeGreaterThanOrEqual(1);
    const was = new Map(
      before.filter((r) => r.kind === 'object').map((r) => [r.id, r.row as { version: number }]),
    );
    for (const o of moved) {
      expect(o.class.name).toBe(a.truth.get(o.id));
      expect(o.state).toBe('review');
      expect(o.version).toBe(was.get(o.id)!.version + 1);
      const trace = o.provenance.find((p) => (p.paths as string[]).includes('relabel'))!.reasonerTrace as {
        run_id: string;
        to: string;
      };
      expect(trace).toMatchObject({ run_id: run.run_id, to: o.class.name });
    }
    const untouched = objects.find((o) => o.id === human.id)!;
    expect(untouched).toMatchObject({ source: 'human', classId: human.class_id, version: 1 });

    const got = await stack.api.call('GET', `/api/agent/runs/${run.run_id}`, { token: stack.reviewer });
    expect(got.body).toMatchObject({ status: 'completed', revertible: true });
    expect(got.body.changes.objects_relabelled).toBe(moved.length);
    expect(Object.values(got.body.changes.moves as Record<string, number>).reduce((x, y) => x + y, 0)).toBe(
      moved.length,
    );
  });

  it('replays its recorded history', async () => {
    await recordHistoryIfAsked(HISTORY, () =>
      stack.env.client.workflow.getHandle('relabel-corpus', run.workflow_run_id).fetchHistory(),
    );
    await expect(
      replayRecordedHistory(HISTORY, require.resolve('../workflows'), 'relabel-corpus'),
    ).resolves.toBeUndefined();
  });

  it('lists relabel runs, newest first, a page at a time', async () => {
    const all = await stack.api.call('GET', '/api/relabel/runs?limit=1', { token: stack.reviewer });
    expect(all.status).toBe(200);
    expect(all.body.items).toHaveLength(1);
    const agent = await stack.api.call('GET', '/api/agent/runs?kind=relabel&status=completed', {
      token: stack.reviewer,
    });
    expect(agent.body.items.map((r: { run_id: string }) => r.run_id)).toContain(run.run_id);
    expect(
      (await stack.api.call('GET', '/api/agent/runs?status=nope', { token: stack.reviewer })).status,
    ).toBe(422);
  });

  it('reverts to exactly the rows it changed', async () => {
    const res = await stack.api.call('POST', `/api/relabel/runs/${run.run_id}/revert`, {
      token: stack.reviewer,
    });
    expect(res.status).toBe(202);
    await result(res.body.workflow_id);
    expect(await rowsOf([a.session.id])).toEqual(before);
    const got = await stack.api.call('GET', `/api/agent/runs/${run.run_id}`, { token: stack.reviewer });
    expect(got.body).toMatchObject({ status: 'reverted', revertible: false });
    // Twice is refused.
    expect(
      (await stack.api.call('POST', `/api/relabel/runs/${run.run_id}/revert`, { token: stack.reviewer }))
        .status,
    ).toBe(409);
  });
});

describe('an imported relabel', () => {
  it('moves the named machine objects into review, skips human ones by name, and reverts exactly', async () => {
    const { db } = stack.api.deps;
    const made = await createVehicleSession(stack.api.deps, await vehicleFrames(1, { width: 640 }));
    const frame = made.frames[0]!;
    const machine = await db.annoObject.create({
      data: {
        frameId: frame.id,
        bbox: [10, 10, 90, 90],
        classId: await classId('car'),
        source: 'fused',
        state: 'auto_accept',
        conf: 0.7,
      },
    });
    const human = await db.annoObject.create({
      data: {
        frameId: frame.id,
        bbox: [100, 10, 190, 90],
        classId: await classId('car'),
        source: 'human',
        state: 'accepted',
      },
    });
    const before = await rowsOf([made.session.id]);
    const res = await stack.api.call('POST', '/api/relabel/ingest', {
      token: stack.reviewer,
      body: {
        source: 'vendor-x',
        changes: [
          { object_id: machine.id, class_name: 'truck', conf: 0.8 },
          { object_id: human.id, class_name: 'bus' },
        ],
      },
    });
    expect(res.status).toBe(202);
    expect(res.body.kind).toBe('relabel-import');
    await result(res.body.workflow_id);
    const moved = await db.annoObject.findUniqueOrThrow({
      where: { id: machine.id },
      include: { class: true },
    });
    expect(moved).toMatchObject({ source: 'relabel', state: 'review', conf: 0.8, version: 2 });
    expect(moved.class.name).toBe('truck');
    expect(await db.annoObject.findUniqueOrThrow({ where: { id: human.id } })).toMatchObject({
      classId: human.classId,
      version: 1,
    });
    const got = await stack.api.call('GET', `/api/agent/runs/${res.body.run_id}`, { token: stack.reviewer });
    expect(got.body.status).toBe('completed');
    expect(got.body.changes).toMatchObject({
      objects_relabelled: 1,
      skipped: [{ object_id: human.id, reason: 'human' }],
    });

    const undo = await stack.api.call('POST', `/api/relabel/runs/${res.body.run_id}/revert`, {
      token: stack.reviewer,
    });
    expect(undo.status).toBe(202);
    await result(undo.body.workflow_id);
    expect(await rowsOf([made.session.id])).toEqual(before);
  });

  it('refuses what it cannot apply before recording anything', async () => {
    const { db } = stack.api.deps;
    const runs = await db.agentRun.count();
    const one = (await db.annoObject.findFirstOrThrow()).id;
    const cases: Array<[unknown, number]> = [
      [{ source: 'x', changes: [{ object_id: one, class_name: 'no_such_class' }] }, 422],
      [
        { source: 'x', changes: [{ object_id: '00000000-0000-4000-8000-000000000000', class_name: 'car' }] },
        422,
      ],
      [
        {
          source: 'x',
          changes: [
            { object_id: one, class_name: 'car' },
            { object_id: one, class_name: 'bus' },
          ],
        },
        422,
      ],
      [{ source: 'x', changes: [] }, 422],
      [{ source: 'x', changes: [{ object_id: 'nope', class_name: 'car' }] }, 422],
      [{ changes: [{ object_id: one, class_name: 'car' }] }, 422],
    ];
    for (const [body, status] of cases) {
      const res = await stack.api.call('POST', '/api/relabel/ingest', { token: stack.reviewer, body });
      expect({ body, status: res.status }).toEqual({ body, status });
      expect(res.headers.get('content-type')).toMatch(/problem\+json/);
    }
    const badClass = await stack.api.call('POST', '/api/relabel/start', {
      token: stack.reviewer,
      body: { classes: ['car', 'dragon'] },
    });
    expect(badClass.status).toBe(422);
    expect(badClass.body.detail).toMatch(/dragon/);
    expect(await db.agentRun.count()).toBe(runs);
  });
});

describe('who may relabel', () => {
  it('needs a token, a reviewer for a listed relabel and an admin for the whole corpus', async () => {
    expect((await stack.api.call('POST', '/api/relabel/start', { body: {} })).status).toBe(401);
    expect((await stack.api.call('GET', '/api/relabel/runs')).status).toBe(401);
    expect(
      (await stack.api.call('POST', '/api/relabel/start', { token: stack.annotator, body: {} })).status,
    ).toBe(403);
    expect(
      (await stack.api.call('POST', '/api/relabel/ingest', { token: stack.annotator, body: {} })).status,
    ).toBe(403);
    expect(
      (await stack.api.call('POST', '/api/agent/relabel/all', { token: stack.reviewer, body: {} })).status,
    ).toBe(403);
    expect((await stack.api.call('GET', '/api/agent/runs', { token: stack.annotator })).status).toBe(403);
    expect(
      (
        await stack.api.call('POST', `/api/agent/runs/${crypto.randomUUID()}/resume`, {
          token: stack.reviewer,
        })
      ).status,
    ).toBe(403);
  });
});

describe('an interrupted relabel', () => {
  it('is found interrupted once its workflow is terminated midway, and resumes without writing a frame twice', async () => {
    const { db } = stack.api.deps;
    const b = await mislabelledSession(4);
    const start = await stack.api.call('POST', '/api/agent/relabel/all', {
      token: stack.admin,
      body: { min_score: 0.3 },
    });
    expect(start.status).toBe(202);
    const runId: string = start.body.run_id;
    // Stop it once its first frame is written.
    for (let i = 0; i < 400 && (await db.agentRunFrame.count({ where: { runId } })) === 0; i++)
      await new Promise((r) => setTimeout(r, 25));
    await stack.env.client.workflow.getHandle('relabel-corpus').terminate('test: interrupted midway');
    const written = await db.agentRunFrame.count({ where: { runId } });
    expect(written).toBeGreaterThanOrEqual(1);
    expect(written).toBeLessThan(4);

    const interrupted = await stack.api.call('GET', '/api/agent/runs/interrupted', { token: stack.reviewer });
    expect(interrupted.status).toBe(200);
    expect(interrupted.body.items).toEqual([
      expect.objectContaining({ run_id: runId, status: 'running', workflow_status: 'TERMINATED' }),
    ]);

    const resumed = await stack.api.call('POST', `/api/agent/runs/${runId}/resume`, { token: stack.admin });
    expect(resumed.status).toBe(202);
    expect(resumed.body.resumed_from).toMatchObject({ workflow_status: 'TERMINATED' });
    await result('relabel-corpus');
    const done = await stack.api.call('GET', `/api/agent/runs/${runId}`, { token: stack.reviewer });
    expect(done.body.status).toBe('completed');
    // Each moved object was written once: one version up, one relabel provenance row.
    const moved = await db.annoObject.findMany({
      where: { frame: { sessionId: b.session.id }, source: 'relabel' },
      include: { provenance: true },
    });
    expect(moved.length).toBeGreaterThanOrEqual(written);
    for (const o of moved) {
      expect(o.version).toBe(2);
      expect(o.provenance.filter((p) => (p.paths as string[]).includes('relabel'))).toHaveLength(1);
    }
    expect(done.body.changes.objects_relabelled).toBeGreaterThanOrEqual(moved.length);
    // Nothing to resume any more.
    expect(
      (await stack.api.call('GET', '/api/agent/runs/interrupted', { token: stack.reviewer })).body.items,
    ).toEqual([]);
    expect(
      (await stack.api.call('POST', `/api/agent/runs/${runId}/resume`, { token: stack.admin })).status,
    ).toBe(409);
  });
});
