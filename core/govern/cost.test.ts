import { costGate } from './cost';

const base = { gpu_hours: 2, hourly_usd: 3, per_job_cap_usd: null, window_cap_usd: null, spent_usd: 0 };

describe('costGate', () => {
  it('prices the job as GPU hours × hourly price and allows it without caps', () => {
    const v = costGate(base);
    expect(v).toMatchObject({ decision: 'allow', cost_usd: 6, reasons: [] });
    expect(v.per_job).toEqual({ cap_usd: null, amount_usd: 6, headroom_usd: null, over: false });
  });

  it('allows a cost equal to the per-job cap and refuses one above it, naming the numbers', () => {
    expect(costGate({ ...base, per_job_cap_usd: 6 }).decision).toBe('allow');
    const v = costGate({ ...base, per_job_cap_usd: 5.5 });
    expect(v.decision).toBe('refuse');
    expect(v.per_job).toEqual({ cap_usd: 5.5, amount_usd: 6, headroom_usd: -0.5, over: true });
    expect(v.reasons).toEqual([
      'the job would cost 6 USD (2 GPU hours × 3 USD per hour), over the per-job cap of 5.5 USD',
    ]);
  });

  it('holds the spend so far plus the job against the window cap', () => {
    const ok = costGate({ ...base, window_cap_usd: 10, spent_usd: 4 });
    expect(ok.window).toEqual({ cap_usd: 10, amount_usd: 10, headroom_usd: 0, over: false });
    const v = costGate({ ...base, window_cap_usd: 10, spent_usd: 4.25 });
    expect(v.decision).toBe('refuse');
    expect(v.window.headroom_usd).toBe(-0.25);
    expect(v.reasons[0]).toBe(
      '4.25 USD spent in the window plus 6 USD is 10.25 USD, over the window cap of 10 USD',
    );
  });

  it('lists both reasons when both caps refuse', () => {
    const v = costGate({ ...base, per_job_cap_usd: 1, window_cap_usd: 1 });
    expect(v.reasons).toHaveLength(2);
  });

  it('keeps money to a millionth of a dollar', () => {
    expect(costGate({ ...base, gpu_hours: 1 / 3, hourly_usd: 1 }).cost_usd).toBe(0.333333);
  });
});
