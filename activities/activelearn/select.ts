import { setImmediate as yieldToOthers } from 'node:timers/promises';
import { selectionPicks, type BatchPick, type SelectionPool } from '../../core/activelearn/select';

/**
 * Up to `budget` picks of the pool (core/activelearn/select.ts), letting other requests in between
 * picks: each pick is one pass over the candidates' embeddings.
 */
export async function pickBatch(pool: SelectionPool, budget: number): Promise<BatchPick[]> {
  const picks: BatchPick[] = [];
  for (const pick of selectionPicks(pool)) {
    picks.push(pick);
    if (picks.length >= budget) break;
    await yieldToOthers();
  }
  return picks;
}
