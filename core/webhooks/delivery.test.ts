import { ConfigSchema } from '../config';
import {
  afterFailure,
  deliveryBody,
  disablesWebhook,
  isDelivered,
  isSettled,
  retryDelaySeconds,
} from './delivery';

const defaults = ConfigSchema.parse({}).webhooks;

describe('retries', () => {
  it('waits min(base × factor^(n−1), max) after failed attempt n', () => {
    expect([1, 2, 3, 4, 5, 6, 7].map((n) => retryDelaySeconds(n, defaults))).toEqual([
      5, 20, 80, 320, 1280, 5120, 20480,
    ]);
    expect(retryDelaySeconds(9, defaults)).toBe(6 * 3600);
  });

  it('gives a delivery up after its last attempt, and only then', () => {
    const s = { ...defaults, maxAttempts: 3, backoffBaseSeconds: 1, backoffFactor: 2 };
    expect(afterFailure(1, s)).toEqual({ status: 'pending', retryInSeconds: 1 });
    expect(afterFailure(2, s)).toEqual({ status: 'pending', retryInSeconds: 2 });
    expect(afterFailure(3, s)).toEqual({ status: 'failed' });
  });

  it('disables a webhook at failuresBeforeDisabling deliveries failed in a row', () => {
    expect(disablesWebhook(defaults.failuresBeforeDisabling - 1, defaults)).toBe(false);
    expect(disablesWebhook(defaults.failuresBeforeDisabling, defaults)).toBe(true);
  });

  it('counts a 2xx as delivered and nothing else, redirects included', () => {
    expect([200, 202, 204, 299].map(isDelivered)).toEqual([true, true, true, true]);
    expect([199, 301, 302, 400, 410, 500].map(isDelivered)).toEqual([
      false,
      false,
      false,
      false,
      false,
      false,
    ]);
  });

  it('tells settled deliveries from pending ones', () => {
    expect(['delivered', 'failed', 'abandoned'].map(isSettled)).toEqual([true, true, true]);
    expect(['pending', 'sent', ''].map(isSettled)).toEqual([false, false, false]);
  });
});

describe('deliveryBody', () => {
  it('is the Standard Webhooks payload shape with the event in data', () => {
    const body = deliveryBody({
      id: 'e1',
      kind: 'job.completed',
      subjectType: 'job',
      subjectId: 'j1',
      actorId: null,
      payload: { job_kind: 'ingest', job_id: 'j1' },
      createdAt: new Date('2026-01-02T03:04:05.000Z'),
    });
    expect(JSON.parse(body)).toEqual({
      type: 'job.completed',
      timestamp: '2026-01-02T03:04:05.000Z',
      data: {
        event_id: 'e1',
        subject_type: 'job',
        subject_id: 'j1',
        actor_id: null,
        payload: { job_kind: 'ingest', job_id: 'j1' },
      },
    });
  });
});
