import { iou, type Box } from '../core/geometry';
import { startIngestStack, type IngestStack } from '../testkit/media/harness';
import { createVehicleSession, vehicleFrames } from '../testkit/media/vehicles';

/**
 * Recall runs on the real stack (PostgreSQL, MinIO, Temporal, the gpu worker running
 * yolox_nano.onnx): objects the first pass lost are found again by the sensitive pass and queued
 * as review candidates, nothing already covered is proposed twice, verdicts are reviews, progress
 * counts them, and the run's revert takes back only what nobody decided.
 */
let stack: IngestStack;

beforeAll(async () => {
  stack = await startIngestStack({ gpu: true });
});

afterAll(async () => {
  await stack?.close();
});

const result = (workflowId: string) => stack.env.client.workflow.getHandle(workflowId).result();

describe('a recall run', () => {
  let sessionId: string;
  let lost: Array<{ frameId: string; bbox: Box; className: string }>;
  let runId: string;
  let candidates: Array<{
    candidate_id: string;
    frame_id: string;
    bbox: Box;
    class_name: string;
    state: string;
  }>;

  beforeAll(async () => {
    const { db } = stack.api.deps;
    const made = await createVehicleSession(stack.api.deps, await vehicleFrames(2, { width: 640 }));
    sessionId = made.session.id;
    const res = await stack.api.call('POST', '/api/autolabel/start', {
      token: stack.reviewer,
      body: { session_id: sessionId },
    });
    expect(res.status).toBe(202);
    await result(res.body.workflow_id);
    // The first pass "missed" the largest object of each frame: it is deleted.
    lost = [];
    for (const frame of made.frames) {
      const objects = await db.annoObject.findMany({
        where: { frameId: frame.id },
        include: { class: true },
      });
      const area = (b: number[]) => (b[2]! - b[0]!) * (b[3]! - b[1]!);
      const biggest = objects.sort((a, b) => area(b.bbox) - area(a.bbox))[0]!;
      lost.push({ frameId: frame.id, bbox: biggest.bbox as Box, className: biggest.class.name });
      await db.annoObject.delete({ where: { id: biggest.id } });
    }
    const started = await stack.api.call('POST', `/api/recall/run/${sessionId}`, { token: stack.reviewer });
    expect(started.status).toBe(202);
    expect(started.body).toMatchObject({ kind: 'recall', workflow_id: `recall-${sessionId}` });
    runId = started.body.run_id;
    await result(`recall-${sessionId}`);
    const listed = await stack.api.call('GET', `/api/recall/candidates?session_id=${sessionId}`, {
      token: stack.annotator,
    });
    expect(listed.status).toBe(200);
    candidates = listed.body.items;
  });

  it('finds the lost objects again as pending review candidates, and proposes nothing already covered', async () => {
    const { db } = stack.api.deps;
    for (const l of lost)
      expect(candidates.some((c) => c.frame_id === l.frameId && iou(c.bbox, l.bbox) >= 0.5)).toBe(true);
    for (const c of candidates) {
      expect(c.state).toBe('pending');
      const others = await db.annoObject.findMany({
        where: { frameId: c.frame_id, source: { not: 'recall' } },
      });
      for (const o of others) expect(iou(o.bbox as Box, c.bbox)).toBeLessThan(0.5);
    }
    const objects = await db.annoObject.findMany({
      where: { id: { in: candidates.map((c) => c.candidate_id) } },
      include: { provenance: true },
    });
    for (const o of objects) {
      expect(o).toMatchObject({ source: 'recall', state: 'review' });
      expect(o.provenance[0]!.reasonerTrace).toMatchObject({ run_id: runId, sliced: true });
    }
    const run = await stack.api.call('GET', `/api/agent/runs/${runId}`, { token: stack.reviewer });
    expect(run.body).toMatchObject({
      status: 'completed',
      changes: { frames_checked: 2, candidates: candidates.length },
    });
  });

  it('takes verdicts as reviews, once, and counts them in the progress', async () => {
    const [first, second] = candidates;
    const accepted = await stack.api.call('POST', `/api/recall/candidates/${first!.candidate_id}/accept`, {
      token: stack.reviewer,
    });
    expect(accepted.status).toBe(200);
    expect(accepted.body).toMatchObject({
      state: 'accepted',
      object: { source: 'human', state: 'accepted' },
    });
    expect(
      (
        await stack.api.call('POST', `/api/recall/candidates/${first!.candidate_id}/reject`, {
          token: stack.reviewer,
        })
      ).status,
    ).toBe(409);
    const review = await stack.api.deps.db.review.findFirstOrThrow({
      where: { objectId: first!.candidate_id },
    });
    expect((review.before as { source: string }).source).toBe('recall');
    if (second) {
      const rejected = await stack.api.call('POST', `/api/recall/candidates/${second.candidate_id}/reject`, {
        token: stack.reviewer,
      });
      expect(rejected.body.state).toBe('rejected');
    }
    const progress = await stack.api.call('GET', `/api/recall/progress?session_id=${sessionId}`, {
      token: stack.annotator,
    });
    const decided = second ? 2 : 1;
    expect(progress.body.runs).toEqual([
      expect.objectContaining({
        run_id: runId,
        status: 'completed',
        frames_total: 2,
        frames_done: 2,
        candidates: {
          pending: candidates.length - decided,
          accepted: 1,
          rejected: decided - 1,
          changed: 0,
        },
        yield: 1 / decided,
      }),
    ]);
    const pending = await stack.api.call(
      'GET',
      `/api/recall/candidates?session_id=${sessionId}&state=pending&limit=1`,
      {
        token: stack.annotator,
      },
    );
    expect(pending.body.items.length).toBe(Math.min(1, candidates.length - decided));
  });

  it('reverts only what nobody decided', async () => {
    const { db } = stack.api.deps;
    const undo = await stack.api.call('POST', `/api/agent/runs/${runId}/revert`, { token: stack.admin });
    expect(undo.status).toBe(202);
    await result(undo.body.workflow_id);
    const left = await db.annoObject.findMany({
      where: { id: { in: candidates.map((c) => c.candidate_id) } },
    });
    expect(left.every((o) => o.source === 'human')).toBe(true);
    expect(left).toHaveLength(Math.min(2, candidates.length));
  });

  it('refuses an unknown or quarantined session, bad input and the wrong role, recording nothing', async () => {
    const { db } = stack.api.deps;
    const quarantined = await createVehicleSession(stack.api.deps, await vehicleFrames(1, { width: 640 }));
    await db.sessionHealthOverride.create({
      data: { sessionId: quarantined.session.id, quarantined: true, reason: 'bad clock' },
    });
    const runs = await db.agentRun.count();
    const call = (path: string, token?: string, body?: unknown) =>
      stack.api.call('POST', path, { ...(token ? { token } : {}), ...(body ? { body } : {}) });
    expect((await call(`/api/recall/run/${crypto.randomUUID()}`, stack.reviewer)).status).toBe(404);
    expect((await call(`/api/recall/run/${quarantined.session.id}`, stack.reviewer)).status).toBe(422);
    expect((await call(`/api/recall/run/${sessionId}`, stack.reviewer, { min_score: 2 })).status).toBe(422);
    expect((await call(`/api/recall/run/${sessionId}`, stack.reviewer, { extra: 1 })).status).toBe(422);
    expect((await call(`/api/recall/run/${sessionId}`)).status).toBe(401);
    expect((await call(`/api/recall/run/${sessionId}`, stack.annotator)).status).toBe(403);
    expect((await call(`/api/recall/candidates/${crypto.randomUUID()}/accept`, stack.reviewer)).status).toBe(
      404,
    );
    expect((await call(`/api/recall/candidates/${crypto.randomUUID()}/maybe`, stack.reviewer)).status).toBe(
      422,
    );
    expect((await call(`/api/recall/candidates/${crypto.randomUUID()}/accept`, stack.annotator)).status).toBe(
      403,
    );
    expect(
      (await stack.api.call('GET', '/api/recall/candidates?state=lost', { token: stack.annotator })).status,
    ).toBe(422);
    expect(await db.agentRun.count()).toBe(runs);
  });
});
