import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import { createControlSeedActivities, type ControlSeedHeartbeat } from '../activities/govern/control-seed';
import type { Db } from '../activities/db';
import { isControlSample } from '../core/control';
import type { StreamEvent } from '../runtime/event-hub';
import { startIngestStack, type IngestStack } from '../testkit/media/harness';
import { recordHistoryIfAsked, replayRecordedHistory, scheduledActivities } from '../testkit/temporal';

/**
 * The control sample on the real database and Temporal: 2% of auto-accepted objects mirrored to
 * review by a seeded draw in a workflow on the cpu queue, human verdicts, and the precision they
 * measure (Laplace-smoothed, 25 per check).
 */
const OBJECTS = 2500;
const HISTORY = path.join(__dirname, 'histories/control-seed.json');
let stack: IngestStack;
let prisma: Db;
let sessionId: string;
let objects: Array<{ id: string; idemKey: string; state: string }>;
const autoAccepts = OBJECTS - OBJECTS / 5;
/** The objects a seed must pick, drawn here by the rule itself, independently of the activity. */
const expectedPicks = (seed: number) =>
  objects
    .filter((o) => o.state === 'auto_accept' && isControlSample(seed, o.idemKey))
    .map((o) => o.id)
    .sort();
const controlled = async (seed: number) =>
  (await prisma.controlSample.findMany({ where: { seed }, select: { objectId: true } }))
    .map((c) => c.objectId)
    .sort();

beforeAll(async () => {
  stack = await startIngestStack();
  prisma = stack.api.deps.db;
  sessionId = (await prisma.session.create({ data: { name: 'controls', sourceKind: 'frames' } })).id;
  const frame = await prisma.frame.create({
    data: { sessionId, index: 0, timestampMs: 0, width: 640, height: 360, uri: 's3://frames/none.jpg' },
  });
  const jobId = randomUUID();
  objects = Array.from({ length: OBJECTS }, (_, n) => ({
    id: randomUUID(),
    idemKey: `al:${jobId}:${frame.id}:${n}`,
    state: n % 5 === 4 ? 'review' : 'auto_accept',
  }));
  await prisma.annoObject.createMany({
    data: objects.map((o) => ({
      ...o,
      frameId: frame.id,
      bbox: [0, 0, 10, 10],
      classId: 40,
      conf: 0.9,
      source: 'fused',
    })),
  });
  await prisma.provenance.createMany({
    data: objects.map((o) => ({
      objectId: o.id,
      paths: ['closed_set'],
      reasonerTrace: { critic: { ran: ['geometric', 'relationship'] } },
    })),
  });
  // A human object in auto_accept state would be a bug elsewhere; the control never takes human work.
  await prisma.annoObject.create({
    data: { frameId: frame.id, bbox: [0, 0, 5, 5], classId: 40, source: 'human', state: 'auto_accept' },
  });
}, 120_000);

afterAll(async () => {
  await stack?.close();
});

const seed = (body: Record<string, unknown>) =>
  stack.api.call('POST', '/api/govern/control/seed', { token: stack.reviewer, body });

/** Starts a seeding through the API and waits for its workflow. */
async function seedAndWait(body: Record<string, unknown>) {
  const res = await seed(body);
  expect(res.status).toBe(202);
  const handle = stack.env.client.workflow.getHandle(res.body.workflow_id, res.body.run_id);
  return { res, handle, tally: await handle.result() };
}

