import { proxyActivities } from '@temporalio/workflow';
import type { GpuActivities } from '../activities';
import type { ModelCheck, ModelRole } from '../activities/detect/inference-runtime';

export interface InferenceCheckInput {
  models: ModelRole[];
  /** The gpu task queue's name (config temporal.gpuTaskQueue). */
  gpuTaskQueue: string;
}

/**
 * Checks that the GPU worker can load and run each model, one after the other in the single GPU
 * slot. Operators start it after deploying a worker or a model (`inference-check-<timestamp>`).
 */
export async function inferenceCheckWorkflow(input: InferenceCheckInput): Promise<ModelCheck[]> {
  const { checkInferenceModel } = proxyActivities<GpuActivities>({
    taskQueue: input.gpuTaskQueue,
    startToCloseTimeout: '2 minutes',
    retry: { maximumAttempts: 3 },
  });
  const results: ModelCheck[] = [];
  for (const role of input.models) results.push(await checkInferenceModel(role));
  return results;
}
