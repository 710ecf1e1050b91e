import { proxyActivities } from '@temporalio/workflow';
import { reportingFailure } from './failure';
import type { CpuActivities } from '../activities';

export interface EraseSessionInput {
  erasureId: string;
}

export interface EraseSessionOutcome {
  erasure_id: string;
  complete: boolean;
}

const steps = proxyActivities<CpuActivities>({
  // Every step is idempotent, so a worker lost mid-step is noticed by the heartbeat and the step runs again.
  startToCloseTimeout: '2 hours',
  heartbeatTimeout: '20 seconds',
  retry: { maximumInterval: '1 minute' },
});
const notice = proxyActivities<CpuActivities>({ startToCloseTimeout: '1 minute' });

/**
 * Erases one session completely (`erase-session-<session_id>`, docs/erasure.md): collects every id
 * and stored key of its data, marks the dataset commits that held it, deletes its stored objects,
 * its rows, and every remaining mention of its ids; then proves each place of the catalogue and
 * each bucket prefix empty. A proof that finds something left purges once more and proves again
 * before the erasure fails by name.
 */
export async function eraseSessionWorkflow(input: EraseSessionInput): Promise<EraseSessionOutcome> {
  return reportingFailure(
    async () => {
      await steps.checkErasable(input);
      await steps.collectErasureSubjects(input);
      await steps.markErasedCommits(input);
      await steps.deleteErasureObjects(input);
      await steps.deleteErasureRows(input);
      await steps.purgeErasurePlaces(input);
      if (!(await steps.proveErasure({ ...input, last: false })).complete) {
        // Something wrote a mention while the purge ran (a late event, a notification): once more.
        await steps.purgeErasurePlaces(input);
        await steps.proveErasure({ ...input, last: true });
      }
      return { erasure_id: input.erasureId, complete: true };
    },
    (error) => notice.failErasure({ ...input, error }),
  );
}
