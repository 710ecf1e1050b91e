import http from 'node:http';
import path from 'node:path';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import { emitJobEvent } from '../activities/events/jobs';
import { ensureWebhookDispatcher } from '../activities/webhooks/dispatcher';
import { checkTarget, sendSigned } from '../activities/webhooks/send';
import { openSecret } from '../core/sealed';
import {
  retryDelaySeconds,
  WEBHOOK_DISPATCHER_ID,
  webhookDeliveryWorkflowId,
} from '../core/webhooks/delivery';
import { createExportableSession, startSessionExport } from '../testkit/exports';
import { startIngestStack, type IngestStack } from '../testkit/media/harness';
import { recordHistoryIfAsked, replayRecordedHistory } from '../testkit/temporal';
import { spawnWorkerProcess } from '../testkit/worker-process';
import { capturedLogger, expectSecretsKept } from './helpers/identity';

/**
 * Webhooks end to end (docs/webhooks.md): real events from the outbox, delivered by the dispatcher
 * that the cpu worker process starts, as `./platform start` runs it, to real receivers on
 * loopback that verify every delivery with the `standardwebhooks` library and refuse replays.
 */
const SETTINGS = {
  APP_WEBHOOKS__MAX_ATTEMPTS: '5',
  APP_WEBHOOKS__BACKOFF_BASE_SECONDS: '1',
  APP_WEBHOOKS__BACKOFF_FACTOR: '2',
  APP_WEBHOOKS__FAILURES_BEFORE_DISABLING: '2',
  APP_WEBHOOKS__POLL_SECONDS: '1',
  APP_WEBHOOKS__TIMEOUT_SECONDS: '5',
};
const DELIVERY_HISTORY = path.join(__dirname, 'histories/webhook-delivery.json');
const DISPATCHER_HISTORY = path.join(__dirname, 'histories/webhook-dispatcher.json');

let stack: IngestStack;
let worker: ReturnType<typeof spawnWorkerProcess>;
let adminId: string;
let reviewerId: string;
const receivers: Receiver[] = [];
/** The API's log, every response body read, and each signing secret: searched at the end. */
const logs = capturedLogger();
const responses: string[] = [];
const signingSecrets: string[] = [];

interface Received {
  id: string;
  timestamp: string;
  /** What the receiver answered: 204 taken, 400 not verified, 409 a replay, 500 told to fail. */
  answered: number;
  body: unknown;
  headers: Record<string, string>;
  raw: string;
}

/**
 * A webhook receiver as a customer would write one: verifies each request with the webhook's
 * secret by the `standardwebhooks` library (signature and a timestamp within 5 minutes), refuses a
 * message id it has already taken, and fails the next `failNext` verified requests with a 500.
 */
class Receiver {
  secret = '';
  failNext = 0;
  readonly received: Received[] = [];
  private readonly taken = new Set<string>();
  private server = http.createServer((req, res) => void this.handle(req, res));
  port = 0;

  get url() {
    return `http://127.0.0.1:${this.port}/hooks/drivelab`;
  }

  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(this.port, '127.0.0.1', resolve));
    this.port = (this.server.address() as { port: number }).port;
    return this;
  }

  /** Down: every connection refused until started again on the same port. */
  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
    this.server = http.createServer((req, res) => void this.handle(req, res));
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse) {
    let raw = '';
    for await (const chunk of req) raw += chunk;
    const headers = Object.fromEntries(
      Object.entries(req.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(',') : (v ?? '')]),
    );
    const answer = (status: number, body: unknown = null) => {
      this.received.push({
        id: headers['webhook-id'] ?? '',
        timestamp: headers['webhook-timestamp'] ?? '',
        answered: status,
        body,
        headers,
        raw,
      });
      res.writeHead(status, { 'content-type': 'text/plain' }).end(status >= 400 ? `refused (${status})` : '');
    };
    let body: unknown;
    try {
      body = new Webhook(this.secret).verify(raw, headers);
    } catch (err) {
      if (!(err instanceof WebhookVerificationError)) throw err;
      return answer(400);
    }
    const id = headers['webhook-id']!;
    if (this.taken.has(id)) return answer(409, body);
    if (this.failNext > 0) {
      this.failNext--;
      return answer(500, body);
    }
    this.taken.add(id);
    return answer(204, body);
  }
}

