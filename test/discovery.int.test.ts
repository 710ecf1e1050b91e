import { DEFAULT_EMBEDDING_MODEL, EMBEDDING_MODELS } from '../core/curation/embedding';
import { startIngestStack, type IngestStack } from '../testkit/media/harness';
import { createSessionFixture } from '../testkit/session-fixtures';
import { recordHistoryIfAsked, replayRecordedHistory } from '../testkit/temporal';
import path from 'node:path';

/**
 * Discovery on the real stack (PostgreSQL, Temporal, MinIO): a run mines machine-made objects
 * whose detectors disagree on their class and frames unlike every other into the queue; a
 * reviewer's verdict stays when a later run finds the same thing again.
 */
const HISTORY = path.join(__dirname, 'histories/discovery.json');
let stack: IngestStack;

beforeAll(async () => {
  stack = await startIngestStack();
});
afterAll(async () => {
  await stack?.close();
});

const call = (method: string, p: string, token: string, body?: unknown) =>
  stack.api.call(method, p, { token, ...(body === undefined ? {} : { body }) });

describe('a discovery run', () => {
  const ids = { disputed: '', calm: '', human: '', stray: '', session: '' };
  let runId: string;
  let workflowRunId: string;

  beforeAll(async () => {
    const { db } = stack.api.deps;
    const car = await db.ontologyClass.findUniqueOrThrow({ where: { name: 'car' } });
    const fixture = await createSessionFixture(stack.api.deps, { frames: 13 });
    ids.session = fixture.session.id;
    const f0 = fixture.frames[0]!.id;
    const object = async (source: string, entropy: number, conf: number) =>
      (
        await db.annoObject.create({
          data: {
            frameId: f0,
            classId: car.id,
            bbox: [1, 1, 40, 40],
            source,
            state: 'review',
            conf,
            provenance: {
              create: { paths: ['closed_set', 'open_vocab'], rawConfidences: { closed_set: conf }, entropy },
            },
          },
        })
      ).id;
    ids.disputed = await object('fused', 1, 0.8);
    ids.calm = await object('fused', 0.2, 0.9);
    ids.human = await object('human', 1, 0.9);
    // Twelve frames of one kind of scene, one of another.
    const dims = EMBEDDING_MODELS[DEFAULT_EMBEDDING_MODEL].dims;
    for (const [i, f] of fixture.frames.entries()) {
      const vector = Array.from({ length: dims }, (_, d) =>
        i === 12 ? (d % 2 ? 0.05 : -0.05) : 0.04 + 0.001 * ((i + d) % 5),
      );
      await db.frameEmbedding.create({ data: { frameId: f.id, model: DEFAULT_EMBEDDING_MODEL, vector } });
    }
    ids.stray = fixture.frames[12]!.id;

    const started = await call('POST', '/api/discovery/run', stack.reviewer, { session_ids: [ids.session] });
    expect(started.status).toBe(202);
    expect(started.body).toMatchObject({ status: 'running', workflow_id: 'discovery-run' });
    runId = started.body.run_id;
    workflowRunId = started.body.workflow_run_id;
    await stack.env.client.workflow.getHandle('discovery-run').result();
  });

  it('queues the disputed machine object and the stray frame, best first, and nothing else', async () => {
    const queue = await call('GET', `/api/discovery/queue?run_id=${runId}`, stack.annotator);
    expect(queue.status).toBe(200);
    const found = queue.body.items.map((c: { kind: string; subject_id: string }) => [c.kind, c.subject_id]);
    expect(found).toEqual(
      expect.arrayContaining([
        ['ambiguous_class', ids.disputed],
        ['novel_scene', ids.stray],
      ]),
    );
    expect(found).toHaveLength(2);
    const scores = queue.body.items.map((c: { score: number }) => c.score);
    expect(scores).toEqual([...scores].sort((a, b) => b - a));
    const disputed = queue.body.items.find((c: { subject_id: string }) => c.subject_id === ids.disputed);
    expect(disputed).toMatchObject({
      state: 'new',
      score: 0.8,
      evidence: { class_name: 'car', entropy_bits: 1 },
    });
    const run = await stack.api.deps.db.discoveryRun.findUniqueOrThrow({ where: { id: runId } });
    expect(run).toMatchObject({
      status: 'completed',
      summary: { ambiguous_class: 1, novel_scene: 1, frames_embedded: 13 },
    });
    const page = await call('GET', `/api/discovery/queue?run_id=${runId}&limit=1`, stack.annotator);
    const next = await call(
      'GET',
      `/api/discovery/queue?run_id=${runId}&limit=1&cursor=${page.body.next_cursor}`,
      stack.annotator,
    );
    expect(
      [...page.body.items, ...next.body.items].map((c: { candidate_id: string }) => c.candidate_id),
    ).toEqual(queue.body.items.map((c: { candidate_id: string }) => c.candidate_id));
    expect(next.body.next_cursor).toBeNull();
  });

  it('replays its recorded history', async () => {
    await recordHistoryIfAsked(HISTORY, () =>
      stack.env.client.workflow.getHandle('discovery-run', workflowRunId).fetchHistory(),
    );
    await expect(
      replayRecordedHistory(HISTORY, require.resolve('../workflows'), 'discovery-run'),
    ).resolves.toBeUndefined();
  });

  it('takes a verdict, keeps it when the finding is found again, and refuses what makes no sense', async () => {
    const [stray] = (await call('GET', `/api/discovery/queue?kind=novel_scene`, stack.annotator)).body.items;
    const tagged = await call('POST', `/api/discovery/${stray.candidate_id}/state`, stack.reviewer, {
      state: 'novel_class',
      tag: 'construction_zone',
    });
    expect(tagged.status).toBe(200);
    expect(tagged.body).toMatchObject({ state: 'novel_class', tag: 'construction_zone' });
    const again = await call('POST', '/api/discovery/run', stack.reviewer, { session_ids: [ids.session] });
    expect(again.status).toBe(202);
    await stack.env.client.workflow.getHandle('discovery-run').result();
    const kept = (await call('GET', `/api/discovery/queue?kind=novel_scene`, stack.annotator)).body.items;
    expect(kept).toEqual([
      expect.objectContaining({
        candidate_id: stray.candidate_id,
        state: 'novel_class',
        run_id: again.body.run_id,
      }),
    ]);

    const to = (state: string, tag?: string) =>
      call('POST', `/api/discovery/${stray.candidate_id}/state`, stack.reviewer, {
        state,
        ...(tag ? { tag } : {}),
      });
    expect((await to('known')).status).toBe(422);
    expect((await to('known', 'dragon')).status).toBe(422);
    expect((await to('known', 'car')).body).toMatchObject({ state: 'known', tag: 'car' });
    expect((await to('melted')).status).toBe(422);
    expect(
      (
        await call('POST', `/api/discovery/${crypto.randomUUID()}/state`, stack.reviewer, {
          state: 'triaged',
        })
      ).status,
    ).toBe(404);
    expect(
      (
        await call('POST', `/api/discovery/${stray.candidate_id}/state`, stack.annotator, {
          state: 'triaged',
        })
      ).status,
    ).toBe(403);
    expect((await stack.api.call('GET', '/api/discovery/queue')).status).toBe(401);
    expect((await call('GET', '/api/discovery/queue?cursor=nope', stack.annotator)).status).toBe(422);
    expect((await call('POST', '/api/discovery/run', stack.annotator, {})).status).toBe(403);
    expect(
      (await call('POST', '/api/discovery/run', stack.reviewer, { session_ids: [crypto.randomUUID()] }))
        .status,
    ).toBe(404);
  });
});
