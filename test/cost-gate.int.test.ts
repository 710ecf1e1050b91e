import { useApiForFile } from '../testkit/api';

/**
 * The cost gate route on the real API (docs/billing.md): a job priced as GPU hours × hourly price
 * against the per-job and window caps, with the configured caps standing in for those the request
 * leaves null.
 */
const ctx = useApiForFile({ APP_COST__PER_JOB_CAP_USD: '50', APP_COST__WINDOW_CAP_USD: '' });
const gate = (body: unknown, token = ctx.token.reviewer) =>
  ctx.api.call('POST', '/api/govern/cost/gate', { token, body });

it('allows a job within the configured per-job cap and refuses one over it, with the numbers', async () => {
  const ok = await gate({ gpu_hours: 10, hourly_usd: 4.5 });
  expect(ok.status).toBe(200);
  expect(ok.body).toMatchObject({
    decision: 'allow',
    cost_usd: 45,
    spent_usd: 0,
    per_job: { cap_usd: 50, amount_usd: 45, headroom_usd: 5, over: false },
    window: { cap_usd: null, over: false },
    caps_from: { per_job: 'config', window: 'none' },
    reasons: [],
  });
  const refused = await gate({ gpu_hours: 12, hourly_usd: 4.5 });
  expect(refused.body).toMatchObject({
    decision: 'refuse',
    cost_usd: 54,
    per_job: { headroom_usd: -4, over: true },
  });
  expect(refused.body.reasons).toEqual([
    'the job would cost 54 USD (12 GPU hours × 4.5 USD per hour), over the per-job cap of 50 USD',
  ]);
});

it('holds the spend so far plus the job against a window cap the request names', async () => {
  const res = await gate({
    gpu_hours: 2,
    hourly_usd: 10,
    window_cap_usd: 100,
    spent_usd: 85,
    per_job_cap_usd: 1000,
  });
  expect(res.body).toMatchObject({
    decision: 'refuse',
    window: { cap_usd: 100, amount_usd: 105, headroom_usd: -5, over: true },
    caps_from: { per_job: 'request', window: 'request' },
  });
  expect(res.body.reasons).toEqual([
    '85 USD spent in the window plus 20 USD is 105 USD, over the window cap of 100 USD',
  ]);
});

it('refuses malformed input and annotators', async () => {
  for (const body of [
    {},
    { gpu_hours: -1, hourly_usd: 1 },
    { gpu_hours: 1, hourly_usd: 'x' },
    { gpu_hours: 1, hourly_usd: 1, more: 1 },
  ])
    expect((await gate(body)).status).toBe(422);
  expect((await gate({ gpu_hours: 1, hourly_usd: 1 }, ctx.token.annotator)).status).toBe(403);
});
