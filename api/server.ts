import type { Server } from 'node:http';
import pino from 'pino';
import { ConfigError, loadConfig, type AppConfig } from '../core/config';
import { createApp } from './app';
import { closeAppDeps, createAppDeps, type AppDeps } from './deps';

export interface RunningApi {
  server: Server;
  deps: AppDeps;
  url: string;
  close(): Promise<void>;
}

/** Starts the API on config.http; used by the binary below and by tests that need a real process. */
export async function startApi(
  config: AppConfig,
  logger = pino({ level: config.log.level }),
): Promise<RunningApi> {
  const deps = await createAppDeps(config, logger);
  try {
    await deps.storage.ensureBuckets();
  } catch (err) {
    // MinIO may come up after the API; readiness reports it until then.
    logger.warn({ err }, 'could not ensure buckets at start; /api/readyz will report storage');
  }
  const { app } = createApp(deps);
  const server = await new Promise<Server>((resolve, reject) => {
    const s = app.listen(config.http.port, config.http.host, () => resolve(s));
    s.once('error', reject);
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : config.http.port;
  const url = config.http.publicUrl ?? `http://${config.http.host}:${port}`;
  return {
    server,
    deps,
    url,
    async close() {
      // SSE streams never end by themselves: close idle and streaming sockets after in-flight requests.
      server.closeIdleConnections();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      setTimeout(() => server.closeAllConnections(), 2000).unref();
      await closed;
      await closeAppDeps(deps);
    },
  };
}

async function main(): Promise<void> {
  let config: AppConfig;
  try {
    config = loadConfig(process.env);
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(`api: ${err.message}`);
      process.exit(78); // EX_CONFIG
    }
    throw err;
  }
  const logger = pino({ level: config.log.level });
  const api = await startApi(config, logger);
  logger.info({ url: api.url, env: config.env }, `API listening on ${api.url}`);
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    api.close().then(
      () => process.exit(0),
      (err: unknown) => {
        logger.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

if (require.main === module) {
  main().catch((err: unknown) => {
    console.error('api: failed to start:', err);
    process.exit(1);
  });
}
