import { ApplicationFailure } from '@temporalio/common';
import { DomainError } from '../core/errors';

/**
 * A step's error handler: a domain refusal (nothing to select, a commit that cannot train) is a
 * non-retryable failure of `type`, which its workflow decides on; anything else is thrown again for
 * Temporal to retry.
 */
export const refusedAs =
  (type: string) =>
  (err: unknown): never => {
    if (err instanceof DomainError) throw ApplicationFailure.nonRetryable(err.message, type);
    throw err;
  };
