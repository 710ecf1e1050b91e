import { InputError, NotAllowedError } from '../errors';
import { changesContent, checkReviewRole, reviewEffect } from './actions';
import { decodeCursor, encodeCursor, queueScore, rarity, uncertainty } from './ranking';

describe('review actions', () => {
  const base = { state: null, className: null, attrs: null };
  it('maps each action to its state', () => {
    expect(reviewEffect({ ...base, action: 'confirm' }).state).toBe('accepted');
    expect(reviewEffect({ ...base, action: 'accept' }).state).toBe('accepted');
    expect(reviewEffect({ ...base, action: 'reject' }).state).toBe('rejected');
    expect(reviewEffect({ ...base, action: 'relabel', className: 'bus' })).toEqual({
      state: 'accepted',
      className: 'bus',
      attrs: null,
      shape: null,
    });
    expect(reviewEffect({ ...base, action: 'edit', attrs: { occluded: true } })).toEqual({
      state: null,
      className: null,
      attrs: { occluded: true },
      shape: null,
    });
  });
  it('lets an explicit state override, and refuses inconsistent requests', () => {
    expect(reviewEffect({ ...base, action: 'relabel', className: 'bus', state: 'review' }).state).toBe(
      'review',
    );
    expect(() => reviewEffect({ ...base, action: 'relabel' })).toThrow(InputError);
    expect(() => reviewEffect({ ...base, action: 'reject', className: 'bus' })).toThrow(/relabel or edit/);
  });
  it('takes geometry with edit only, naming each field otherwise', () => {
    const shape = { bbox: [1, 2, 3, 4], polyline: null };
    expect(reviewEffect({ ...base, action: 'edit', shape }).shape).toBe(shape);
    expect(reviewEffect({ ...base, action: 'edit', shape: {} }).shape).toBeNull();
    expect(reviewEffect({ ...base, action: 'accept', shape: { rot_deg: undefined } }).shape).toBeNull();
    try {
      reviewEffect({ ...base, action: 'accept', shape });
      throw new Error('not refused');
    } catch (e) {
      expect(e).toBeInstanceOf(InputError);
      expect((e as InputError).fieldErrors.map((f) => f.field)).toEqual(['body.bbox', 'body.polyline']);
    }
  });
  it('leaves verdicts to reviewers: an annotator may only edit, without a state', () => {
    for (const role of ['reviewer', 'admin'] as const)
      expect(() => checkReviewRole({ action: 'reject', state: 'review' }, role)).not.toThrow();
    expect(() => checkReviewRole({ action: 'edit', state: null }, 'annotator')).not.toThrow();
    for (const action of ['confirm', 'accept', 'reject', 'relabel'] as const)
      expect(() => checkReviewRole({ action, state: null }, 'annotator')).toThrow(NotAllowedError);
    expect(() => checkReviewRole({ action: 'edit', state: 'submitted' }, 'annotator')).toThrow(
      NotAllowedError,
    );
  });
  it('tells content changes from state-only reviews', () => {
    const effect = reviewEffect({ ...base, action: 'edit' });
    expect(changesContent(effect)).toBe(false);
    expect(changesContent({ ...effect, attrs: {} })).toBe(true);
    expect(changesContent({ ...effect, className: 'bus' })).toBe(true);
    expect(changesContent({ ...effect, shape: { keypoints: null } })).toBe(true);
  });
});

describe('queue ranking', () => {
  it('rates uncertainty highest at 0.5 and for objects without confidence', () => {
    expect(uncertainty(0.5)).toBe(1);
    expect(uncertainty(null)).toBe(1);
    expect(uncertainty(1)).toBe(0);
    expect(uncertainty(0)).toBe(0);
    expect(uncertainty(0.9)).toBeCloseTo(0.2);
    expect(uncertainty(0.1)).toBeCloseTo(0.2);
  });
  it('rates rare classes above common ones, 1 for a singleton', () => {
    expect(rarity(1, 1000)).toBeCloseTo(1);
    expect(rarity(10, 1000)).toBeGreaterThan(rarity(900, 1000));
    expect(rarity(1000, 1000)).toBeCloseTo(Math.log(2) / Math.log(1001));
    expect(queueScore(0.5, 1, 100)).toBeGreaterThan(queueScore(0.5, 50, 100));
    // A rare class at moderate uncertainty outranks a common class at full uncertainty.
    expect(queueScore(0.8, 2, 10000)).toBeGreaterThan(queueScore(0.5, 9000, 10000));
  });
  it('round-trips cursors and refuses forged ones', () => {
    const c = { score: 0.123456789012345, id: '0b5f0a3e-2f5c-4d7a-9d0e-1c2b3a4d5e6f' };
    expect(decodeCursor(encodeCursor(c))).toEqual(c);
    expect(() => decodeCursor('nonsense')).toThrow(InputError);
    expect(() => decodeCursor(Buffer.from('[1,"x"]').toString('base64url'))).toThrow(InputError);
  });
});
