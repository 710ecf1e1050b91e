import { BadRequestError } from '../errors';
import { checkAssetMove } from './assets';
import { clampStateForRole, OBJECT_STATES, parseObjectState } from './states';

describe('object states', () => {
  it('accepts the six listed states and answers 400-class errors for others', () => {
    for (const s of OBJECT_STATES) expect(parseObjectState(s, 'body.state')).toBe(s);
    expect(() => parseObjectState('approved', 'body.state')).toThrow(BadRequestError);
    expect(() => parseObjectState('Accepted', 'body.state')).toThrow(BadRequestError);
  });

  it('clamps by role', () => {
    expect(clampStateForRole('accepted', 'annotator')).toEqual({ state: 'submitted', clamped: true });
    expect(clampStateForRole('rejected', 'annotator')).toEqual({ state: 'submitted', clamped: true });
    expect(clampStateForRole('annotate', 'annotator')).toEqual({ state: 'annotate', clamped: false });
    expect(clampStateForRole('accepted', 'reviewer')).toEqual({ state: 'accepted', clamped: false });
    expect(clampStateForRole('rejected', 'admin')).toEqual({ state: 'rejected', clamped: false });
    for (const role of ['annotator', 'reviewer', 'admin'] as const)
      expect(clampStateForRole('auto_accept', role)).toEqual({ state: 'review', clamped: true });
  });
});

describe('asset lifecycle', () => {
  it('allows the listed moves and refuses the others', () => {
    expect(() => checkAssetMove('new', 'in_progress')).not.toThrow();
    expect(() => checkAssetMove('submitted', 'reviewed')).not.toThrow();
    expect(() => checkAssetMove('reviewed', 'in_progress')).not.toThrow();
    expect(() => checkAssetMove('archived', 'new')).not.toThrow();
    expect(() => checkAssetMove('new', 'reviewed')).toThrow(/allowed: in_progress, archived/);
    expect(() => checkAssetMove('archived', 'reviewed')).toThrow();
    expect(() => checkAssetMove('bogus', 'new')).toThrow(/none/);
  });
});
