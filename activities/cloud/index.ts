import type { ActivityDeps } from '../deps';

export interface CloudTrainingInput {
  jobId: string;
  cloudSessionId: string;
}

/** What a cloud training run hands back: the trained file, stored in the models bucket. */
export interface CloudTrainingResult {
  modelKey: string;
  sha256: string;
  sizeBytes: number;
  metrics: Record<string, unknown>;
}

/** Cloud GPU activities of the `cpu` queue (stub: being built for issue 15). */
export function createCloudActivities(deps: ActivityDeps) {
  void deps;
  return {
    /** Submits a parked (`queued-cloud`) training job to the cloud provider and follows it to its end, heartbeating. */
    async runCloudTraining(input: CloudTrainingInput): Promise<CloudTrainingResult> {
      return Promise.reject(new Error(`cloud training of job ${input.jobId} is being built (issue 15)`));
    },
  };
}
