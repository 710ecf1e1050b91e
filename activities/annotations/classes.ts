import { InputError } from '../../core/errors';
import type { Prisma } from '../../generated/prisma/client';
import type { Db } from '../db';

type Tx = Db | Prisma.TransactionClient;

export interface LiveClass {
  id: number;
  name: string;
  l0: string;
  l1: string;
}

/**
 * Resolves a class name to a live class: its own name first, then a former name kept as an alias
 * after a rename or merge. An unknown class, or a retired one unless allowed (filters may name
 * retired classes, writes may not), is refused (422) naming `field`.
 */
export async function resolveClass(
  db: Tx,
  name: string,
  field = 'body.class_name',
  opts: { allowRetired?: boolean } = {},
): Promise<LiveClass> {
  const own = await db.ontologyClass.findUnique({ where: { name } });
  // A merged-away class is retired but its name is an alias of the target: the alias wins.
  const cls =
    own && !own.retiredAt
      ? own
      : ((await db.ontologyAlias.findUnique({ where: { name }, include: { class: true } }))?.class ?? own);
  if (!cls)
    throw new InputError(`unknown class ${JSON.stringify(name)}`, [
      { field, message: 'not an ontology class' },
    ]);
  if (cls.retiredAt && !opts.allowRetired)
    throw new InputError(`class ${cls.name} is retired`, [{ field, message: 'retired class' }]);
  return { id: cls.id, name: cls.name, l0: cls.l0, l1: cls.l1 };
}
