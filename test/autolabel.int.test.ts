import path from 'node:path';
import { iou, type Box } from '../core/geometry';
import { isSegmentable } from '../core/segmentation';
import { startIngestStack, type IngestStack } from '../testkit/media/harness';
import { createVehicleSession, vehicleFrames, type VehicleFrame } from '../testkit/media/vehicles';
import { openEventStream, type SseEvent } from '../testkit/sse';
import { recordHistoryIfAsked, replayRecordedHistory } from '../testkit/temporal';

/**
 * Auto-label on the real stack: PostgreSQL, MinIO, a private Temporal server with the real cpu
 * workflows and a one-slot gpu worker running yolox_nano.onnx through onnxruntime-node, on frames
 * composed of real photographs whose vehicles' places are known by construction.
 */
const HISTORY = path.join(__dirname, 'histories/autolabel.json');

let stack: IngestStack;

beforeAll(async () => {
  stack = await startIngestStack({ gpu: true });
});

afterAll(async () => {
  await stack?.close();
});

async function start(sessionId: string, body: Record<string, unknown> = {}) {
  const res = await stack.api.call('POST', '/api/autolabel/start', {
    token: stack.reviewer,
    body: { session_id: sessionId, ...body },
  });
  if (res.status !== 202) throw new Error(`start: ${res.status} ${JSON.stringify(res.body)}`);
  return res;
}

const finish = (workflowId: string) => stack.env.client.workflow.getHandle(workflowId).result();

const objectsOf = (sessionId: string) =>
  stack.api.deps.db.annoObject.findMany({
    where: { frame: { sessionId } },
    include: { class: true, provenance: true, frame: { select: { index: true } } },
    orderBy: [{ frame: { index: 'asc' } }, { idemKey: 'asc' }],
  });

