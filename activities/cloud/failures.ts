import { ApplicationFailure } from '@temporalio/activity';
import { DomainError } from '../../core/errors';

/** A failure of a cloud activity that no retry mends, typed so the workflow (and the Temporal UI) can tell which. */
export const refused = (message: string, type: string) => ApplicationFailure.nonRetryable(message, type);

/** A domain refusal (no provider configured, a missing commit, model or session) fails non-retryably as `type`. */
export async function orRefused<T>(work: Promise<T>, type: string): Promise<T> {
  return work.catch((err: unknown) => {
    if (err instanceof DomainError) throw refused(err.message, type);
    throw err;
  });
}