describe('seeding', () => {
  it('answers 202 with a Location, seeds in a workflow that reports to the jobs stream, and audits the outcome', async () => {
    const seen: StreamEvent[] = [];
    const unsubscribe = stack.api.deps.events.subscribe('jobs', (e) => {
      if (e.data.workflow_id === 'control-seed-7') seen.push(e);
    });
    try {
      const { res, handle, tally } = await seedAndWait({ seed: 7, session_id: sessionId });
      expect(res.headers.get('location')).toBe(`/api/govern/control/pending?session_id=${sessionId}`);
      expect(res.body).toMatchObject({
        workflow_id: 'control-seed-7',
        seed: 7,
        session_id: sessionId,
        rate: 0.02,
        events_url: '/api/events/jobs',
      });
      expect(tally).toMatchObject({ seed: 7, rate: 0.02, considered: autoAccepts, already_controlled: 0 });
      expect(tally.selected).toBeGreaterThan(autoAccepts * 0.01);
      expect(tally.selected).toBeLessThan(autoAccepts * 0.03);
      expect(tally.created).toBe(tally.selected);
      expect(await controlled(7)).toEqual(expectedPicks(7));

      const samples = await prisma.controlSample.findMany();
      expect(samples.every((s) => s.sessionId === sessionId && s.seed === 7)).toBe(true);
      expect(samples.every((s) => s.checks.join() === 'geometric,relationship')).toBe(true);

      // What the Location lists: the controls the seeding made, awaiting review.
      const pending = await stack.api.call('GET', res.headers.get('location')!, { token: stack.reviewer });
      expect(pending.status).toBe(200);
      expect(pending.body.total).toBe(tally.selected);

      const audits = await prisma.auditLog.findMany({ where: { action: 'control.seeded' } });
      expect(audits).toHaveLength(1);
      expect(audits[0]!.detail).toMatchObject({
        seed: 7,
        session_id: sessionId,
        considered: autoAccepts,
        selected: tally.selected,
        created: tally.created,
        workflow_id: 'control-seed-7',
      });

      // Progress a page at a time (500 auto-accepts each), then the outcome, on the jobs stream.
      for (let i = 0; i < 50 && !seen.some((e) => e.type === 'control.seed.completed'); i++)
        await new Promise((r) => setTimeout(r, 100));
      expect(seen.map((e) => e.type)).toEqual([
        'control.seed.started',
        ...Array(4).fill('control.seed.progress'),
        'control.seed.completed',
      ]);
      expect(seen.at(-1)!.data).toMatchObject({ ...tally, workflow_id: 'control-seed-7' });

      const history = await handle.fetchHistory();
      expect(scheduledActivities(history)).toEqual(['seedControlSample']);
      await recordHistoryIfAsked(HISTORY, () => Promise.resolve(history));
    } finally {
      unsubscribe();
    }
  });

  it('replays its recorded history against the current workflow code', async () => {
    await expect(
      replayRecordedHistory(HISTORY, require.resolve('../workflows'), 'recorded'),
    ).resolves.toBeUndefined();
  });

  it('picks the same objects for the same seed and adds nothing twice on a second run', async () => {
    const before = await controlled(7);
    const again = await seedAndWait({ seed: 7, session_id: sessionId });
    expect(again.tally).toMatchObject({
      considered: autoAccepts,
      selected: before.length,
      created: 0,
      already_controlled: before.length,
    });
    // Over the whole corpus (the human auto-accept is never a candidate): the same picks, again nothing new.
    const corpus = await seedAndWait({ seed: 7 });
    expect(corpus.res.headers.get('location')).toBe('/api/govern/control/pending');
    expect(corpus.tally).toMatchObject({ considered: autoAccepts, selected: before.length, created: 0 });
    expect(await controlled(7)).toEqual(before);
    expect(await prisma.controlSample.count()).toBe(before.length);
    expect(await prisma.auditLog.count({ where: { action: 'control.seeded' } })).toBe(3);
  });

  it('answers 409 while a seeding with the same seed is already running', async () => {
    // A run parked on a queue nobody polls stays open.
    const parked = await stack.env.client.workflow.start('controlSeedWorkflow', {
      taskQueue: 'nobody-polls',
      workflowId: 'control-seed-99',
      args: [{ seed: 99, sessionId: null, actorId: null, requestId: null }],
    });
    try {
      const res = await seed({ seed: 99 });
      expect(res.status).toBe(409);
      expect(res.body.detail).toMatch(/already running.*control-seed-99/);
      expect(await prisma.controlSample.count({ where: { seed: 99 } })).toBe(0);
    } finally {
      await parked.terminate('test over');
    }
  });

  it('says so on the jobs stream and in the audit log when a seeding gives up', async () => {
    const seen: StreamEvent[] = [];
    const unsubscribe = stack.api.deps.events.subscribe('jobs', (e) => {
      if (e.type === 'control.seed.failed') seen.push(e);
    });
    try {
      // PostgreSQL refuses the session id on every attempt, so the run fails for real after its retries.
      const run = stack.env.client.workflow.execute('controlSeedWorkflow', {
        taskQueue: 'cpu',
        workflowId: 'control-seed-98',
        args: [{ seed: 98, sessionId: 'not-a-session', actorId: null, requestId: 'req-98' }],
      });
      await expect(run).rejects.toThrow();
      const audit = await prisma.auditLog.findFirstOrThrow({ where: { action: 'control.seed.failed' } });
      expect(audit).toMatchObject({ requestId: 'req-98' });
      expect(audit.detail).toMatchObject({
        seed: 98,
        workflow_id: 'control-seed-98',
        error: expect.any(String),
      });
      for (let i = 0; i < 50 && !seen.length; i++) await new Promise((r) => setTimeout(r, 100));
      expect(seen.map((e) => e.data)).toEqual([
        expect.objectContaining({ seed: 98, workflow_id: 'control-seed-98' }),
      ]);
    } finally {
      unsubscribe();
    }
  }, 60_000);

  it('resumes a retried seeding after the cursor its heartbeat carries, counting each control once', async () => {
    const { seedControlSample } = createControlSeedActivities({ db: prisma, events: stack.api.deps.events });
    const input = { seed: 11, sessionId, actorId: null, requestId: null, pageSize: 500 };
    const quiet = { logger: new DefaultLogger('ERROR') }; // the dead attempt is logged as a warning
    const info = {
      workflowExecution: { workflowId: 'control-seed-11', runId: randomUUID() },
      scheduledTimestampMs: Date.now() - 1000,
    };
    // The first attempt commits two pages, but its worker dies before the second page's heartbeat gets through.
    const beats: ControlSeedHeartbeat[] = [];
    const first = new MockActivityEnvironment({ ...info, attempt: 1 }, quiet);
    first.on('heartbeat', (d: ControlSeedHeartbeat) => {
      if (d.considered === 1000) throw new Error('worker died');
      beats.push({ ...d });
    });
    await expect(first.run(seedControlSample, input)).rejects.toThrow('worker died');
    const reported = beats.at(-1)!;
    expect(reported.considered).toBe(500);
    const committed = await prisma.controlSample.count({ where: { seed: 11 } });
    expect(committed).toBeGreaterThan(reported.created);

    const retry = new MockActivityEnvironment({ ...info, attempt: 2, heartbeatDetails: reported }, quiet);
    const tally = await retry.run(seedControlSample, input);
    // An object is controlled once: seed 7's controls stay seed 7's.
    const taken = new Set(await controlled(7));
    const picks = expectedPicks(11);
    const fresh = picks.filter((id) => !taken.has(id));
    // Not the first page again (considered would exceed the auto-accepts), and the second page's
    // controls, written by the dead attempt, still count as this run's.
    expect(tally).toMatchObject({
      considered: autoAccepts,
      selected: picks.length,
      created: fresh.length,
      already_controlled: picks.length - fresh.length,
    });
    expect(await controlled(11)).toEqual(fresh);
  });

  it('answers bad input with problem+json', async () => {
    const bad = await seed({ seed: -1, rate: 0.5 });
    expect(bad.status).toBe(422);
    expect(bad.body.errors.map((e: { field: string }) => e.field).sort()).toEqual(['body.rate', 'body.seed']);
    expect(
      (await stack.api.call('POST', '/api/govern/control/seed', { token: stack.annotator, body: {} })).status,
    ).toBe(403);
  });
});

