import { NativeConnection, Worker, type WorkerOptions } from '@temporalio/worker';
import type { AppConfig } from '../core/config';
import { WORKFLOWS_PATH } from './workflow-bundle';

export interface CpuWorkerOptions {
  connection: NativeConnection;
  config: AppConfig;
  activities: object;
  /** The workflows to bundle in this process; tests may point at their own. */
  workflowsPath?: string;
  /** The workflows already bundled (workers-cpu bundles them in a child process: workflow-bundle.ts). */
  workflowBundle?: string;
}

/** The `cpu` task queue: every workflow, and the I/O and CPU activities. */
export function createCpuWorker({
  connection,
  config,
  activities,
  workflowsPath,
  workflowBundle,
}: CpuWorkerOptions): Promise<Worker> {
  const options: WorkerOptions = {
    connection,
    namespace: config.temporal.namespace,
    taskQueue: config.temporal.cpuTaskQueue,
    ...(workflowBundle !== undefined
      ? { workflowBundle: { code: workflowBundle } }
      : { workflowsPath: workflowsPath ?? WORKFLOWS_PATH }),
    activities,
    maxConcurrentActivityTaskExecutions: config.workers.cpuMaxConcurrentActivities,
    shutdownGraceTime: `${config.workers.shutdownGraceSeconds}s`,
  };
  return Worker.create(options);
}
