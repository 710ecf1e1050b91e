import { InputError, NotAllowedError } from '../errors';
import { shapeEditFields, type ShapeEdit } from '../objects/shape-edit';
import type { CallerRole, ObjectState } from '../objects/states';

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
 * relabelled object to a second reviewer). Only `edit` may also carry geometry (single review).
 */
export const REVIEW_ACTIONS = ['confirm', 'accept', 'reject', 'relabel', 'edit'] as const;
export type ReviewAction = (typeof REVIEW_ACTIONS)[number];

export interface ReviewRequest {
  action: ReviewAction;
  state: ObjectState | null;
  className: string | null;
  attrs: Record<string, unknown> | null;
  /** New geometry; only `edit` takes it. */
  shape?: ShapeEdit | null;
}

export interface ReviewEffect {
  /** The new state, or null to keep the object's own. */
  state: ObjectState | null;
  /** The class to move to, or null to keep it. */
  className: string | null;
  attrs: Record<string, unknown> | null;
  /** The geometry to apply, or null when the request carries none. */
  shape: ShapeEdit | null;
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
  const shapeFields = req.shape ? shapeEditFields(req.shape) : [];
  if (req.action !== 'edit' && shapeFields.length) {
    throw new InputError(
      `${req.action} keeps the geometry; use edit to change it`,
      shapeFields.map((f) => ({ field: `body.${f}`, message: `not allowed with ${req.action}` })),
    );
  }
  return {
    state: req.state ?? ACTION_STATE[req.action],
    className: req.className,
    attrs: req.attrs,
    shape: req.shape && shapeFields.length ? req.shape : null,
  };
}

/**
 * An annotator fixes content but never judges it: of the review actions only `edit` without a
 * `state` is theirs (docs/annotations.md, No review bypass). Reviewers and admins may do all.
 */
export function checkReviewRole(req: { action: ReviewAction; state: string | null }, role: CallerRole): void {
  if (role !== 'annotator') return;
  if (req.action !== 'edit')
    throw new NotAllowedError(`${req.action} is a verdict and needs the reviewer role; you are annotator`);
  if (req.state !== null)
    throw new NotAllowedError(
      'an annotator edit cannot set a state (a judged object goes to submitted); leave state out',
    );
}

/** Whether a review changes what the object says (class, attrs or geometry), not only its state. */
export const changesContent = (effect: ReviewEffect): boolean =>
  effect.className !== null || effect.attrs !== null || effect.shape !== null;
