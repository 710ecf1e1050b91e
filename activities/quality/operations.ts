import { NotFoundError } from '../../core/errors';
import { idCursorArgs, idPage } from '../../core/pagination';
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

/**
 * Records a run's evaluation against a gold set (the gold measure, harness parity): its subjects
 * are the gold set, the run and the run's model, its params those ids followed by `options`; the
 * answer is the result with the operation's id and the same ids.
 */
export async function recordRunGoldOperation<R extends object>(
  db: Db,
  opType: string,
  subject: { gold: { id: string }; run: { id: string; modelVersion: string } },
  options: object,
  result: R,
  actor: Actor | null,
) {
  const ids = { gold_id: subject.gold.id, run_id: subject.run.id, model_version: subject.run.modelVersion };
  const op = await recordOperation(db, {
    opType,
    subjectIds: [ids.gold_id, ids.run_id, ids.model_version],
    params: { ...ids, ...options },
    result,
    actor,
  });
  return { operation_id: op.id, ...ids, ...result };
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
    ...idCursorArgs(query),
  });
  const { page, next_cursor } = idPage(rows, query.limit);
  return { items: page.map(operationOut), next_cursor };
}

export async function latestOperation(db: Db, opType: string, subjectId?: string) {
  const op = await db.evalOperation.findFirst({
    where: { opType, ...(subjectId ? { subjectIds: { has: subjectId } } : {}) },
    orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
  });
  if (!op) throw new NotFoundError(`no ${opType} operation has run${subjectId ? ` for ${subjectId}` : ''}`);
  return operationOut(op);
}
