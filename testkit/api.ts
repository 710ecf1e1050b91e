import type { Server } from 'node:http';
import pino, { type Logger } from 'pino';
import type { AppConfig } from '../core/config';
import { createApp } from '../api/app';
import { closeAppDeps, createAppDeps, type AppDeps } from '../api/deps';
import type { DeclaredRoute } from '../api/http/route-group';
import { createTestDatabase, type TestDatabase } from './database';
import { testConfig } from './stack';

export interface TestApi {
  url: string;
  deps: AppDeps;
  routes: DeclaredRoute[];
  close(): Promise<void>;
  /** fetch against the API with an optional bearer token and JSON body. */
  call(
    method: string,
    path: string,
    opts?: { token?: string; body?: unknown; rawBody?: string },
  ): Promise<{ status: number; body: any; headers: Headers }>;
}

/** The real app on a free loopback port, with real dependencies built from `config`; silent unless given a logger. */
export async function startTestApi(
  config: AppConfig,
  logger: Logger = pino({ level: 'silent' }),
): Promise<TestApi> {
  const deps = await createAppDeps(config, logger);
  await deps.storage.ensureBuckets();
  const { app, routes } = createApp(deps);
  const server = await new Promise<Server>((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  const address = server.address();
  const url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  return {
    url,
    deps,
    routes,
    async close() {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
      await closeAppDeps(deps);
    },
    async call(method, path, opts = {}) {
      const headers: Record<string, string> = {};
      if (opts.token) headers.authorization = `Bearer ${opts.token}`;
      let body: string | undefined;
      if (opts.rawBody !== undefined || opts.body !== undefined) {
        headers['content-type'] = 'application/json';
        body = opts.rawBody ?? JSON.stringify(opts.body);
      }
      const res = await fetch(`${url}${path}`, { method, headers, body });
      const text = await res.text();
      let parsed: unknown = text;
      try {
        parsed = text ? JSON.parse(text) : undefined;
      } catch {
        // not JSON (metrics, SSE): keep the text
      }
      return { status: res.status, body: parsed, headers: res.headers };
    },
  };
}

let userSeq = 0;

/** A user of `role` created directly in the database, with a live bearer token for it. */
export async function createUserWithToken(
  deps: Pick<AppDeps, 'db' | 'tokens'>,
  role: 'annotator' | 'reviewer' | 'admin',
): Promise<{ userId: string; email: string; token: string }> {
  const email = `${role}-${process.pid}-${++userSeq}-${Date.now()}@example.org`;
  const user = await deps.db.user.create({ data: { email, name: `${role} ${userSeq}`, role } });
  const { token } = await deps.tokens.issue(user.id, user.tokenVersion);
  return { userId: user.id, email, token };
}

export interface ApiForFile {
  api: TestApi;
  db: TestDatabase;
  /** A live token per role, each for a user of its own. */
  token: Record<'annotator' | 'reviewer' | 'admin', string>;
}

/**
 * A fresh database and the real API on it for the calling test file, with a user and token per
 * role: created before the file's tests, dropped after them. Read its fields inside tests and hooks.
 * Silent unless given a logger (a captured one, to search the API's log).
 */
export function useApiForFile(env: Record<string, string> = {}, logger?: Logger): ApiForFile {
  const ctx = {} as ApiForFile;
  beforeAll(async () => {
    ctx.db = await createTestDatabase();
    ctx.api = await startTestApi(testConfig({ DATABASE_URL: ctx.db.url, ...env }), logger);
    const [annotator, reviewer, admin] = await Promise.all(
      (['annotator', 'reviewer', 'admin'] as const).map((r) => createUserWithToken(ctx.api.deps, r)),
    );
    ctx.token = { annotator: annotator!.token, reviewer: reviewer!.token, admin: admin!.token };
  });
  afterAll(async () => {
    await ctx.api?.close();
    await ctx.db?.drop();
  });
  return ctx;
}
