import { randomUUID } from 'node:crypto';
import { useApiForFile } from '../testkit/api';

/**
 * POST /api/hardening/efficiency on the real API and database (docs/hardening.md): GPU-slot
 * utilisation and idle gaps computed from job records written as the jobs would have.
 */
const ctx = useApiForFile();
const at = (h: number) => new Date(Date.UTC(2026, 10, 2, h));

beforeAll(async () => {
  const { db } = ctx.api.deps;
  const session = await db.session.create({
    data: { name: 'drive', sourceKind: 'video', state: 'ready', targetFps: 3 },
  });
  const job = (startedAt: Date, finishedAt: Date | null, computeTarget = 'local') =>
    db.autolabelJob.create({
      data: {
        sessionId: session.id,
        workflowId: `autolabel-${randomUUID()}`,
        state: finishedAt ? 'completed' : 'running',
        computeTarget,
        startedAt,
        finishedAt,
      },
    });
  await job(at(1), at(3));
  await job(at(5), at(6));
  // Run on a cloud GPU: it never held the local slot.
  await job(at(6), at(9), 'cloud');
});

const efficiency = (body: unknown, token = ctx.token.reviewer) =>
  ctx.api.call('POST', '/api/hardening/efficiency', { token, body });

it('measures the busy share of the period, per kind, and its idle gaps', async () => {
  const res = await efficiency({ from: at(0).toISOString(), to: at(10).toISOString(), min_gap_seconds: 600 });
  expect(res.status).toBe(200);
  expect(res.body).toMatchObject({
    period_seconds: 36_000,
    busy_seconds: 3 * 3600,
    idle_seconds: 7 * 3600,
    overlap_seconds: 0,
    by_kind: { autolabel: { jobs: 2, busy_seconds: 3 * 3600 } },
    idle_gaps_counted: 3,
  });
  expect(res.body.utilisation).toBeCloseTo(0.3, 12);
  expect(res.body.idle_gaps.map((g: { from: string; seconds: number }) => [g.from, g.seconds])).toEqual([
    [at(6).toISOString(), 4 * 3600],
    [at(3).toISOString(), 2 * 3600],
    [at(0).toISOString(), 3600],
  ]);
});

it('refuses a backwards or too long period, bad fields and annotators', async () => {
  for (const body of [
    { from: at(5).toISOString(), to: at(4).toISOString() },
    { from: '2020-01-01T00:00:00Z', to: at(4).toISOString() },
    { days: 0 },
    { top_gaps: 1.5 },
    { since: 'yesterday' },
  ])
    expect((await efficiency(body)).status).toBe(422);
  expect((await efficiency({}, ctx.token.annotator)).status).toBe(403);
});
