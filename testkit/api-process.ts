import type { Db } from '../activities/db';
import { createDb } from '../activities/db';
import { createTokenIssuer, type TokenIssuer } from '../api/auth/tokens';
import { testConfig } from './stack';
import { spawnEntryProcess } from './worker-process';

/**
 * The API as production runs it: `api/server.ts` in an OS process of its own, for what must hold
 * across processes (rate limits, in-flight MFA sign-ins) and for its shutdown. Two such processes
 * share nothing but the database and the stack, as two replicas behind a load balancer do.
 */
export interface ApiProcess {
  url: string;
  /** Everything the process wrote so far: its pino log, one JSON line per entry. */
  output(): string;
  /** SIGTERM, then its exit code (or signal) once it has exited. */
  stop(): Promise<NodeJS.Signals | number | null>;
}

/** The start line of api/server.ts, which names the port the system gave it. */
const LISTENING = /"msg":"API listening on (http:\/\/[^"]+)"/;

/**
 * Starts the API on `databaseUrl` on a free loopback port and resolves once it answers
 * `/api/health`; `env` adds or overrides APP_* variables. The port is read from the start line,
 * so the log level must be `info` or more verbose (the default).
 */
export async function startApiProcess(
  databaseUrl: string,
  env: Record<string, string> = {},
): Promise<ApiProcess> {
  const child = spawnEntryProcess('api/server.ts', {
    DATABASE_URL: databaseUrl,
    APP_DATABASE__URL: databaseUrl,
    APP_HTTP__HOST: '127.0.0.1',
    APP_HTTP__PORT: '0',
    ...env,
  });
  let exitedAs: NodeJS.Signals | number | null | undefined;
  void child.exited.then((end) => (exitedAs = end));
  const stop = async () => {
    if (exitedAs === undefined) child.proc.kill('SIGTERM');
    return child.exited;
  };
  // Not a timed assertion: the deadline only ends a start that hangs (tsx compiles the app first).
  const deadline = Date.now() + 90_000;
  for (;;) {
    const url = LISTENING.exec(child.output())?.[1];
    if (
      url &&
      (await fetch(`${url}/api/health`).then(
        (r) => r.ok,
        () => false,
      ))
    )
      return { url, output: child.output, stop };
    if (exitedAs !== undefined || Date.now() > deadline) {
      await stop();
      throw new Error(`api/server.ts did not start (exit ${String(exitedAs)}):\n${child.output()}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * What a test beside API processes needs to seed and read their database: a client of it, and a
 * token issuer with the signing key every test process uses (testConfig's), so a token it issues
 * is valid in each of them.
 */
export function databaseAccess(databaseUrl: string): { db: Db; tokens: TokenIssuer; close(): Promise<void> } {
  const { auth } = testConfig({ DATABASE_URL: databaseUrl });
  const db = createDb(databaseUrl);
  return {
    db,
    tokens: createTokenIssuer({
      secret: auth.tokenSecret,
      issuer: auth.issuer,
      ttlHours: auth.tokenTtlHours,
      mediaTtlMinutes: auth.mediaTokenTtlMinutes,
    }),
    close: () => db.$disconnect(),
  };
}
