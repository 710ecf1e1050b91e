import { patched, proxyActivities, type RetryPolicy } from '@temporalio/workflow';
import { reportingFailure } from './failure';
import { WAIT_FOR_STEP_ON_CANCEL } from './stop-cleanly';
import type { CpuActivities } from '../activities';
import type { IngestResult, IngestWorkflowInput } from '../activities/ingest/types';

/**
 * IngestWorkflow (`ingest-<session_id>`): one drive in, clean redacted frames out, health scored.
 * Each step is one activity named as the business step, so the Temporal history reads as the
 * ingest did; heartbeats let a step that lost its worker be retried on another within seconds.
 */
/** The drive itself is the problem, or a model is absent: retrying cannot help. */
const retry: RetryPolicy = {
  initialInterval: '1 second',
  maximumInterval: '30 seconds',
  maximumAttempts: 6,
  nonRetryableErrorTypes: ['DriveRefused', 'ModelUnavailable'],
};

const quick = proxyActivities<CpuActivities>({
  ...WAIT_FOR_STEP_ON_CANCEL,
  startToCloseTimeout: '5 minutes',
  retry,
});
/** Steps that walk every frame: long, so they heartbeat. */
const long = proxyActivities<CpuActivities>({
  ...WAIT_FOR_STEP_ON_CANCEL,
  startToCloseTimeout: '6 hours',
  heartbeatTimeout: '15 seconds',
  retry,
});

/**
 * Marks histories that may copy a source object first: recorded before that step existed, a
 * history replays without it (docs/ingest.md "From a registered source").
 */
const SOURCE_COPY_PATCH = 'ingest-copies-source-object';

export async function ingestWorkflow(input: IngestWorkflowInput): Promise<IngestResult> {
  const { sessionId, jobId } = input;
  return reportingFailure(
    async () => {
      // A registered source's object is copied into the platform's store first (hashed on the way).
      if (input.sourceObject && patched(SOURCE_COPY_PATCH)) await long.copySourceObject(input);
      // A server path is hashed in this step (every byte read), so it heartbeats like the long ones.
      const probe = await long.probeDrive(input);
      await long.extractFrames({ ...input, probe });
      const { rejected } = await quick.gateFrameQuality({ sessionId, jobId });
      const { duplicates } = await quick.dropNearDuplicates({ sessionId, jobId });
      const { frames } = await quick.registerFrames({ sessionId, jobId });
      const { redacted } = await long.redactPii({ sessionId, jobId });
      const health = await quick.inspectSessionHealth(sessionId);
      await quick.completeIngest({ sessionId, jobId, health });
      return { sessionId, frames, duplicates, rejected, redacted, health };
    },
    (error) => quick.failIngest({ sessionId, jobId, error }),
  );
}
