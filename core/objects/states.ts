import { BadRequestError } from '../errors';

/** Object `state` values (spec States and transitions). `submitted` is outside the gate enumeration. */
export const OBJECT_STATES = [
  'auto_accept',
  'review',
  'annotate',
  'accepted',
  'rejected',
  'submitted',
] as const;
export type ObjectState = (typeof OBJECT_STATES)[number];

export type CallerRole = 'annotator' | 'reviewer' | 'admin';

/** Final verdicts: only a reviewer or admin may put an object there. */
const VERDICTS: readonly ObjectState[] = ['accepted', 'rejected'];

/** A state outside the allowed list is a 400 (spec Errors), not a 422: the check sits outside the schema. */
export function parseObjectState(value: string, field: string): ObjectState {
  if ((OBJECT_STATES as readonly string[]).includes(value)) return value as ObjectState;
  throw new BadRequestError(`state ${JSON.stringify(value)} is not one of ${OBJECT_STATES.join(', ')}`, [
    { field, message: 'not an allowed state' },
  ]);
}

/**
 * Clamps a state a human asks for by the caller's role (docs/annotations.md):
 * - `auto_accept` belongs to the auto-labeller; a human write becomes `review` (like the critic,
 *   a person can demote to review but never mint an auto-accept);
 * - `accepted` and `rejected` are verdicts: an annotator's request becomes `submitted` (handed in
 *   for review); reviewers and admins keep them;
 * - `review`, `annotate` and `submitted` are open to every role.
 */
export function clampStateForRole(
  requested: ObjectState,
  role: CallerRole,
): { state: ObjectState; clamped: boolean } {
  let state = requested;
  if (requested === 'auto_accept') state = 'review';
  else if (VERDICTS.includes(requested) && role === 'annotator') state = 'submitted';
  return { state, clamped: state !== requested };
}

/**
 * The state an object or annotation takes when a person changes what it says (its geometry, label
 * or payload) without setting a state. A verdict (`accepted`, `rejected`) or a machine
 * `auto_accept` judged the old content, not the new: when an annotator changes it, it goes to
 * `submitted`, handed in for review (the same rule that clamps an annotator's verdict on create).
 * Reviewers and admins hold verdicts, so their edits keep the state.
 */
export function stateAfterEdit(current: string, role: CallerRole): { state: string; reopened: boolean } {
  const judged = current === 'auto_accept' || (VERDICTS as readonly string[]).includes(current);
  if (role === 'annotator' && judged) return { state: 'submitted', reopened: true };
  return { state: current, reopened: false };
}
