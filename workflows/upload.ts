import { proxyActivities } from '@temporalio/workflow';
import { reportingFailure } from './failure';
import type { CpuActivities } from '../activities';
import type { UploadHashInput } from '../activities/upload';

/**
 * UploadHashWorkflow (`upload-<upload_id>`): hashes an assembled upload off the request that
 * completed it (docs/ingest.md). One heartbeating activity, so a worker lost mid-read is replaced
 * within seconds; when it gives up, the jobs stream hears `upload.failed` and the upload stays
 * `hashing` (repeating `POST /api/upload/complete` starts it again).
 */
const hashing = proxyActivities<CpuActivities>({
  startToCloseTimeout: '6 hours',
  heartbeatTimeout: '30 seconds',
  retry: {
    initialInterval: '1 second',
    maximumInterval: '30 seconds',
    maximumAttempts: 6,
    nonRetryableErrorTypes: ['UploadRefused'],
  },
});
const notice = proxyActivities<CpuActivities>({ startToCloseTimeout: '1 minute' });

export async function uploadHashWorkflow(input: UploadHashInput): Promise<{ sha256: string; size: number }> {
  return reportingFailure(
    () => hashing.hashUpload(input),
    (error) => notice.failUploadHash({ ...input, error }),
  );
}
