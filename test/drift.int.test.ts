import { createCommitFixture } from '../testkit/commits';
import { startIngestStack, type IngestStack } from '../testkit/media/harness';
import { createSessionFixture } from '../testkit/session-fixtures';

/**
 * The drift scan on the real stack (docs/drift.md): recent sessions against the sessions of the
 * champion's training commit — a drive at night with more people than cars drifts, a drive like the
 * training ones does not — recorded as a governance run with its findings, announced to reviewers,
 * and every refusal named.
 */
/** Every feature a scan compares, in the order it reports them. */
const FEATURES = [
  'classes',
  'context.lighting',
  'context.weather',
  'confidence',
  'image.brightness',
  'image.sharpness',
];
let stack: IngestStack;
let commitId: string;
const baseline: string[] = [];
let night: string;
let alike: string;

const call = (method: string, path: string, token: string, body?: unknown) =>
  stack.api.call(method, path, { token, body });
const scan = (body: unknown, token = stack.reviewer) => call('POST', '/api/govern/drift/scan', token, body);

/** A seeded normal draw (Box–Muller over a 32-bit LCG): the same drives every run. */
function normals(seed: number) {
  let s = seed >>> 0;
  const uniform = () => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0) + 1) / 4294967297;
  return (mean: number, sd: number) =>
    mean + sd * Math.sqrt(-2 * Math.log(uniform())) * Math.cos(2 * Math.PI * uniform());
}

/** A drive of `frames` frames: its exposure, sharpness and weather, and per frame `cars` cars and `people` people. */
async function drive(opts: {
  seed: number;
  luma: number;
  cars: number;
  people: number;
  conf: number;
  rainEvery: number;
}) {
  const { db, storage } = stack.api.deps;
  const draw = normals(opts.seed);
  const { session, frames } = await createSessionFixture(
    { db, storage },
    {
      frames: 60,
      storeImages: false,
      context: (i) => ({
        exposure: { mean_luma: draw(opts.luma, 12) },
        sharpness: Math.abs(draw(300, 60)),
        weather: i % opts.rainEvery === 0 ? 'rain' : 'clear',
      }),
    },
  );
  const [car, person] = await Promise.all(
    ['car', 'person'].map(async (name) => (await db.ontologyClass.findFirstOrThrow({ where: { name } })).id),
  );
  await db.annoObject.createMany({
    data: frames.flatMap((f) =>
      [...Array<number>(opts.cars).fill(car!), ...Array<number>(opts.people).fill(person!)].map(
        (classId) => ({
          frameId: f.id,
          classId,
          bbox: [4, 4, 40, 30],
          source: 'auto',
          state: 'auto_accept',
          conf: Math.min(0.99, Math.max(0.05, draw(opts.conf, 0.08))),
        }),
      ),
    ),
  });
  return session.id;
}

beforeAll(async () => {
  stack = await startIngestStack();
  const { db } = stack.api.deps;
  for (const seed of [1, 2])
    baseline.push(await drive({ seed, luma: 130, cars: 3, people: 1, conf: 0.8, rainEvery: 6 }));
  night = await drive({ seed: 3, luma: 45, cars: 1, people: 3, conf: 0.6, rainEvery: 6 });
  alike = await drive({ seed: 4, luma: 130, cars: 3, people: 1, conf: 0.8, rainEvery: 6 });
  const commit = await createCommitFixture(stack.api.deps, {
    name: 'drift baseline',
    objects: [{ object_id: '00000000-0000-4000-8000-000000000001', class_name: 'car' }],
    sessionIds: baseline,
  });
  commitId = commit.commitId;
  await db.model.create({
    data: {
      modelVersion: 'drift-champion',
      name: 'trained here',
      origin: 'trained',
      state: 'champion',
      datasetCommitId: commitId,
    },
  });
}, 120_000);

afterAll(async () => {
  await stack?.close();
});

