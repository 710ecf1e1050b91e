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

const TIMESTAMP = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d{1,6})?Z$/;

/** A well-formed timestamp that names a real instant: PostgreSQL refuses 2026-02-30 or 25:00, which would be a 500. */
function isRealInstant(t: string): boolean {
  const m = TIMESTAMP.exec(t);
  if (!m) return false;
  const [y, mo, d, h, mi, s] = m.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  const at = new Date(Date.UTC(y, mo - 1, d, h, mi, s));
  return (
    y >= 1 &&
    at.getUTCFullYear() === y &&
    at.getUTCMonth() === mo - 1 &&
    at.getUTCDate() === d &&
    at.getUTCHours() === h &&
    at.getUTCMinutes() === mi &&
    at.getUTCSeconds() === s
  );
}
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
  if (typeof t !== 'string' || typeof i !== 'string' || !isRealInstant(t) || !UUID.test(i)) throw bad();
  return { createdAt: t, id: i };
}

/**
 * Id cursors, for lists in a fixed order whose cursor is the last row's id: the Prisma `findMany`
 * arguments of a page of `limit` rows after the row `cursor` names (one row more, to tell whether
 * another page follows).
 */
export const idCursorArgs = (query: { limit: number; cursor?: string | undefined }) => ({
  take: query.limit + 1,
  ...(query.cursor ? { cursor: { id: query.cursor }, skip: 1 } : {}),
});

/** The page of rows read with idCursorArgs, and its next_cursor: the last row's id when another page follows. */
export function idPage<T extends { id: string }>(
  rows: readonly T[],
  limit: number,
): { page: T[]; next_cursor: string | null } {
  const page = rows.slice(0, limit);
  return { page, next_cursor: rows.length > limit ? page[page.length - 1]!.id : null };
}
