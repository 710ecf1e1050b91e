import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import type { Response } from 'express';
import { ConflictError } from '../../core/errors';
import type { AppDeps } from '../deps';

/**
 * Starts a workflow under its business id and answers 202 with a Location to watch; Temporal
 * refuses a second start of a running id, which answers 409.
 */
export async function startWorkflow<A extends unknown[]>(
  deps: AppDeps,
  res: Response,
  opts: { workflowType: string; workflowId: string; args: A; location: string; what: string },
): Promise<{ workflow_id: string; run_id: string; status_url: string }> {
  try {
    const handle = await deps.temporal.client.workflow.start(opts.workflowType, {
      taskQueue: deps.config.temporal.cpuTaskQueue,
      workflowId: opts.workflowId,
      args: opts.args,
    });
    res.status(202).location(opts.location);
    return { workflow_id: handle.workflowId, run_id: handle.firstExecutionRunId, status_url: opts.location };
  } catch (err) {
    if (err instanceof WorkflowExecutionAlreadyStartedError)
      throw new ConflictError(`${opts.what} is already running (workflow ${opts.workflowId})`);
    throw err;
  }
}