describe('verdicts and precision', () => {
  it('is not yet measurable while too few controls are reviewed, naming those that await review', async () => {
    const res = await stack.api.call('GET', '/api/govern/control/precision', { token: stack.annotator });
    expect(res.status).toBe(200);
    const pending = await prisma.controlSample.count({ where: { verdict: null } });
    expect(res.body).toMatchObject({
      status: 'not_yet_measurable',
      precision: null,
      reviewed: 0,
      pending,
      min_sample: 25,
      control_rate: 0.02,
    });
    expect(res.body.reason).toMatch(new RegExp(`0 of the 25 .*${pending} controls await review`));
  });

  it('takes verdicts once each, sends a wrong auto-accept back to review, and measures Laplace-smoothed precision from 25', async () => {
    const list = await stack.api.call('GET', '/api/govern/control/pending?limit=30', {
      token: stack.reviewer,
    });
    expect(list.status).toBe(200);
    expect(list.body.items).toHaveLength(30);
    expect(list.body.items[0].object).toMatchObject({ state: 'auto_accept', source: 'fused' });
    const items = list.body.items as Array<{ sample_id: string; object_id: string }>;

    for (const [i, item] of items.slice(0, 24).entries()) {
      const verdict = i < 22 ? 'correct' : 'wrong_class';
      const r = await stack.api.call('POST', `/api/govern/control/${item.sample_id}/verdict`, {
        token: stack.reviewer,
        body: { verdict },
      });
      expect(r.status).toBe(200);
      expect(r.body.object_demoted_to_review).toBe(verdict !== 'correct');
    }
    const wrong = await prisma.annoObject.findUniqueOrThrow({ where: { id: items[23]!.object_id } });
    expect(wrong).toMatchObject({ state: 'review', version: 2 });

    const still = await stack.api.call('GET', '/api/govern/control/precision', { token: stack.annotator });
    expect(still.body).toMatchObject({ status: 'not_yet_measurable', reviewed: 24 });

    const last = await stack.api.call('POST', `/api/govern/control/${items[24]!.sample_id}/verdict`, {
      token: stack.reviewer,
      body: { verdict: 'correct', note: 'fine' },
    });
    expect(last.status).toBe(200);
    const measured = await stack.api.call('GET', `/api/govern/control/precision?session_id=${sessionId}`, {
      token: stack.annotator,
    });
    expect(measured.body).toMatchObject({ status: 'measured', reviewed: 25, correct: 23, reason: null });
    expect(measured.body.precision).toBeCloseTo(24 / 27);
    expect(measured.body.by_check.geometric).toMatchObject({ status: 'measured', reviewed: 25 });
    expect(measured.body.by_check.temporal).toMatchObject({ status: 'not_yet_measurable', reviewed: 0 });

    const twice = await stack.api.call('POST', `/api/govern/control/${items[0]!.sample_id}/verdict`, {
      token: stack.reviewer,
      body: { verdict: 'false_positive' },
    });
    expect(twice.status).toBe(409);
    expect(
      (
        await stack.api.call('POST', `/api/govern/control/${items[25]!.sample_id}/verdict`, {
          token: stack.reviewer,
          body: { verdict: 'maybe' },
        })
      ).status,
    ).toBe(422);
    expect(
      (
        await stack.api.call('POST', `/api/govern/control/${randomUUID()}/verdict`, {
          token: stack.reviewer,
          body: { verdict: 'correct' },
        })
      ).status,
    ).toBe(404);
    expect(
      (
        await stack.api.call('POST', `/api/govern/control/${items[25]!.sample_id}/verdict`, {
          token: stack.annotator,
          body: { verdict: 'correct' },
        })
      ).status,
    ).toBe(403);

    const after = await stack.api.call('GET', '/api/govern/control/pending', { token: stack.reviewer });
    expect(after.body.total).toBe(list.body.total - 25);
    expect(await prisma.auditLog.count({ where: { action: 'control.verdict' } })).toBe(25);
  });
});
