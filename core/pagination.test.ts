import { InputError } from './errors';
import { decodeCursor, encodeCursor } from './pagination';

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
