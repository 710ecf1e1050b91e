import pino from 'pino';
import { loadConfig } from '../core/config';
import { startCpuWorkerProcess } from './process';

/** workers-cpu: polls task queue `cpu` until SIGINT/SIGTERM, then drains and exits (the SDK's Runtime handles the signals). */
async function main(): Promise<void> {
  const config = loadConfig(process.env);
  const logger = pino({ level: config.log.level, name: 'workers-cpu' });
  await (await startCpuWorkerProcess(config, logger)).run();
}

main().catch((err: unknown) => {
  console.error('workers-cpu failed:', err);
  process.exit(1);
});
