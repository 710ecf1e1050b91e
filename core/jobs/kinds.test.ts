import { InputError } from '../errors';
import { decodeJobCursor, encodeJobCursor } from './cursor';
import {
  JOB_KINDS,
  JOB_STATES,
  STATE_MAPS,
  completedStatesOf,
  progressOf,
  rawStatesOf,
  uniformState,
} from './kinds';

describe('the uniform job states', () => {
  it('maps every kind so that a cancelled job reads cancelled and each uniform state can be filtered on', () => {
    for (const kind of JOB_KINDS) {
      expect(uniformState(kind, 'cancelled')).toBe('cancelled');
      for (const state of ['running', 'completed', 'failed', 'cancelled'] as const)
        expect(rawStatesOf(kind, state).length).toBeGreaterThan(0);
      for (const raw of Object.keys(STATE_MAPS[kind])) expect(JOB_STATES).toContain(uniformState(kind, raw));
    }
  });

  it("maps each table's own words", () => {
    expect(uniformState('export', 'succeeded')).toBe('completed');
    expect(uniformState('export', 'refused')).toBe('failed');
    expect(uniformState('training', 'queued-cloud')).toBe('queued');
    expect(uniformState('errordetect', 'predicting')).toBe('running');
    expect(uniformState('inference', 'created')).toBe('queued');
    expect(uniformState('corpus', 'reverting')).toBe('running');
    expect(rawStatesOf('errordetect', 'running').sort()).toEqual(['detecting', 'predicting']);
    expect(completedStatesOf('corpus').sort()).toEqual(['completed', 'reverted']);
  });

  it('names a state it does not know instead of guessing', () => {
    expect(() => uniformState('ingest', 'paused')).toThrow(/ingest job in state "paused"/);
  });
});

describe('progress', () => {
  it('is 1 once completed, done/total below 1 before, null where the total is unknown', () => {
    expect(progressOf('completed', null, null)).toBe(1);
    expect(progressOf('running', 5, 10)).toBe(0.5);
    expect(progressOf('running', 10, 10)).toBe(0.99);
    expect(progressOf('cancelled', 3, 12)).toBe(0.25);
    expect(progressOf('running', 3, 0)).toBeNull();
    expect(progressOf('queued', undefined, 10)).toBeNull();
  });
});

describe('job cursors', () => {
  const position = {
    kind: 'training' as const,
    createdAt: '2026-11-22T13:27:23.123456Z',
    id: '0b7f5a1e-7d7c-4c5e-9a55-1f2b3c4d5e6f',
  };

  it('round-trip the kind, the microsecond time and the id', () => {
    expect(decodeJobCursor(encodeJobCursor(position))).toEqual(position);
  });

  it.each([
    ['no kind', encodeJobCursor(position).split('.')[1]!],
    ['an unknown kind', `teleport.${encodeJobCursor(position).split('.')[1]}`],
    ['a broken keyset part', 'ingest.!!!'],
    ['nothing', ''],
  ])('refuses %s, naming query.cursor', (_what, cursor) => {
    try {
      decodeJobCursor(cursor);
      throw new Error('accepted');
    } catch (err) {
      expect(err).toBeInstanceOf(InputError);
      expect((err as InputError).fieldErrors).toEqual([
        { field: 'query.cursor', message: 'malformed cursor' },
      ]);
    }
  });
});
