import { executeChild } from '@temporalio/workflow';
import type { QueuedChild } from '../activities/training/challenger';
import { exportWorkflow } from './export';
import { trainingWorkflow } from './training';

/**
 * The export and training jobs a parent workflow queued for a challenger (a campaign's iteration, a
 * flywheel run), run as its children under their own ids (activities/training/challenger.ts).
 */

export const exportAsChild = (job: QueuedChild, heartbeatTimeoutSeconds: number) =>
  executeChild(exportWorkflow, {
    workflowId: job.workflowId,
    args: [{ jobId: job.jobId, heartbeatTimeoutSeconds }],
  });

export const trainingAsChild = (
  job: QueuedChild,
  opts: { gpuTaskQueue: string; heartbeatTimeoutSeconds: number },
) =>
  executeChild(trainingWorkflow, {
    workflowId: job.workflowId,
    args: [{ jobId: job.jobId, ...opts, cloudSessionId: null }],
  });