describe('the closed-set path on real driving frames', () => {
  let frames: VehicleFrame[];
  let sessionId: string;
  let started: Awaited<ReturnType<typeof start>>;

  let jobEvents: SseEvent[];

  beforeAll(async () => {
    frames = await vehicleFrames(2, { width: 1280, step: 0.05 });
    sessionId = (await createVehicleSession(stack.api.deps, frames)).session.id;
    const stream = await openEventStream(stack.api.url, '/api/events/jobs', stack.annotator);
    started = await start(sessionId);
    const ofThisJob = (events: SseEvent[]) =>
      events.filter((e) => (e.data as { job_id?: string }).job_id === started.body.job_id);
    const read = stream.readUntil((events) =>
      ofThisJob(events).some((e) => e.event === 'autolabel.completed'),
    );
    await finish(started.body.workflow_id);
    jobEvents = ofThisJob(await read);
  });

  it('tells the jobs stream that the session started, progressed and completed', () => {
    const types = jobEvents.map((e) => e.event);
    expect(types[0]).toBe('autolabel.started');
    expect(types).toContain('autolabel.progress');
    expect(types.at(-1)).toBe('autolabel.completed');
    const completed = jobEvents.at(-1)!.data as { state: string; frames_done: number; models: object };
    expect(completed).toMatchObject({ state: 'completed', frames_done: 2, session_id: sessionId });
    // Only the closed-set path ran: no endpoint is configured here.
    expect(completed.models).toEqual({ closed_set: expect.stringMatching(/^yolox_nano\.onnx/) });
  });

  it('answers 202 with the job, the workflow autolabel-<session_id> and a Location', () => {
    expect(started.body.workflow_id).toBe(`autolabel-${sessionId}`);
    expect(started.headers.get('location')).toBe(`/api/autolabel/${started.body.job_id}`);
    expect(started.body.policy).toEqual({
      auto_accept_conf: 0.8,
      require_agreement: false,
      review_low: 0.35,
    });
  });

  it('finds the bus and the motorcycle where the photographs put them, as ontology classes', async () => {
    const objects = await objectsOf(sessionId);
    for (const [i, f] of frames.entries()) {
      const onFrame = objects.filter((o) => o.frame.index === i);
      const best = (cls: string, truth: Box) =>
        Math.max(0, ...onFrame.filter((o) => o.class.name === cls).map((o) => iou(o.bbox as Box, truth)));
      expect(best('bus', f.truth.bus)).toBeGreaterThan(0.6);
      expect(best('motorcycle', f.truth.motorcycle)).toBeGreaterThan(0.5);
      // The pedestrians in the street photograph.
      expect(onFrame.filter((o) => o.class.name === 'person').length).toBeGreaterThanOrEqual(2);
      // Nothing is found on the empty grey part of the frame.
      expect(
        onFrame.filter((o) => o.bbox[0]! > f.width * 0.62 && o.bbox[3]! < f.truth.motorcycle[1]),
      ).toHaveLength(0);
    }
  });

  it('gives every object a state, source fused and a provenance record saying which paths ran', async () => {
    const objects = await objectsOf(sessionId);
    expect(objects.length).toBeGreaterThan(0);
    for (const o of objects) {
      expect(o.source).toBe('fused');
      expect(['auto_accept', 'review', 'annotate']).toContain(o.state);
      expect(o.provenance).toHaveLength(1);
      const p = o.provenance[0]!;
      // The segmentation path (docs/masks.md) adds itself for the classes it makes masks for.
      expect(p.paths).toEqual(isSegmentable(o.class.name) ? ['closed_set', 'segmentation'] : ['closed_set']);
      expect(p.agreement).toBe(1);
      expect((p.rawConfidences as Record<string, { score: number }>).closed_set!.score).toBeCloseTo(
        o.conf!,
        6,
      );
      const trace = p.reasonerTrace as {
        paths: Record<string, { status: string; reason?: string }>;
        paths_ran: string[];
        critic: { ran: string[]; skipped: Array<{ check: string }> };
      };
      expect(trace.paths_ran).toEqual(['closed_set']);
      expect(trace.paths.open_vocab).toEqual({
        status: 'refused',
        reason: expect.stringMatching(/APP_AUTOLABEL__OPEN_VOCAB_URL/),
      });
      expect(trace.critic.skipped.map((s) => s.check)).toContain('cross_modal');
    }
    const bus = objects.find((o) => o.class.name === 'bus')!;
    expect(bus.state).toBe('auto_accept');
    expect((bus.provenance[0]!.rawConfidences as Record<string, { label: string }>).closed_set!.label).toBe(
      'bus',
    );
  });

  it('tracks the session again after the run: the bus of both frames is one track', async () => {
    const objects = await objectsOf(sessionId);
    const bestBus = frames.map((f, i) => {
      const buses = objects.filter((o) => o.frame.index === i && o.class.name === 'bus');
      return buses.sort((a, b) => iou(b.bbox as Box, f.truth.bus) - iou(a.bbox as Box, f.truth.bus))[0]!;
    });
    expect(bestBus[0]!.trackId).not.toBeNull();
    expect(bestBus[1]!.trackId).toBe(bestBus[0]!.trackId);
    const audit = await stack.api.deps.db.auditLog.findFirstOrThrow({
      where: { subjectId: sessionId, action: 'session.retracked' },
    });
    expect(audit.actorId).toBeNull();
  });

  it('reports the job: frames, objects by state, and why the other paths did not run', async () => {
    const res = await stack.api.call('GET', started.headers.get('location')!, { token: stack.annotator });
    expect(res.status).toBe(200);
    const objects = await objectsOf(sessionId);
    expect(res.body).toMatchObject({
      state: 'completed',
      frames_planned: 2,
      frames_done: 2,
      objects_created: objects.length,
      progress: 1,
      attempts: 1,
      resumed_from: null,
    });
    const states = objects.reduce<Record<string, number>>(
      (m, o) => ({ ...m, [o.state]: (m[o.state] ?? 0) + 1 }),
      {},
    );
    expect(res.body.tally.states).toEqual(states);
    expect(res.body.tally.paths.closed_set).toEqual({ ran: 2 });
    expect(res.body.tally.paths.open_vocab).toEqual({ refused: 2 });
    expect(res.body.tally.path_reasons.open_vocab).toMatch(/not configured/);
  });

  it('records its workflow history, which replays against the current code', async () => {
    await recordHistoryIfAsked(HISTORY, () =>
      stack.env.client.workflow.getHandle(started.body.workflow_id).fetchHistory(),
    );
    await expect(
      replayRecordedHistory(HISTORY, require.resolve('../workflows'), 'recorded'),
    ).resolves.toBeUndefined();
  });
});