describe('POST /api/govern/drift/scan', () => {
  it('finds the night drive drifted in classes, lighting, confidence and brightness against the champion’s training commit, records it and tells the reviewers', async () => {
    const res = await scan({ session_ids: [night] });
    expect([res.status, res.body.detail]).toEqual([200, undefined]);
    expect(res.body.baseline).toEqual({
      commit_id: commitId,
      model_version: 'drift-champion',
      from: 'champion',
      sessions: 2,
      frames: 120,
    });
    expect(res.body.recent).toEqual({ session_ids: [night], frames: 60, window_days: null });
    expect(res.body.drifted).toBe(true);
    expect(res.body.drifted_features).toEqual(
      expect.arrayContaining(['classes', 'context.lighting', 'confidence', 'image.brightness']),
    );
    // Weather and sharpness come from the same generator on both sides.
    expect(res.body.drifted_features).not.toContain('context.weather');
    expect(res.body.drifted_features).not.toContain('image.sharpness');
    const features = res.body.findings.map((f: { feature: string }) => f.feature);
    expect(features).toEqual(FEATURES);
    expect(res.body.threshold).toBeCloseTo(0.01 / 6, 15);
    const classes = res.body.findings[0];
    expect(classes).toMatchObject({ test: 'chi2', drifted: true });
    expect(classes.detail.reference.counts).toEqual({ car: 360, person: 120 });
    expect(classes.detail.recent.counts).toEqual({ car: 60, person: 180 });
    expect(res.body.findings[4]).toMatchObject({ feature: 'image.brightness', test: 'ks' });
    expect(res.body.findings[4].detail.reference.n).toBe(120);

    const { db } = stack.api.deps;
    const run = await db.governanceRun.findUniqueOrThrow({
      where: { id: res.body.run_id },
      include: { driftFindings: true },
    });
    expect(run).toMatchObject({ kind: 'drift-scan', status: 'completed' });
    expect(run.driftFindings.map((f) => [f.feature, f.drifted]).sort()).toEqual(
      res.body.findings.map((f: { feature: string; drifted: boolean }) => [f.feature, f.drifted]).sort(),
    );
    const event = await db.platformEvent.findFirstOrThrow({
      where: { kind: 'drift.detected', subjectId: run.id },
    });
    expect(event.payload).toMatchObject({ baseline_commit_id: commitId, sessions: 1 });
    // Reviewers and admins hear of it; the reviewer who ran the scan does not.
    const told = await db.notification.findMany({
      where: { kind: 'drift.detected' },
      include: { user: true },
    });
    expect(told.map((n) => n.user.role).sort()).toEqual(['admin']);
    expect(await db.auditLog.count({ where: { action: 'govern.drift_scanned', subjectId: run.id } })).toBe(1);
  });

  it('finds no drift in a drive like the training ones, and announces nothing', async () => {
    const res = await scan({ session_ids: [alike] });
    expect(res.status).toBe(200);
    expect(res.body.drifted).toBe(false);
    expect(res.body.findings).toHaveLength(5);
    // Every frame of both sides is normally lit: one category is no test.
    expect(res.body.not_measurable).toEqual([
      {
        feature: 'context.lighting',
        reason: 'fewer than two categories observed',
        reference_n: 120,
        recent_n: 60,
      },
    ]);
    expect(
      await stack.api.deps.db.platformEvent.count({
        where: { kind: 'drift.detected', subjectId: res.body.run_id },
      }),
    ).toBe(0);
  });

  it('compares every ready session of the window outside the baseline when none is given, and tests nothing on thin samples', async () => {
    const res = await scan({ baseline_commit_id: commitId, window_days: 1, min_samples: 10_000 });
    expect(res.status).toBe(200);
    expect(res.body.recent.session_ids).toEqual([night, alike].sort());
    expect(res.body.baseline).toMatchObject({ from: 'request', model_version: 'drift-champion' });
    expect(res.body.findings).toEqual([]);
    expect(res.body.drifted).toBe(false);
    expect(res.body.not_measurable.map((n: { feature: string }) => n.feature)).toEqual(FEATURES);
  });

  it('refuses what it cannot compare, by name, and records nothing', async () => {
    const { db } = stack.api.deps;
    const before = await db.governanceRun.count({ where: { kind: 'drift-scan' } });
    const inBaseline = await scan({ session_ids: [baseline[0]] });
    expect([inBaseline.status, inBaseline.body.detail]).toEqual([
      422,
      `sessions ${baseline[0]} are in the baseline commit; drift is measured on sessions it does not hold`,
    ]);
    const unknown = await scan({ session_ids: ['00000000-0000-4000-8000-00000000dead'] });
    expect(unknown.status).toBe(404);
    expect((await scan({ baseline_commit_id: 'f'.repeat(64) })).status).toBe(404);
    expect((await scan({ alpha: 0 })).status).toBe(422);
    expect((await scan({ session_ids: [] })).status).toBe(422);
    expect((await scan({ baseline_commit_id: 'not-a-commit' })).status).toBe(422);
    await db.model.update({ where: { modelVersion: 'drift-champion' }, data: { datasetCommitId: null } });
    try {
      const noBaseline = await scan({ session_ids: [night] });
      expect([noBaseline.status, noBaseline.body.detail]).toEqual([
        422,
        'the champion drift-champion names no dataset commit it was trained on (it was trained elsewhere); give baseline_commit_id',
      ]);
    } finally {
      await db.model.update({
        where: { modelVersion: 'drift-champion' },
        data: { datasetCommitId: commitId },
      });
    }
    expect(await db.governanceRun.count({ where: { kind: 'drift-scan' } })).toBe(before);
  });

  it('needs a reviewer', async () => {
    expect((await scan({ session_ids: [night] }, stack.annotator)).status).toBe(403);
    expect((await stack.api.call('POST', '/api/govern/drift/scan', { body: {} })).status).toBe(401);
  });
});

