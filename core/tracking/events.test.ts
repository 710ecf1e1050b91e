import { InputError } from '../errors';
import {
  EVENT_ATTRS_LIMITS,
  TRACK_EVENT_KINDS,
  TRACK_EVENT_KIND_INFO,
  eventAttrsProblem,
  resolveEventSpan,
} from './events';

const S = 'session-a';
const frames = [
  { id: 'f0', sessionId: S, index: 0 },
  { id: 'f3', sessionId: S, index: 3 },
  { id: 'g1', sessionId: 'session-b', index: 1 },
];

const fieldsOf = (fn: () => unknown): string[] => {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(InputError);
    return (err as InputError).fieldErrors.map((e) => e.field);
  }
  throw new Error('expected an InputError');
};

describe('track event spans', () => {
  it('resolves a span of the session to its frame indexes, one frame allowed', () => {
    expect(resolveEventSpan(S, 'f0', 'f3', frames)).toEqual({
      startFrameId: 'f0',
      endFrameId: 'f3',
      startIndex: 0,
      endIndex: 3,
    });
    expect(resolveEventSpan(S, 'f3', 'f3', frames)).toMatchObject({ startIndex: 3, endIndex: 3 });
  });

  it('refuses an end before its start', () => {
    expect(fieldsOf(() => resolveEventSpan(S, 'f3', 'f0', frames))).toEqual(['body.end_frame_id']);
  });

  it('refuses frames of another session like missing ones, naming each field', () => {
    expect(fieldsOf(() => resolveEventSpan(S, 'g1', 'nope', frames))).toEqual([
      'body.start_frame_id',
      'body.end_frame_id',
    ]);
    expect(fieldsOf(() => resolveEventSpan(S, 'f0', 'g1', frames, 'patch'))).toEqual(['patch.end_frame_id']);
  });
});

describe('track event attrs', () => {
  it('accepts a small note and refuses too many keys, too many bytes, too deep', () => {
    expect(eventAttrsProblem({ lane: 'left', speed_kmh: 40, tags: ['rain'] })).toBeNull();
    const many = Object.fromEntries(
      Array.from({ length: EVENT_ATTRS_LIMITS.maxKeys + 1 }, (_, i) => [`k${i}`, i]),
    );
    expect(eventAttrsProblem(many)).toMatch(/keys/);
    expect(eventAttrsProblem({ note: 'x'.repeat(EVENT_ATTRS_LIMITS.maxBytes) })).toMatch(/bytes/);
    expect(eventAttrsProblem({ a: { b: { c: 1 } } })).toBeNull();
    expect(eventAttrsProblem({ a: { b: { c: { d: 1 } } } })).toMatch(/levels/);
  });

  it('describes every kind of the vocabulary', () => {
    expect(Object.keys(TRACK_EVENT_KIND_INFO).sort()).toEqual([...TRACK_EVENT_KINDS].sort());
  });
});
