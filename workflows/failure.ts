import { CancellationScope } from '@temporalio/workflow';

/**
 * Runs a workflow's work; when it fails, records why through `report` (an activity: the job row,
 * the event stream, the audit) even if the workflow is being cancelled, then fails the workflow
 * with the original error. The reason is the failing step's own message, which an activity
 * failure wraps as its cause.
 */
export async function reportingFailure<T>(
  work: () => Promise<T>,
  report: (error: string) => Promise<void>,
): Promise<T> {
  try {
    return await work();
  } catch (err) {
    const failure = err as Error & { cause?: Error };
    const error = failure.cause?.message ?? failure.message ?? String(err);
    await CancellationScope.nonCancellable(() => report(error));
    throw err;
  }
}
