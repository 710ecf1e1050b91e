import pino from 'pino';
import { createEventHub, type EventHub } from '../runtime/event-hub';
import { createUserWithToken, startTestApi, type TestApi } from '../testkit/api';
import { createTestDatabase, type TestDatabase } from '../testkit/database';
import { testConfig } from '../testkit/stack';

/** The system stream: heartbeats, and events published by another process reach every subscriber. */

let db: TestDatabase;
let api: TestApi;
let otherProcessHub: EventHub;

beforeAll(async () => {
  db = await createTestDatabase();
  api = await startTestApi(testConfig({ DATABASE_URL: db.url, APP_EVENTS__HEARTBEAT_SECONDS: '0.2' }));
  // A second hub on its own connections stands in for another API process or a worker.
  otherProcessHub = await createEventHub(db.url, pino({ level: 'silent' }));
});
afterAll(async () => {
  await otherProcessHub?.close();
  await api?.close();
  await db?.drop();
});

async function readEvents(res: Response, until: (text: string) => boolean): Promise<string> {
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  while (!until(text)) {
    const { value, done } = await reader.read();
    if (done) break;
    text += decoder.decode(value);
  }
  await reader.cancel();
  return text;
}

it('sends heartbeats and relays events published by another process', async () => {
  const { token } = await createUserWithToken(api.deps, 'annotator');
  const res = await fetch(`${api.url}/api/events/system`, { headers: { authorization: `Bearer ${token}` } });
  expect(res.status).toBe(200);
  // A jobs-stream event first: it must not leak into the system stream that is read below.
  const published = new Promise<void>((resolve) =>
    setTimeout(async () => {
      await otherProcessHub.publish('jobs', 'job.progress', { job: 'x' });
      await otherProcessHub.publish('system', 'maintenance.scheduled', { window: 'tonight' });
      resolve();
    }, 300),
  );
  const text = await readEvents(
    res,
    (t) => t.includes('maintenance.scheduled') && (t.match(/event: heartbeat/g) ?? []).length >= 2,
  );
  await published;
  expect(text).toMatch(/^retry: 5000/);
  expect(text).toMatch(/event: ready\ndata: \{"stream":"system"/);
  expect(text).toMatch(/event: maintenance\.scheduled\ndata: \{"window":"tonight","at":"/);
  expect(text).not.toContain('job.progress');
});

it('keeps a sane caller request id and returns it in the header and problem body', async () => {
  const res = await fetch(`${api.url}/api/users/me`, { headers: { 'x-request-id': 'trace-abc.123' } });
  expect(res.status).toBe(401);
  expect(res.headers.get('x-request-id')).toBe('trace-abc.123');
  expect(((await res.json()) as { request_id: string }).request_id).toBe('trace-abc.123');
  const hostile = await fetch(`${api.url}/api/users/me`, { headers: { 'x-request-id': 'a b<script>' } });
  expect(hostile.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
});
