import pino from 'pino';
import { loadConfig } from '../core/config';
import { startGpuWorkerProcess } from './process';

/** workers-gpu: the single slot of task queue `gpu` for device APP_WORKERS__GPU_DEVICE (default 0). */
async function main(): Promise<void> {
  const config = loadConfig(process.env);
  const logger = pino({ level: config.log.level, name: 'workers-gpu' });
  await (await startGpuWorkerProcess(config, logger)).run();
}

main().catch((err: unknown) => {
  console.error(`workers-gpu failed: ${(err as Error).message}`);
  process.exit(1);
});