async function receiver(): Promise<Receiver> {
  const r = await new Receiver().start();
  receivers.push(r);
  return r;
}

const call = async (method: string, url: string, token: string | undefined, body?: unknown) => {
  const res = await stack.api.call(method, url, { token, body });
  responses.push(JSON.stringify(res.body));
  return res;
};

async function register(r: Receiver, kinds: string[]) {
  const res = await call('POST', '/api/integrations/webhooks', stack.admin, { url: r.url, kinds });
  if (res.status !== 201) throw new Error(`webhook: ${res.status} ${JSON.stringify(res.body)}`);
  r.secret = res.body.secret as string;
  signingSecrets.push(r.secret);
  return res.body as { id: string; secret: string };
}

/** Polls until `check` gives a value (not a timed assertion: the deadline only stops a hung test). */
async function until<T>(
  what: string,
  check: () => Promise<T | null | undefined | false>,
  seconds = 90,
): Promise<T> {
  const deadline = Date.now() + seconds * 1000;
  for (;;) {
    const found = await check();
    if (found) return found;
    if (Date.now() > deadline) throw new Error(`gave up waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

const deliveryOf = (webhookId: string, eventId: string) =>
  stack.api.deps.db.webhookDelivery.findUnique({ where: { webhookId_eventId: { webhookId, eventId } } });

const settled = (webhookId: string, eventId: string) =>
  until(`the delivery of ${eventId} to ${webhookId} to settle`, async () => {
    const d = await deliveryOf(webhookId, eventId);
    return d && d.status !== 'pending' ? d : null;
  });

let jobSeq = 0;
/** A job's end, emitted as the job activities emit it (activities/events/jobs.ts). */
function jobEnded(kind: 'job.completed' | 'job.failed') {
  const job = {
    kind: 'export' as const,
    id: `00000000-0000-4000-8000-${String(++jobSeq).padStart(12, '0')}`,
    startedBy: adminId,
  };
  return emitJobEvent(
    stack.api.deps.db,
    job,
    kind === 'job.completed' ? { kind, summary: { frames: 12 } } : { kind, reason: `disk full ${jobSeq}` },
  );
}

beforeAll(async () => {
  stack = await startIngestStack({ worker: false, env: SETTINGS, logger: logs.logger });
  adminId = (await call('GET', '/api/users/me', stack.admin)).body.id as string;
  reviewerId = (await call('GET', '/api/users/me', stack.reviewer)).body.id as string;
  // The worker as `./platform start` runs it: the process that starts the dispatcher.
  worker = spawnWorkerProcess('workers-cpu/main.ts', {
    DATABASE_URL: stack.db.url,
    APP_DATABASE__URL: stack.db.url,
    APP_TEMPORAL__ADDRESS: stack.env.address,
    ...SETTINGS,
  });
  await until('workers-cpu to poll', async () => /workers-cpu polling/.test(worker.output()), 200);
}, 240_000);

afterAll(async () => {
  worker?.proc.kill('SIGTERM');
  await worker?.exited;
  for (const r of receivers) await r.stop();
  await stack?.close();
});

describe('who may call', () => {
  const id = '00000000-0000-4000-8000-000000000000';
  it.each([
    ['GET', '/api/integrations/webhooks', 'reviewer'],
    ['POST', '/api/integrations/webhooks', 'reviewer'],
    ['DELETE', `/api/integrations/webhooks/${id}`, 'reviewer'],
  ] as const)('%s %s answers 401 without a token and 403 to a %s', async (method, url, below) => {
    const body = method === 'POST' ? { url: 'http://127.0.0.1:9/x', kinds: ['*'] } : undefined;
    expect((await call(method, url, undefined, body)).status).toBe(401);
    expect((await call(method, url, stack[below], body)).status).toBe(403);
  });

  it('lists the event catalogue to every signed-in role, webhook.disabled included', async () => {
    expect((await call('GET', '/api/integrations/events', undefined)).status).toBe(401);
    const res = await call('GET', '/api/integrations/events', stack.annotator);
    expect(res.status).toBe(200);
    expect(res.body.items).toContainEqual({
      kind: 'webhook.disabled',
      subject: 'webhook',
      description: expect.stringContaining('disabled'),
      payload: ['webhook_id', 'url', 'owner_id', 'consecutive_failures', 'last_error'],
      notifies: { users: ['owner_id'] },
      emitted_by: expect.stringContaining('attemptWebhookDelivery'),
    });
    expect(res.body.items.map((e: { kind: string }) => e.kind)).toContain('job.completed');
  });
});

describe('registration', () => {
  it('answers the whsec_ signing secret once, keeps it sealed, and never lists it', async () => {
    const r = await receiver();
    const hook = await register(r, ['job.completed']);
    expect(hook.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const listed = await call('GET', `/api/integrations/webhooks?webhook_id=${hook.id}`, stack.admin);
    expect(listed.body.items).toEqual([
      expect.objectContaining({
        id: hook.id,
        url: r.url,
        kinds: ['job.completed'],
        owner_id: adminId,
        enabled: true,
      }),
    ]);
    expect(JSON.stringify(listed.body)).not.toContain(hook.secret.slice(6));
    const row = await stack.api.deps.db.webhook.findUniqueOrThrow({ where: { id: hook.id } });
    expect(row.secretCipher).not.toContain(hook.secret.slice(6));
    expect(openSecret(stack.config.auth.sealingKey, row.secretCipher)).toBe(hook.secret);
  });

  it('refuses URLs, kinds and subscriptions by name', async () => {
    const cases: Array<[unknown, string, RegExp]> = [
      [{ url: 'ftp://127.0.0.1/x', kinds: ['*'] }, 'body.url', /uses ftp; only http and https/],
      [{ url: 'http://u:p@127.0.0.1/x', kinds: ['*'] }, 'body.url', /carries credentials/],
      [
        { url: 'http://127.0.0.1/x', kinds: ['job.exploded'] },
        'body.kinds.0',
        /unknown event kind "job.exploded"/,
      ],
      [{ url: 'http://127.0.0.1/x', kinds: ['*', 'job.failed'] }, 'body.kinds', /list it alone/],
      [{ url: 'http://127.0.0.1/x', kinds: [] }, 'body.kinds', /./],
    ];
    for (const [body, field, message] of cases) {
      const res = await call('POST', '/api/integrations/webhooks', stack.admin, body);
      expect(res.status).toBe(422);
      expect(res.body.errors).toContainEqual({ field, message: expect.stringMatching(message) });
    }
    const unresolvable = await call('POST', '/api/integrations/webhooks', stack.admin, {
      url: 'http://no-such-host.invalid/x',
      kinds: ['*'],
    });
    expect(unresolvable.status).toBe(422);
    expect(unresolvable.body.detail).toMatch(/^receiver refused: no-such-host\.invalid does not resolve/);
  });

  it('refuses loopback and private receivers where private targets are not allowed, at registration and at every connection', async () => {
    const r = await receiver();
    await expect(checkTarget(new URL('http://10.1.2.3/x'), false)).rejects.toThrow(
      /10\.1\.2\.3 is a private address/,
    );
    await expect(checkTarget(new URL(`http://localhost:${r.port}/x`), false)).rejects.toThrow(
      /is a loopback address/,
    );
    await expect(checkTarget(new URL(`http://localhost:${r.port}/x`), true)).resolves.toBeUndefined();
    // The name resolves to loopback at the moment of connecting: the lookup itself refuses it.
    for (const url of [
      `http://localhost:${r.port}/x`,
      `http://127.0.0.1:${r.port}/x`,
      `http://[::ffff:127.0.0.1]:${r.port}/x`,
    ]) {
      const sent = await sendSigned({
        url,
        messageId: 'msg_refused',
        body: '{}',
        secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
        timeoutMs: 2000,
        allowPrivate: false,
      });
      expect(sent).toEqual({
        status: null,
        error: expect.stringMatching(/^target refused: .* is a loopback address/),
      });
    }
    expect(r.received).toEqual([]);
  });
});

