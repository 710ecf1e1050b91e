import { InputError } from '../errors';
import { decodeCursor, encodeCursor, type KeysetPosition } from '../pagination';
import { JOB_KINDS, type JobKind } from './kinds';

/**
 * The jobs list merges several tables newest first, ordered by (created_at, kind, id): the id
 * alone does not order rows of different tables, and two tables may hold rows of the same
 * microsecond. The cursor is the last row's kind, a dot, and the shared keyset cursor of its
 * creation time and id (base64url has no dot, so the split is unambiguous).
 */
export interface JobPosition extends KeysetPosition {
  kind: JobKind;
}

export const encodeJobCursor = (p: JobPosition): string =>
  `${p.kind}.${encodeCursor({ createdAt: p.createdAt, id: p.id })}`;

export function decodeJobCursor(cursor: string): JobPosition {
  const dot = cursor.indexOf('.');
  const kind = cursor.slice(0, dot);
  if (dot < 0 || !(JOB_KINDS as readonly string[]).includes(kind))
    throw new InputError('cursor is not one this API issued', [
      { field: 'query.cursor', message: 'malformed cursor' },
    ]);
  return { kind: kind as JobKind, ...decodeCursor(cursor.slice(dot + 1)) };
}