describe('POST /api/govern/controller/tick', () => {
  const tick = (body: unknown = {}, token = stack.admin) =>
    call('POST', '/api/govern/controller/tick', token, body);

  it('runs retention, cost and drift once: nothing due, no cap, and the drift of the window', async () => {
    const res = await tick();
    expect([res.status, res.body.detail]).toEqual([200, undefined]);
    expect(res.body.retention).toEqual({ due: 0, sweep: null });
    expect(res.body.cost).toMatchObject({
      spent_usd: 0,
      window_cap_usd: null,
      headroom_usd: null,
      over: false,
    });
    expect(res.body.drift.scanned).toBe(true);
    expect(res.body.drift.drifted_features).toContain('classes');
    const { db } = stack.api.deps;
    const run = await db.governanceRun.findUniqueOrThrow({ where: { id: res.body.tick_id } });
    expect(run).toMatchObject({ kind: 'controller-tick', status: 'completed', dryRun: true });
    expect(await db.governanceRun.count({ where: { id: res.body.drift.run_id, kind: 'drift-scan' } })).toBe(
      1,
    );
  });

  it('starts a dry-run retention sweep when a session is past its retention, which erases nothing', async () => {
    const { db } = stack.api.deps;
    await db.session.update({
      where: { id: alike },
      data: { retentionUntil: new Date(Date.now() - 60_000) },
    });
    try {
      const res = await tick({ dry_run: true });
      expect(res.status).toBe(200);
      expect(res.body.retention.due).toBe(1);
      expect(res.body.retention.sweep).toMatchObject({ dry_run: true, params: { trigger: 'controller' } });
      await stack.env.client.workflow.getHandle(res.body.retention.sweep.workflow_id).result();
      const sweep = await db.governanceRun.findUniqueOrThrow({
        where: { id: res.body.retention.sweep.sweep_id },
      });
      expect(sweep.status).toBe('completed');
      expect(await db.session.count({ where: { id: alike } })).toBe(1);
    } finally {
      await db.session.update({ where: { id: alike }, data: { retentionUntil: null } });
    }
  });

  it('says why drift was not scanned, and needs an admin', async () => {
    const { db } = stack.api.deps;
    await db.model.update({ where: { modelVersion: 'drift-champion' }, data: { state: 'retired' } });
    try {
      const res = await tick();
      expect(res.body.drift).toEqual({
        scanned: false,
        reason: 'there is no detection champion to compare with; give baseline_commit_id',
      });
    } finally {
      await db.model.update({ where: { modelVersion: 'drift-champion' }, data: { state: 'champion' } });
    }
    expect((await tick({}, stack.reviewer)).status).toBe(403);
    expect((await tick({ dry_run: 'no' })).status).toBe(422);
  });
});
