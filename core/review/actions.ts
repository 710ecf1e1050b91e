import { InputError } from '../errors';
import type { ObjectState } from '../objects/states';

/**
 * Review actions and their effect on an object (docs/annotations.md). Every action also sets
 * `source` to `human` and bumps `version` (spec States and transitions); those two are applied by
 * the writer, not here.
 *
 * | action            | state                         | class            | attrs         |
 * | confirm, accept   | accepted                      | kept             | merged if given |
 * | reject            | rejected                      | kept             | merged if given |
 * | relabel           | accepted                      | class_name (required) | merged if given |
 * | edit              | kept unless `state` is given  | class_name if given | merged if given |
 *
 * An explicit `state` overrides the action's state (e.g. `relabel` + `state: review` to hand the
 * relabelled object to a second reviewer).
 */
export const REVIEW_ACTIONS = ['confirm', 'accept', 'reject', 'relabel', 'edit'] as const;
export type ReviewAction = (typeof REVIEW_ACTIONS)[number];

export interface ReviewRequest {
  action: ReviewAction;
  state: ObjectState | null;
  className: string | null;
  attrs: Record<string, unknown> | null;
}

export interface ReviewEffect {
  /** The new state, or null to keep the object's own. */
  state: ObjectState | null;
  /** The class to move to, or null to keep it. */
  className: string | null;
  attrs: Record<string, unknown> | null;
}

const ACTION_STATE: Record<ReviewAction, ObjectState | null> = {
  confirm: 'accepted',
  accept: 'accepted',
  reject: 'rejected',
  relabel: 'accepted',
  edit: null,
};

export function reviewEffect(req: ReviewRequest): ReviewEffect {
  if (req.action === 'relabel' && !req.className) {
    throw new InputError('relabel needs class_name', [
      { field: 'body.class_name', message: 'required for relabel' },
    ]);
  }
  if ((req.action === 'confirm' || req.action === 'accept' || req.action === 'reject') && req.className) {
    throw new InputError(`${req.action} keeps the class; use relabel or edit to change it`, [
      { field: 'body.class_name', message: `not allowed with ${req.action}` },
    ]);
  }
  return { state: req.state ?? ACTION_STATE[req.action], className: req.className, attrs: req.attrs };
}
