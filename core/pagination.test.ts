import { InputError } from './errors';
import { decodeCursor, encodeCursor, idCursorArgs, idPage } from './pagination';

describe('keyset cursors', () => {
  const position = { createdAt: '2026-11-22T13:27:23.123456Z', id: '0b7f5a1e-7d7c-4c5e-9a55-1f2b3c4d5e6f' };

  it('round-trip microsecond timestamps exactly', () => {
    expect(decodeCursor(encodeCursor(position))).toEqual(position);
  });

  it.each([
    ['not base64 json', '!!!'],
    ['json of the wrong shape', Buffer.from('{"x":1}').toString('base64url')],
    [
      'an injected timestamp',
      Buffer.from(JSON.stringify({ t: "2026-01-01'; DROP TABLE sessions;--", i: position.id })).toString(
        'base64url',
      ),
    ],
    ['a non-uuid id', Buffer.from(JSON.stringify({ t: position.createdAt, i: 'x' })).toString('base64url')],
    ['empty', ''],
    [
      'an impossible date',
      Buffer.from(JSON.stringify({ t: '2026-02-30T10:00:00Z', i: position.id })).toString('base64url'),
    ],
    [
      'an impossible hour',
      Buffer.from(JSON.stringify({ t: '2026-11-22T25:61:00.5Z', i: position.id })).toString('base64url'),
    ],
  ])('refuse %s naming query.cursor', (_label, cursor) => {
    try {
      decodeCursor(cursor);
      throw new Error('accepted');
    } catch (err) {
      expect(err).toBeInstanceOf(InputError);
      expect((err as InputError).fieldErrors[0]?.field).toBe('query.cursor');
    }
  });
});

describe('id cursors', () => {
  it('reads one row more than the page, after the cursor row', () => {
    expect(idCursorArgs({ limit: 2 })).toEqual({ take: 3 });
    expect(idCursorArgs({ limit: 2, cursor: 'b' })).toEqual({ take: 3, cursor: { id: 'b' }, skip: 1 });
  });

  it('names the last row of the page as next_cursor only when another page follows', () => {
    const rows = [{ id: 'a' }, { id: 'b' }, { id: 'c' }];
    expect(idPage(rows, 2)).toEqual({ page: [{ id: 'a' }, { id: 'b' }], next_cursor: 'b' });
    expect(idPage(rows, 3)).toEqual({ page: rows, next_cursor: null });
    expect(idPage([], 3)).toEqual({ page: [], next_cursor: null });
  });
});
