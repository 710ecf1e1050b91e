import { z } from 'zod';
import {
  addClass,
  mergeClasses,
  ontologyOut,
  renameClass,
  retireClass,
  revertRun,
  runOut,
} from '../../../activities/annotations/ontology';
import { L0_VALUES } from '../../../core/ontology/classes';
import { CLASS_NAME_PATTERN } from '../../../core/ontology/rules';
import type { AppDeps } from '../../deps';
import { RouteGroup, uuidParams } from '../../http/route-group';
import { actorOf } from '../../http/actor';

const className = z
  .string()
  .regex(CLASS_NAME_PATTERN, 'lower snake case, 1–64 characters, starting with a letter');

export const OntologyClassIn = z.strictObject({
  name: className,
  l0: z.enum(L0_VALUES),
  l1: className,
  india: z.boolean().default(false),
  parent: className.nullable().default(null),
});
export const OntologyRenameIn = z.strictObject({ from: className, to: className });
export const OntologyMergeIn = z.strictObject({
  sources: z.array(className).min(1).max(50),
  into: className,
});
export const OntologyRetireIn = z.strictObject({ name: className });

/** The ontology routes of the `meta` group (docs/annotations.md). */
export function createOntologyRoutes(deps: AppDeps): RouteGroup {
  const { db } = deps;
  return new RouteGroup('meta')
    .get(
      '/api/ontology',
      {
        summary:
          'The ontology: classes with l0/l1, india flag, parent relation, sources, aliases and the safety set',
        access: 'annotator',
      },
      () => ontologyOut(db),
    )
    .post(
      '/api/ontology/classes',
      {
        summary: 'Add a class',
        access: 'admin',
        body: { name: 'OntologyClassIn', schema: OntologyClassIn },
        successStatus: 201,
        statuses: { 409: 'name taken' },
      },
      async ({ body, principal, req }) => {
        const c = await addClass(db, body, actorOf(principal, req));
        return { id: c.id, name: c.name, l0: c.l0, l1: c.l1, india: c.india, parent_id: c.parentId };
      },
    )
    .post(
      '/api/ontology/classes/rename',
      {
        summary: 'Rename a class (revertible run; the old name stays an alias)',
        access: 'admin',
        body: { name: 'OntologyRenameIn', schema: OntologyRenameIn },
        statuses: { 404: 'no such class', 409: 'name taken' },
      },
      async ({ body, principal, req }) =>
        runOut(await renameClass(db, body.from, body.to, actorOf(principal, req)), 0),
    )
    .post(
      '/api/ontology/classes/merge',
      {
        summary: 'Merge classes into one, rewriting their objects in one revertible run',
        access: 'admin',
        body: { name: 'OntologyMergeIn', schema: OntologyMergeIn },
        statuses: { 404: 'no such class' },
      },
      async ({ body, principal, req }) => {
        const run = await mergeClasses(db, body.sources, body.into, actorOf(principal, req));
        return runOut(run, run.changes.length);
      },
    )
    .post(
      '/api/ontology/classes/retire',
      {
        summary: 'Retire a class: no new objects may use it; existing ones keep it',
        access: 'admin',
        body: { name: 'OntologyRetireIn', schema: OntologyRetireIn },
        statuses: { 404: 'no such class' },
      },
      async ({ body, principal, req }) => {
        const c = await retireClass(db, body.name, actorOf(principal, req));
        return { id: c.id, name: c.name, retired: true };
      },
    )
    .post(
      '/api/ontology/merges/{run_id}/revert',
      {
        summary: 'Revert a rename or merge run; objects changed since are skipped and listed',
        access: 'admin',
        params: uuidParams('run_id'),
        statuses: { 404: 'no such run', 409: 'already reverted' },
      },
      async ({ params, principal, req }) => revertRun(db, params.run_id, actorOf(principal, req)),
    );
}