describe('delivery', () => {
  it('dispatches from the worker process, which started the one dispatcher; a second start leaves it', async () => {
    const handle = stack.env.client.workflow.getHandle(WEBHOOK_DISPATCHER_ID);
    const first = await until('the dispatcher', () => handle.describe().catch(() => null), 120);
    expect(first.status.name).toBe('RUNNING');
    await ensureWebhookDispatcher(stack.env.client, stack.config);
    const again = await handle.describe();
    expect({ status: again.status.name, runId: again.runId }).toEqual({
      status: 'RUNNING',
      runId: first.runId,
    });
  });

  it('delivers a real event, signed, to the webhooks subscribed to its kind only', async () => {
    const r = await receiver();
    const hook = await register(r, ['job.completed']);
    const other = await receiver();
    const failedOnly = await register(other, ['job.failed']);
    const event = await jobEnded('job.completed');
    const d = await settled(hook.id, event.id);
    expect(d).toMatchObject({
      status: 'delivered',
      attempts: 1,
      lastStatus: 204,
      lastError: null,
      nextAttemptAt: null,
    });
    expect(r.received).toEqual([
      expect.objectContaining({
        id: d.id,
        answered: 204,
        body: {
          type: 'job.completed',
          timestamp: event.createdAt.toISOString(),
          data: {
            event_id: event.id,
            subject_type: 'job',
            subject_id: event.subjectId,
            actor_id: null,
            payload: {
              job_kind: 'export',
              job_id: event.subjectId,
              started_by: adminId,
              summary: { frames: 12 },
            },
          },
        },
      }),
    ]);
    expect(await deliveryOf(failedOnly.id, event.id)).toBeNull();
    expect(other.received).toEqual([]);

    const log = await call('GET', `/api/integrations/webhooks?webhook_id=${hook.id}`, stack.admin);
    expect(log.body.items[0]).toMatchObject({
      delivery_counts: { pending: 0, delivered: 1, failed: 0, abandoned: 0 },
      deliveries: [
        {
          id: d.id,
          event_id: event.id,
          kind: 'job.completed',
          status: 'delivered',
          attempts: 1,
          last_status: 204,
          last_error: null,
          next_attempt_at: null,
        },
      ],
    });
  });

  it('replays the recorded history of the dispatcher, which has started deliveries by now', async () => {
    await recordHistoryIfAsked(DISPATCHER_HISTORY, () =>
      stack.env.client.workflow.getHandle(WEBHOOK_DISPATCHER_ID).fetchHistory(),
    );
    await expect(
      replayRecordedHistory(DISPATCHER_HISTORY, require.resolve('../workflows'), 'recorded'),
    ).resolves.toBeUndefined();
  });

  it('has receivers that verify: a replay, a stale timestamp, a changed body and another secret are refused', async () => {
    const r = await receiver();
    const hook = await register(r, ['job.completed']);
    const event = await jobEnded('job.completed');
    await settled(hook.id, event.id);
    const [taken] = r.received;
    const resend = (headers: Record<string, string>, body = taken!.raw) =>
      fetch(r.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body,
      }).then((res) => res.status);
    const signed = (secret: string, at: Date, body = taken!.raw) => ({
      'webhook-id': taken!.id,
      'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
      'webhook-signature': new Webhook(secret).sign(taken!.id, at, body),
    });
    const pick = (h: Record<string, string>) => ({
      'webhook-id': h['webhook-id']!,
      'webhook-timestamp': h['webhook-timestamp']!,
      'webhook-signature': h['webhook-signature']!,
    });
    expect(await resend(pick(taken!.headers))).toBe(409);
    expect(await resend(signed(hook.secret, new Date(Date.now() - 6 * 60_000)))).toBe(400);
    expect(await resend(pick(taken!.headers), taken!.raw.replace('"frames":12', '"frames":13'))).toBe(400);
    const stranger = await register(await receiver(), ['job.completed']);
    expect(await resend(signed(stranger.secret, new Date()))).toBe(400);
  });

  it('retries with backoff through an outage (receiver down, then failing) and then delivers', async () => {
    const r = await receiver();
    const hook = await register(r, ['*']);
    await r.stop();
    const event = await jobEnded('job.failed');
    const refused = await until('a refused attempt', async () => {
      const d = await deliveryOf(hook.id, event.id);
      return d && d.attempts >= 1 ? d : null;
    });
    expect(refused).toMatchObject({
      status: 'pending',
      lastStatus: null,
      lastError: expect.stringMatching(/ECONNREFUSED/),
    });
    expect(refused.nextAttemptAt!.getTime()).toBeGreaterThan(refused.updatedAt.getTime());
    // Back, but failing once more.
    r.failNext = 1;
    await r.start();
    const d = await settled(hook.id, event.id);
    expect(d).toMatchObject({ status: 'delivered', lastStatus: 204, lastError: null });
    // Every refused connection and the 500 were attempts; the same message id each time.
    const reached = r.received.map((x) => [x.id, x.answered]);
    expect(reached).toEqual([
      [d.id, 500],
      [d.id, 204],
    ]);
    expect(d.attempts).toBeGreaterThanOrEqual(3);

    // The waits between attempts were the workflow's durable timers, growing as configured.
    const handle = stack.env.client.workflow.getHandle(webhookDeliveryWorkflowId(d.id));
    expect(await handle.result()).toEqual({ status: 'delivered', attempt: d.attempts });
    const history = await handle.fetchHistory();
    const timers = (history.events ?? []).flatMap((e) => {
      const t = e.timerStartedEventAttributes?.startToFireTimeout;
      return t ? [Number(t.seconds ?? 0)] : [];
    });
    const settings = stack.config.webhooks;
    expect(timers).toEqual(
      Array.from({ length: d.attempts - 1 }, (_, i) => retryDelaySeconds(i + 1, settings)),
    );
    expect(timers).toEqual([1, 2, 4, 8].slice(0, d.attempts - 1));
    await recordHistoryIfAsked(DELIVERY_HISTORY, () => handle.fetchHistory());
    await expect(
      replayRecordedHistory(DELIVERY_HISTORY, require.resolve('../workflows'), 'recorded'),
    ).resolves.toBeUndefined();
  });

  it('disables a receiver that keeps failing, abandons what it had pending and tells its owner', async () => {
    const r = await receiver();
    r.failNext = Number.POSITIVE_INFINITY;
    const hook = await register(r, ['job.failed']);
    const events = [await jobEnded('job.failed'), await jobEnded('job.failed')];
    // A third, well behind the first two: still waiting for a later attempt when they fail for good.
    await until('the first two deliveries at their fourth attempt', async () => {
      const ds = await Promise.all(events.map((e) => deliveryOf(hook.id, e.id)));
      return ds.every((d) => d && d.attempts >= 4);
    });
    const behind = await jobEnded('job.failed');
    const failed = await Promise.all(events.map((e) => settled(hook.id, e.id)));
    for (const d of failed) {
      expect(d).toMatchObject({ status: 'failed', attempts: 5, lastStatus: 500 });
      expect(r.received.filter((x) => x.id === d.id).map((x) => x.answered)).toEqual([
        500, 500, 500, 500, 500,
      ]);
    }
    const abandoned = await settled(hook.id, behind.id);
    expect(abandoned).toMatchObject({
      status: 'abandoned',
      lastError: 'the webhook was disabled',
      nextAttemptAt: null,
    });
    expect(abandoned.attempts).toBeLessThan(5);
    expect(
      await stack.env.client.workflow.getHandle(webhookDeliveryWorkflowId(abandoned.id)).result(),
    ).toEqual({
      status: 'abandoned',
      attempt: abandoned.attempts,
    });

    const row = await stack.api.deps.db.webhook.findUniqueOrThrow({ where: { id: hook.id } });
    expect(row).toMatchObject({ enabled: false, consecutiveFailures: 2 });
    expect(row.disabledReason).toMatch(
      /^2 deliveries in a row failed every attempt; last error: HTTP 500: refused \(500\)/,
    );
    const disabled = await stack.api.deps.db.platformEvent.findFirstOrThrow({
      where: { kind: 'webhook.disabled', subjectId: hook.id },
    });
    expect(disabled.payload).toMatchObject({
      webhook_id: hook.id,
      url: r.url,
      owner_id: adminId,
      consecutive_failures: 2,
    });
    const told = await stack.api.deps.db.notification.findMany({ where: { kind: 'webhook.disabled' } });
    expect(told).toEqual([
      expect.objectContaining({
        userId: adminId,
        title: `Your webhook to ${r.url} was disabled after repeated failures`,
        body: expect.objectContaining({ event_id: disabled.id, subject_id: hook.id }),
      }),
    ]);
    const listed = await call('GET', `/api/integrations/webhooks?webhook_id=${hook.id}`, stack.admin);
    expect(listed.body.items[0]).toMatchObject({
      enabled: false,
      disabled_at: expect.any(String),
      consecutive_failures: 2,
      delivery_counts: { pending: 0, delivered: 0, failed: 2, abandoned: 1 },
    });
    // Disabled: a later event is not queued for it.
    const later = await jobEnded('job.failed');
    expect(await deliveryOf(hook.id, later.id)).toBeNull();
  });

  it('delivers the signed job.completed of a real export when the job ends', async () => {
    const r = await receiver();
    const hook = await register(r, ['job.completed']);
    const { sessionId } = await createExportableSession(stack.api.deps, 1);
    const started = await startSessionExport(stack.api, stack.reviewer, sessionId, 'webhooked');
    // The worker process runs the export; its last step commits it and emits the job's end.
    await stack.env.client.workflow.getHandle(started.workflow_id).result();
    const job = await stack.api.deps.db.exportJob.findUniqueOrThrow({ where: { id: started.job_id } });
    expect(job).toMatchObject({ state: 'succeeded', commitId: expect.any(String) });
    const event = await stack.api.deps.db.platformEvent.findFirstOrThrow({
      where: { kind: 'job.completed', subjectId: job.id },
    });
    const d = await settled(hook.id, event.id);
    expect(d).toMatchObject({ status: 'delivered', attempts: 1, lastStatus: 204 });
    // Answered 204: the receiver verified the signature with the webhook's secret.
    expect(r.received).toEqual([
      expect.objectContaining({
        id: d.id,
        answered: 204,
        headers: expect.objectContaining({ 'webhook-signature': expect.stringMatching(/^v1,/) }),
        body: {
          type: 'job.completed',
          timestamp: event.createdAt.toISOString(),
          data: {
            event_id: event.id,
            subject_type: 'job',
            subject_id: job.id,
            actor_id: null,
            payload: {
              job_kind: 'export',
              job_id: job.id,
              started_by: reviewerId,
              summary: { commit_id: job.commitId, name: 'webhooked', version: 1 },
            },
          },
        },
      }),
    ]);
  });

  it('ends a delivery whose webhook is deleted while it waits for its next attempt', async () => {
    const r = await receiver();
    r.failNext = Number.POSITIVE_INFINITY;
    const hook = await register(r, ['job.completed']);
    const event = await jobEnded('job.completed');
    const first = await until('a first failed attempt', async () => {
      const d = await deliveryOf(hook.id, event.id);
      return d && d.attempts >= 1 ? d : null;
    });
    const res = await call('DELETE', `/api/integrations/webhooks/${hook.id}`, stack.admin);
    expect(res).toMatchObject({ status: 200, body: { id: hook.id, deleted: true } });
    expect((await call('DELETE', `/api/integrations/webhooks/${hook.id}`, stack.admin)).status).toBe(404);
    const outcome = await stack.env.client.workflow.getHandle(webhookDeliveryWorkflowId(first.id)).result();
    expect(outcome).toMatchObject({ status: 'gone' });
    expect(await deliveryOf(hook.id, event.id)).toBeNull();
  });
});

describe('after all of the above', () => {
  it('kept every signing secret out of the API log, the worker log, and any response but its registration', () => {
    expect(logs.text()).toMatch(/"url":"\/api\/integrations\/webhooks"/);
    // The worker signs every delivery with its webhook's secret, so its log is searched too.
    expect(worker.output()).toMatch(/workers-cpu polling/);
    expectSecretsKept(logs.text() + worker.output(), responses, { never: [], shownOnce: signingSecrets });
  });
});
