import { InputError } from './errors';

/**
 * Opaque keyset cursors. A cursor carries the last row's sort key: its creation time as PostgreSQL
 * text with microseconds (a JavaScript Date keeps only milliseconds, and two rows of the same
 * millisecond would otherwise be skipped or repeated) and its id as the tie-breaker.
 */
export interface KeysetPosition {
  createdAt: string;
  id: string;
}

const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,6})?Z$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function encodeCursor(position: KeysetPosition): string {
  return Buffer.from(JSON.stringify({ t: position.createdAt, i: position.id })).toString('base64url');
}

/** Throws InputError naming `query.cursor` for anything this module did not write. */
export function decodeCursor(cursor: string): KeysetPosition {
  const bad = () =>
    new InputError('cursor is not one this API issued', [
      { field: 'query.cursor', message: 'malformed cursor' },
    ]);
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw bad();
  }
  const { t, i } = (parsed ?? {}) as { t?: unknown; i?: unknown };
  if (typeof t !== 'string' || typeof i !== 'string' || !TIMESTAMP.test(t) || !UUID.test(i)) throw bad();
  return { createdAt: t, id: i };
}
