import { startTestApi, useApiForFile } from '../testkit/api';
import { testConfig } from '../testkit/stack';

/**
 * SLOs on the real API (docs/slo.md): an objective per route group, set and replaced, and the board
 * measuring it from the API's own request histogram — requests answered here move it, a 5xx spends
 * the error budget, a group without traffic reads as such — and from what other API processes
 * flushed, on a timer and when they close, so the board spans processes and restarts.
 */
const ctx = useApiForFile();
const call = (method: string, path: string, token: string, body?: unknown) =>
  ctx.api.call(method, path, { token, ...(body === undefined ? {} : { body }) });
const board = async () => (await call('GET', '/api/hardening/slo/board', ctx.token.reviewer)).body;
const objective = async (group: string) =>
  (await board()).objectives.find((o: { route_group: string }) => o.route_group === group);

it('sets an objective for a served group, replaces it, and refuses a group the API does not serve', async () => {
  const set = await call('POST', '/api/hardening/slo', ctx.token.admin, {
    route_group: 'govern',
    latency_ms: 250,
    latency_target: 0.95,
    error_rate_target: 0.01,
  });
  expect([set.status, set.body.detail]).toEqual([200, undefined]);
  expect(set.body).toMatchObject({ route_group: 'govern', latency_ms: 250, window_minutes: 43_200 });
  const replaced = await call('POST', '/api/hardening/slo', ctx.token.admin, {
    route_group: 'govern',
    latency_ms: 1000,
    latency_target: 0.9,
    error_rate_target: 0.05,
    window_minutes: 60,
  });
  expect(replaced.body).toMatchObject({ latency_ms: 1000, latency_target: 0.9, window_minutes: 60 });
  expect(await ctx.api.deps.db.slo.count({ where: { routeGroup: 'govern' } })).toBe(1);
  const unknown = await call('POST', '/api/hardening/slo', ctx.token.admin, {
    route_group: 'teleport',
    latency_ms: 100,
    latency_target: 0.99,
    error_rate_target: 0.01,
  });
  expect(unknown.status).toBe(422);
  expect(unknown.body.errors[0]).toMatchObject({ field: 'body.route_group' });
  expect(unknown.body.errors[0].message).toContain('govern');
  expect((await call('POST', '/api/hardening/slo', ctx.token.reviewer, {})).status).toBe(403);
  expect(
    (
      await call('POST', '/api/hardening/slo', ctx.token.admin, {
        route_group: 'govern',
        latency_ms: 1,
        latency_target: 2,
        error_rate_target: 0,
      })
    ).status,
  ).toBe(422);
});

it("measures the group's requests as they are answered, and counts a refusal as a good answer", async () => {
  const before = await objective('govern');
  for (let i = 0; i < 3; i++)
    expect((await call('GET', '/api/govern/state', ctx.token.admin)).status).toBe(200);
  // A 403 is an answer, not an error.
  expect((await call('GET', '/api/govern/state', ctx.token.annotator)).status).toBe(403);
  const after = await objective('govern');
  expect(after.requests - before.requests).toBe(4);
  expect(after.errors.spent).toBe(before.errors.spent);
  expect(after).toMatchObject({
    status: 'met',
    latency: { read_at_ms: 1000, met: true },
    errors: { rate: 0, met: true },
  });
  expect(after.latency.compliance).toBe(1);
  expect(after.errors.budget).toBeCloseTo(0.05 * after.requests, 6);
  expect(after.window_covered).toBeGreaterThan(0);
  expect(after.window_covered).toBeLessThanOrEqual(1);
});

it('reads a group with no traffic as no_traffic, lists the buckets it reads at, and needs a reviewer', async () => {
  await call('POST', '/api/hardening/slo', ctx.token.admin, {
    route_group: 'billing',
    latency_ms: 100,
    latency_target: 0.99,
    error_rate_target: 0.01,
  });
  const b = await board();
  expect(b.measured.source).toMatch(
    /^http_request_duration_seconds of every API process, flushed to slo_samples/,
  );
  expect(b.measured.buckets_ms).toContain(250);
  expect(b.objectives.find((o: { route_group: string }) => o.route_group === 'billing')).toMatchObject({
    requests: 0,
    status: 'no_traffic',
  });
  expect((await call('GET', '/api/hardening/slo/board', ctx.token.annotator)).status).toBe(403);
});

it('adds up what other API processes answered: flushed on a timer while they run and when they close', async () => {
  const before = await objective('govern');
  const other = await startTestApi(testConfig({ DATABASE_URL: ctx.db.url, APP_SLO__FLUSH_SECONDS: '1' }));
  const { db } = ctx.api.deps;
  try {
    for (let i = 0; i < 2; i++)
      expect((await other.call('GET', '/api/govern/state', { token: ctx.token.admin })).status).toBe(200);
    // Its timer flushes the two answers while it runs: the first API's board counts them.
    for (
      let i = 0;
      i < 40 && !(await db.sloSample.count({ where: { processId: other.deps.slo.processId } }));
      i++
    )
      await new Promise((r) => setTimeout(r, 100));
    const flushed = await db.sloSample.findMany({
      where: { processId: other.deps.slo.processId, routeGroup: 'govern' },
    });
    expect(flushed.reduce((n, r) => n + r.requests, 0)).toBe(2);
    expect((await objective('govern')).requests - before.requests).toBe(2);
    // One more, then it stops (a restart): its close flushes what its timer had not.
    expect((await other.call('GET', '/api/govern/state', { token: ctx.token.admin })).status).toBe(200);
  } finally {
    await other.close();
  }
  const after = await objective('govern');
  expect(after.requests - before.requests).toBe(3);
  expect(after.status).toBe('met');
  // Nothing is counted twice: the rows add up to what the other process answered.
  const rows = await db.sloSample.findMany({
    where: { processId: other.deps.slo.processId, routeGroup: 'govern' },
  });
  expect(rows.reduce((n, r) => n + r.requests, 0)).toBe(3);
  expect(Date.parse(after.measured_from)).toBeLessThanOrEqual(Date.now());
});
