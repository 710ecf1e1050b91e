import { InputError } from '../errors';

/**
 * Review-queue ranking: score = uncertainty × class rarity (docs/annotations.md).
 *
 * - uncertainty(conf) = 1 − |2·conf − 1|: 1 at conf 0.5 (a coin toss), 0 at 0 or 1. An object
 *   without a confidence (drawn by a person, imported) counts as fully uncertain: nothing vouches
 *   for it until someone reviews it.
 * - rarity(n_c, N) = ln(1 + N / n_c) / ln(1 + N), over the live class distribution (N objects in the
 *   store, n_c of them of the object's class): 1 for a class seen once, falling towards
 *   ln 2 / ln(1 + N) for a class that is every object. The log keeps a class 100× rarer from
 *   outranking a near-certain common one by 100×.
 */

export function uncertainty(conf: number | null): number {
  if (conf === null) return 1;
  const c = Math.min(1, Math.max(0, conf));
  return 1 - Math.abs(2 * c - 1);
}

export function rarity(classCount: number, total: number): number {
  if (total <= 0 || classCount <= 0) return 1;
  return Math.log(1 + total / classCount) / Math.log(1 + total);
}

export const queueScore = (conf: number | null, classCount: number, total: number): number =>
  uncertainty(conf) * rarity(classCount, total);

/**
 * A queue position: the last row's score and id. Pages are keyset pages ordered by score
 * descending, then id ascending; the cursor is opaque to clients (base64url JSON).
 */
export interface QueueCursor {
  score: number;
  id: string;
}

export function encodeCursor(c: QueueCursor): string {
  return Buffer.from(JSON.stringify([c.score, c.id])).toString('base64url');
}

export function decodeCursor(raw: string): QueueCursor {
  try {
    const v: unknown = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8'));
    if (
      Array.isArray(v) &&
      v.length === 2 &&
      typeof v[0] === 'number' &&
      Number.isFinite(v[0]) &&
      typeof v[1] === 'string' &&
      /^[0-9a-f-]{36}$/.test(v[1])
    ) {
      return { score: v[0], id: v[1] };
    }
  } catch {
    // fall through: any malformed cursor gets the same answer
  }
  throw new InputError('cursor is not one this API issued', [
    { field: 'query.cursor', message: 'malformed cursor' },
  ]);
}
