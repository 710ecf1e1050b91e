import { NotFoundError } from '../../core/errors';
import type { EvalOperation, Prisma } from '../../generated/prisma/client';
import type { Actor } from '../annotations/objects';
import type { Db } from '../db';

/**
 * The eval-operations log (GET /api/eval/operations): every measurement of the quality plane is
 * kept with its parameters and result, so the latest of a kind — and what any number was computed
 * from — can be read back.
 */

export const operationOut = (op: EvalOperation) => ({
  id: op.id,
  op_type: op.opType,
  status: op.status,
  subject_ids: op.subjectIds,
  params: op.params,
  result: op.result,
  error: op.error,
  created_at: op.createdAt.toISOString(),
  finished_at: op.finishedAt?.toISOString() ?? null,
});

export async function recordOperation(
  db: Db | Prisma.TransactionClient,
  op: { opType: string; subjectIds: string[]; params: object; result: object; actor: Actor | null },
): Promise<EvalOperation> {
  return db.evalOperation.create({
    data: {
      opType: op.opType,
      status: 'completed',
      subjectIds: op.subjectIds,
      params: op.params as Prisma.InputJsonValue,
      result: op.result as Prisma.InputJsonValue,
      createdBy: op.actor?.userId ?? null,
      finishedAt: new Date(),
    },
  });
}

export async function listOperations(
  db: Db,
  query: {
    op_type?: string | undefined;
    subject_id?: string | undefined;
    limit: number;
    cursor?: string | undefined;
  },
) {
  const where: Prisma.EvalOperationWhereInput = {
    ...(query.op_type ? { opType: query.op_type } : {}),
    ...(query.subject_id ? { subjectIds: { has: query.subject_id } } : {}),
  };
  const rows = await db.evalOperation.findMany({
    where,
    orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
    take: query.limit + 1,
    ...(query.cursor ? { cursor: { id: query.cursor }, skip: 1 } : {}),
  });
  const page = rows.slice(0, query.limit);
  return {
    items: page.map(operationOut),
    next_cursor: rows.length > query.limit ? page[page.length - 1]!.id : null,
  };
}

export async function latestOperation(db: Db, opType: string, subjectId?: string) {
  const op = await db.evalOperation.findFirst({
    where: { opType, ...(subjectId ? { subjectIds: { has: subjectId } } : {}) },
    orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
  });
  if (!op) throw new NotFoundError(`no ${opType} operation has run${subjectId ? ` for ${subjectId}` : ''}`);
  return operationOut(op);
}
