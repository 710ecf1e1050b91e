import { loadConfig } from '../config';
import { allowedStatuses, blockedSentence, consentGate, isBlocking, parseBlocking } from './consent';

describe('consent', () => {
  it('reads the blocking statuses, refusing unknown ones and those that record consent', () => {
    expect(parseBlocking(' withdrawn, missing,withdrawn ')).toEqual(['withdrawn', 'missing']);
    expect(parseBlocking('')).toEqual([]);
    expect(() => parseBlocking('withdrawn,revoked')).toThrow(/unknown consent status revoked/);
    expect(() => parseBlocking('granted')).toThrow(/granted cannot block/);
    expect(() => parseBlocking('not_required')).toThrow(/cannot block/);
  });

  it('is an allow-list: a status outside the vocabulary blocks', () => {
    const blocking = parseBlocking('withdrawn,missing');
    expect(allowedStatuses(blocking)).toEqual(['granted', 'not_required', 'unknown']);
    expect(isBlocking('unknown', blocking)).toBe(false);
    expect(isBlocking('withdrawn', blocking)).toBe(true);
    expect(isBlocking('typed by hand', blocking)).toBe(true);
    expect(isBlocking('unknown', parseBlocking('withdrawn,missing,unknown'))).toBe(true);
  });

  it('gates every use alike and says so in a sentence naming each session', () => {
    expect(consentGate('missing', ['withdrawn', 'missing'])).toEqual({
      consent_status: 'missing',
      blocking: true,
      blocks: { export: true, training: true, campaigns: true },
      blocking_statuses: ['withdrawn', 'missing'],
    });
    expect(consentGate('granted', ['withdrawn']).blocks).toEqual({
      export: false,
      training: false,
      campaigns: false,
    });
    expect(
      blockedSentence('training', [
        { session_id: 's1', name: 'drive 1', consent_status: 'withdrawn' },
        { session_id: 's2', name: null, consent_status: 'missing' },
      ]),
    ).toBe(
      '2 session(s) may not be trained on because of their consent status: drive 1 (s1, consent withdrawn), an erased session (s2, consent missing)',
    );
  });

  it('is configured by APP_CONSENT__BLOCKING, refused at start when it names a bad status', () => {
    expect(loadConfig({ APP_ENV: 'test' }).consent.blocking).toEqual(['withdrawn', 'missing']);
    expect(loadConfig({ APP_ENV: 'test', APP_CONSENT__BLOCKING: 'withdrawn' }).consent.blocking).toEqual([
      'withdrawn',
    ]);
    expect(() => loadConfig({ APP_ENV: 'test', APP_CONSENT__BLOCKING: 'granted' })).toThrow(/cannot block/);
  });
});
