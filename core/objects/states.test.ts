import { BadRequestError, ConflictError, NotAllowedError } from '../errors';
import { checkAssetMove } from './assets';
import { clampStateForRole, OBJECT_STATES, parseObjectState, stateAfterEdit } from './states';

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
    expect(() => checkAssetMove('new', 'in_progress', 'annotator')).not.toThrow();
    expect(() => checkAssetMove('submitted', 'reviewed', 'reviewer')).not.toThrow();
    expect(() => checkAssetMove('reviewed', 'in_progress', 'reviewer')).not.toThrow();
    expect(() => checkAssetMove('archived', 'new', 'admin')).not.toThrow();
    expect(() => checkAssetMove('new', 'reviewed', 'admin')).toThrow(/allowed: in_progress, archived/);
    expect(() => checkAssetMove('archived', 'reviewed', 'admin')).toThrow(ConflictError);
    expect(() => checkAssetMove('bogus', 'new', 'admin')).toThrow(/none/);
  });

  it('leaves judging and retiring work to reviewers: an annotator starts, submits and withdraws', () => {
    for (const [from, to] of [
      ['new', 'in_progress'],
      ['in_progress', 'submitted'],
      ['submitted', 'in_progress'],
    ] as const)
      expect(() => checkAssetMove(from, to, 'annotator')).not.toThrow();
    for (const [from, to] of [
      ['submitted', 'reviewed'],
      ['reviewed', 'in_progress'],
      ['new', 'archived'],
      ['submitted', 'archived'],
      ['archived', 'new'],
    ] as const) {
      expect(() => checkAssetMove(from, to, 'annotator')).toThrow(NotAllowedError);
      expect(() => checkAssetMove(from, to, 'reviewer')).not.toThrow();
    }
  });
});

describe('an edit of judged content', () => {
  it('sends it back to review when an annotator makes it, and keeps a reviewer’s verdict', () => {
    for (const judged of ['accepted', 'rejected', 'auto_accept'])
      expect(stateAfterEdit(judged, 'annotator')).toEqual({ state: 'submitted', reopened: true });
    for (const open of ['review', 'annotate', 'submitted'])
      expect(stateAfterEdit(open, 'annotator')).toEqual({ state: open, reopened: false });
    for (const role of ['reviewer', 'admin'] as const)
      expect(stateAfterEdit('accepted', role)).toEqual({ state: 'accepted', reopened: false });
  });
});
