import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { createUserWithToken, startTestApi, type TestApi } from '../testkit/api';
import { createTestDatabase, type TestDatabase } from '../testkit/database';
import { localStackEnv, testConfig } from '../testkit/stack';

/** Readiness follows a real dependency: a MinIO of this test's own is started, then stopped. */

const freePort = () =>
  new Promise<number>((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });

let db: TestDatabase;
let minio: ChildProcess;
let api: TestApi;
let dataDir: string;

beforeAll(async () => {
  db = await createTestDatabase();
  const port = await freePort();
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'readyz-minio-'));
  minio = spawn(
    localStackEnv().STACK_MINIO_BIN!,
    ['server', dataDir, '--address', `127.0.0.1:${port}`, '--quiet'],
    {
      env: {
        ...process.env,
        MINIO_ROOT_USER: 'readyz',
        MINIO_ROOT_PASSWORD: 'readyz-secret-key',
        MINIO_BROWSER: 'off',
      },
      stdio: 'ignore',
    },
  );
  for (let i = 0; i < 120; i++) {
    const ok = await fetch(`http://127.0.0.1:${port}/minio/health/ready`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) break;
    await new Promise((r) => setTimeout(r, 250));
  }
  api = await startTestApi(
    testConfig({
      DATABASE_URL: db.url,
      APP_STORAGE__PORT: String(port),
      APP_STORAGE__ACCESS_KEY: 'readyz',
      APP_STORAGE__SECRET_KEY: 'readyz-secret-key',
    }),
  );
});
afterAll(async () => {
  minio?.kill('SIGKILL');
  await api?.close();
  await db?.drop();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

it('answers 200 while every dependency answers and 503 naming MinIO once it is stopped', async () => {
  const up = await api.call('GET', '/api/readyz');
  expect(up.status).toBe(200);
  expect(up.body.status).toBe('ready');

  minio.kill('SIGTERM');
  await new Promise((r) => minio.once('exit', r));

  const down = await api.call('GET', '/api/readyz');
  expect(down.status).toBe(503);
  expect(down.headers.get('content-type')).toMatch(/application\/problem\+json/);
  expect(down.body.failing).toEqual(['storage']);
  expect(down.body.detail).toMatch(/storage/);
  expect(down.body.checks.database.ok).toBe(true);
  expect(down.body.checks.temporal.ok).toBe(true);
  // Liveness does not depend on dependencies.
  expect((await api.call('GET', '/api/health')).status).toBe(200);
});

it('answers 503, not 500, when a route must start a workflow and Temporal does not answer', async () => {
  const port = await freePort(); // nothing listens there
  const noTemporal = await startTestApi(
    testConfig({ DATABASE_URL: db.url, APP_TEMPORAL__ADDRESS: `127.0.0.1:${port}` }),
  );
  try {
    const { token } = await createUserWithToken(noTemporal.deps, 'reviewer');
    const res = await noTemporal.call('POST', '/api/govern/control/seed', { token, body: {} });
    expect(res.status).toBe(503);
    expect(res.headers.get('content-type')).toMatch(/application\/problem\+json/);
    expect(res.body.detail).toMatch(/Temporal does not answer/);
  } finally {
    await noTemporal.close();
  }
});