describe('starting', () => {
  it('refuses a quarantined session with a readable reason and leaves no job', async () => {
    const { db } = stack.api.deps;
    const { session } = await createVehicleSession(stack.api.deps, await vehicleFrames(1, { width: 320 }));
    await db.sessionHealthOverride.create({
      data: { sessionId: session.id, quarantined: true, reason: 'camera fogged' },
    });
    const res = await stack.api.call('POST', '/api/autolabel/start', {
      token: stack.reviewer,
      body: { session_id: session.id },
    });
    expect(res.status).toBe(422);
    expect(res.headers.get('content-type')).toMatch(/problem\+json/);
    expect(res.body.detail).toMatch(
      /quarantined by an admin override \(camera fogged\).*auto-label is refused/,
    );
    expect(await db.autolabelJob.count({ where: { sessionId: session.id } })).toBe(0);
  });

  it('answers bad input with problem+json naming the field, an unknown session with 404, a low role with 403', async () => {
    const bad = await stack.api.call('POST', '/api/autolabel/start', {
      token: stack.reviewer,
      body: { session_id: 'x', limit: 0, extra: 1 },
    });
    expect(bad.status).toBe(422);
    expect(bad.body.errors.map((e: { field: string }) => e.field).sort()).toEqual([
      'body.extra',
      'body.limit',
      'body.session_id',
    ]);
    expect(
      (
        await stack.api.call('POST', '/api/autolabel/start', {
          token: stack.reviewer,
          body: { session_id: '00000000-0000-4000-8000-000000000000' },
        })
      ).status,
    ).toBe(404);
    expect(
      (
        await stack.api.call('POST', '/api/autolabel/start', {
          token: stack.reviewer,
          body: { session_id: 'not-a-uuid' },
        })
      ).status,
    ).toBe(422);
    expect(
      (
        await stack.api.call('POST', '/api/autolabel/start', {
          token: stack.annotator,
          body: { session_id: 'x' },
        })
      ).status,
    ).toBe(403);
    const cloud = await stack.api.call('POST', '/api/autolabel/start', {
      token: stack.reviewer,
      body: { session_id: '00000000-0000-4000-8000-000000000000', compute_target: 'cloud' },
    });
    expect(cloud.status).toBe(422);
    expect(cloud.body.detail).toMatch(/compute target "cloud" is not available/);
    expect(
      (
        await stack.api.call('GET', '/api/autolabel/00000000-0000-4000-8000-000000000000', {
          token: stack.annotator,
        })
      ).status,
    ).toBe(404);
  });

  it('honours limit and only_unlabelled', async () => {
    const { db } = stack.api.deps;
    const { session, frames } = await createVehicleSession(
      stack.api.deps,
      await vehicleFrames(4, { width: 320 }),
    );
    const human = await stack.api.call('POST', `/api/frames/${frames[0]!.id}/objects`, {
      token: stack.reviewer,
      body: { class_name: 'car', bbox: [10, 10, 60, 60] },
    });
    expect(human.status).toBe(201);
    const res = await start(session.id, { only_unlabelled: true, limit: 2 });
    await finish(res.body.workflow_id);
    const labelled = await db.annoObject.findMany({
      where: { frame: { sessionId: session.id }, source: 'fused' },
      select: { frame: { select: { index: true } } },
    });
    expect([...new Set(labelled.map((o) => o.frame.index))].sort()).toEqual([1, 2]);
    expect((await db.autolabelJob.findUniqueOrThrow({ where: { id: res.body.job_id } })).framesDone).toBe(2);
  });
});

describe('the GPU slot', () => {
  it('runs two sessions started together one after the other, and shows holder and queue', async () => {
    const { db } = stack.api.deps;
    const a = await createVehicleSession(stack.api.deps, await vehicleFrames(8, { width: 640 }));
    const b = await createVehicleSession(stack.api.deps, await vehicleFrames(8, { width: 640 }));
    const [ra, rb] = [await start(a.session.id), await start(b.session.id)];
    const ids = [ra.body.job_id, rb.body.job_id];

    // A second start of a session that is queued or running is refused, leaving one job.
    const dup = await stack.api.call('POST', '/api/autolabel/start', {
      token: stack.reviewer,
      body: { session_id: a.session.id },
    });
    expect(dup.status).toBe(409);
    expect(await db.autolabelJob.count({ where: { sessionId: a.session.id } })).toBe(1);

    let seen: { holder: string; queued: string[] } | null = null;
    for (let i = 0; i < 200 && !seen; i++) {
      const slot = await stack.api.call('GET', '/api/gpu/slot', { token: stack.annotator });
      expect(slot.status).toBe(200);
      const holder = slot.body.holder?.holder_id as string | undefined;
      const queued = (slot.body.queue as Array<{ job_id: string }>)
        .map((q) => q.job_id)
        .filter((id) => ids.includes(id));
      if (holder && ids.includes(holder) && queued.length === 1 && queued[0] !== holder)
        seen = { holder, queued };
      else await new Promise((r) => setTimeout(r, 50));
    }
    expect(seen).not.toBeNull();

    await Promise.all([finish(ra.body.workflow_id), finish(rb.body.workflow_id)]);
    const jobs = await db.autolabelJob.findMany({
      where: { id: { in: ids } },
      orderBy: { startedAt: 'asc' },
    });
    expect(jobs.map((j) => j.state)).toEqual(['completed', 'completed']);
    expect(jobs[0]!.id).toBe(seen!.holder);
    expect(jobs[0]!.finishedAt!.getTime()).toBeLessThanOrEqual(jobs[1]!.startedAt!.getTime());
    const free = await stack.api.call('GET', '/api/gpu/slot', { token: stack.annotator });
    expect(free.body).toMatchObject({ busy: false, holder: null, queue: [] });
  });
});
