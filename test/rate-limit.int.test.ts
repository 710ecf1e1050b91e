import { createUserWithToken } from '../testkit/api';
import { databaseAccess, startApiProcess, type ApiProcess } from '../testkit/api-process';
import { createTestDatabase, type TestDatabase } from '../testkit/database';

/**
 * Two API processes share one budget through PostgreSQL (spec Authentication 8): with a login
 * budget of 4 the fifth attempt is refused whichever process it reaches, and likewise the sixth
 * authenticated request with an API budget of 5.
 */

const BUDGETS = {
  APP_RATE_LIMIT__LOGIN_MAX: '4',
  APP_RATE_LIMIT__LOGIN_WINDOW_SECONDS: '600',
  APP_RATE_LIMIT__API_MAX: '5',
  APP_RATE_LIMIT__API_WINDOW_SECONDS: '600',
};

let db: TestDatabase;
let apis: ApiProcess[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
  apis = await Promise.all([startApiProcess(db.url, BUDGETS), startApiProcess(db.url, BUDGETS)]);
}, 120_000);
afterAll(async () => {
  await Promise.all(apis.map((api) => api.stop()));
  await db?.drop();
});

const attempt = (url: string) =>
  fetch(`${url}/api/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: 'someone@example.org', password: 'guess guess guess' }),
  });

it('spends one login budget across both processes', async () => {
  const [a, b] = apis;
  const statuses = [];
  for (const url of [a!.url, b!.url, a!.url, b!.url]) statuses.push((await attempt(url)).status);
  expect(statuses).toEqual([401, 401, 401, 401]);
  // A memory-only limiter would allow each process 4 attempts; the shared one refuses the 5th.
  const fifth = await attempt(a!.url);
  expect(fifth.status).toBe(429);
  expect(Number(fifth.headers.get('retry-after'))).toBeGreaterThan(0);
  expect((await attempt(b!.url)).status).toBe(429);
});

it('spends one API budget per user across both processes', async () => {
  const access = databaseAccess(db.url);
  const { token } = await createUserWithToken(access, 'annotator').finally(() => access.close());
  const me = (url: string) => fetch(`${url}/api/users/me`, { headers: { authorization: `Bearer ${token}` } });
  const [a, b] = apis;
  const statuses = [];
  for (const url of [a!.url, b!.url, a!.url, b!.url, a!.url, b!.url]) statuses.push((await me(url)).status);
  expect(statuses).toEqual([200, 200, 200, 200, 200, 429]);
});

it('shuts down cleanly on SIGTERM', async () => {
  const extra = await startApiProcess(db.url, BUDGETS);
  expect(await extra.stop()).toBe(0);
});
