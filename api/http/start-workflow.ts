import {
  isGrpcServiceError,
  ServiceError,
  WorkflowExecutionAlreadyStartedError,
  type WorkflowStartOptions,
} from '@temporalio/client';
import type { Workflow } from '@temporalio/common';
import type { Response } from 'express';
import { ConflictError, UnavailableError } from '../../core/errors';
import type { AppDeps } from '../deps';

/** gRPC codes of a Temporal server that is down or does not answer in time (not a refusal). */
const GRPC_UNAVAILABLE = 14;
const GRPC_DEADLINE_EXCEEDED = 4;

function temporalDoesNotAnswer(err: unknown): boolean {
  const cause = err instanceof ServiceError ? err.cause : err;
  return (
    isGrpcServiceError(cause) && (cause.code === GRPC_UNAVAILABLE || cause.code === GRPC_DEADLINE_EXCEEDED)
  );
}

/**
 * Starts a workflow (by its function, so its arguments are type-checked) under its business id.
 * Temporal refuses a second start of a running id: a ConflictError (409); a Temporal server that
 * does not answer is an UnavailableError (503), like /api/readyz says.
 */
export async function beginWorkflow<W extends Workflow>(
  deps: AppDeps,
  opts: { workflow: W; workflowId: string; args: Parameters<W>; what: string },
): Promise<{ workflow_id: string; run_id: string }> {
  try {
    // TypeScript cannot narrow the options' conditional `args` type for a generic W; the caller's args are checked against Parameters<W>.
    const options = {
      taskQueue: deps.config.temporal.cpuTaskQueue,
      workflowId: opts.workflowId,
      args: opts.args,
    } as unknown as WorkflowStartOptions<W>;
    const handle = await deps.temporal.client.workflow.start(opts.workflow, options);
    return { workflow_id: handle.workflowId, run_id: handle.firstExecutionRunId };
  } catch (err) {
    if (err instanceof WorkflowExecutionAlreadyStartedError)
      throw new ConflictError(`${opts.what} is already running (workflow ${opts.workflowId})`);
    if (temporalDoesNotAnswer(err))
      throw new UnavailableError(`${opts.what} could not be started: Temporal does not answer; try again`);
    throw err;
  }
}

/** Starts a workflow as beginWorkflow does and answers 202 with a Location to watch. */
export async function startWorkflow<W extends Workflow>(
  deps: AppDeps,
  res: Response,
  opts: { workflow: W; workflowId: string; args: Parameters<W>; location: string; what: string },
): Promise<{ workflow_id: string; run_id: string; status_url: string }> {
  const started = await beginWorkflow(deps, opts);
  res.status(202).location(opts.location);
  return { ...started, status_url: opts.location };
}

/**
 * Starts a workflow for the record written just before it (a run, a job), as startWorkflow does,
 * after `check` (what may refuse a start once its record exists: the cost gate names the record);
 * when the check refuses or the start fails — already running, Temporal down — `forget` removes the
 * record, so a refused start leaves no trace.
 */
export async function startWorkflowFor<W extends Workflow>(
  deps: AppDeps,
  res: Response,
  opts: Parameters<typeof startWorkflow<W>>[2] & {
    check?: () => Promise<unknown>;
    forget: () => Promise<unknown>;
  },
): Promise<{ workflow_id: string; run_id: string; status_url: string }> {
  try {
    await opts.check?.();
    return await startWorkflow(deps, res, opts);
  } catch (err) {
    await opts.forget();
    throw err;
  }
}
