import { NativeConnection, Worker, type WorkerOptions } from '@temporalio/worker';
import type { AppConfig } from '../core/config';

export interface CpuWorkerOptions {
  connection: NativeConnection;
  config: AppConfig;
  activities: object;
  /** The bundled workflows; tests may point at their own. */
  workflowsPath?: string;
}

/** The `cpu` task queue: every workflow, and the I/O and CPU activities. */
export function createCpuWorker({
  connection,
  config,
  activities,
  workflowsPath,
}: CpuWorkerOptions): Promise<Worker> {
  const options: WorkerOptions = {
    connection,
    namespace: config.temporal.namespace,
    taskQueue: config.temporal.cpuTaskQueue,
    workflowsPath: workflowsPath ?? require.resolve('../workflows'),
    activities,
    maxConcurrentActivityTaskExecutions: config.workers.cpuMaxConcurrentActivities,
    shutdownGraceTime: `${config.workers.shutdownGraceSeconds}s`,
  };
  return Worker.create(options);
}
