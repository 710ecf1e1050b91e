import { ApplicationFailure } from '@temporalio/activity';
import type { AppConfig } from '../../core/config';
import { UnavailableError } from '../../core/errors';
import { checkModel, type ModelCheck, type ModelRole } from './inference-runtime';

/** Activities of the detection concern that run on the `gpu` queue. */
export function createDetectActivities(deps: { config: AppConfig }) {
  return {
    /** Loads one model on the inference device and runs it once (the GPU worker's self-check). */
    async checkInferenceModel(role: ModelRole): Promise<ModelCheck> {
      try {
        return await checkModel(deps.config.models, role);
      } catch (err) {
        // Retrying cannot make a missing model or provider appear.
        if (err instanceof UnavailableError)
          throw ApplicationFailure.nonRetryable(err.message, 'ModelUnavailable');
        throw err;
      }
    },
  };
}
