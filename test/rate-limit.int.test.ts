import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { createTokenIssuer } from '../api/auth/tokens';
import { createDb } from '../activities/db';
import { createTestDatabase, type TestDatabase } from '../testkit/database';
import { REPO_ROOT, localStackEnv, testConfig } from '../testkit/stack';

/**
 * Two API processes share one budget through PostgreSQL (spec Authentication 8): with a login
 * budget of 4 the fifth attempt is refused whichever process it reaches, and likewise the sixth
 * authenticated request with an API budget of 5.
 */

let db: TestDatabase;
const apis: Array<{ proc: ChildProcess; url: string }> = [];

async function startApiProcess(port: number): Promise<{ proc: ChildProcess; url: string }> {
  const proc = spawn(
    process.execPath,
    [path.join(REPO_ROOT, 'node_modules/tsx/dist/cli.mjs'), path.join(REPO_ROOT, 'api/server.ts')],
    {
      env: {
        ...process.env,
        ...localStackEnv(),
        DATABASE_URL: db.url,
        APP_ENV: 'test',
        APP_HTTP__PORT: String(port),
        APP_LOG__LEVEL: 'warn',
        APP_RATE_LIMIT__LOGIN_MAX: '4',
        APP_RATE_LIMIT__LOGIN_WINDOW_SECONDS: '600',
        APP_RATE_LIMIT__API_MAX: '5',
        APP_RATE_LIMIT__API_WINDOW_SECONDS: '600',
      },
      stdio: ['ignore', 'ignore', 'inherit'],
    },
  );
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 160; i++) {
    if (
      await fetch(`${url}/api/health`).then(
        (r) => r.ok,
        () => false,
      )
    )
      return { proc, url };
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`API on port ${port} did not start`);
}

beforeAll(async () => {
  db = await createTestDatabase();
  apis.push(await startApiProcess(18181), await startApiProcess(18182));
}, 90_000);
afterAll(async () => {
  for (const { proc } of apis) proc.kill('SIGTERM');
  await Promise.all(
    apis.map(({ proc }) => new Promise((r) => (proc.exitCode === null ? proc.once('exit', r) : r(null)))),
  );
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
  const db2 = createDb(db.url);
  const user = await db2.user.create({
    data: { email: 'busy@example.org', name: 'Busy', role: 'annotator' },
  });
  await db2.$disconnect();
  // Both processes run with the default test signing key, so a token minted here is valid in each.
  const auth = testConfig().auth;
  const { token } = await createTokenIssuer({
    secret: auth.tokenSecret,
    issuer: auth.issuer,
    ttlHours: 1,
  }).issue(user.id, user.tokenVersion);
  const me = (url: string) => fetch(`${url}/api/users/me`, { headers: { authorization: `Bearer ${token}` } });
  const [a, b] = apis;
  const statuses = [];
  for (const url of [a!.url, b!.url, a!.url, b!.url, a!.url, b!.url]) statuses.push((await me(url)).status);
  expect(statuses).toEqual([200, 200, 200, 200, 200, 429]);
});

it('shuts down cleanly on SIGTERM', async () => {
  const extra = await startApiProcess(18183);
  extra.proc.kill('SIGTERM');
  const code = await new Promise((r) => extra.proc.once('exit', r));
  expect(code).toBe(0);
});
