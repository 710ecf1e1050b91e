import { SlicePredicate } from '../../core/curation/slice';
import { NotFoundError } from '../../core/errors';
import type { ExploreView, Prisma, Slice } from '../../generated/prisma/client';
import type { Actor } from '../annotations/objects';
import { recordAudit } from '../audit';
import { sliceOut } from '../curation/slices';
import { checkPredicate } from '../curation/slice-query';
import type { Db } from '../db';
import { inOrder, newestFirst, type Page } from './paging';

/**
 * Saved explore views (POST /api/explore/views): a view is a curation slice (its predicate is what
 * the view shows, and what its export spec exports) plus the view's own state (projection,
 * colouring, selection… as the client saved them), keyed by the slice's id.
 */

export const viewOut = (view: ExploreView, slice: Slice) => ({
  slice_id: slice.id,
  name: slice.name,
  predicate: slice.predicate,
  unmatchable: sliceOut(slice).unmatchable,
  state: view.state,
  created_by: view.createdBy,
  created_at: view.createdAt.toISOString(),
  export_spec_url: `/api/explore/views/${slice.id}/export-spec`,
});

/**
 * Saves the slice and the view in one transaction. The predicate is checked as the curation slice
 * route checks it (`checkPredicate`: unknown classes, l1 or lighting values are a 422 naming them);
 * the slice row is written here rather than through `createSlice`, whose own transaction could not
 * hold the view too, and is audited as a slice like any other.
 */
export async function saveView(
  db: Db,
  input: { name: string; predicate: SlicePredicate; state: Record<string, unknown> },
  actor: Actor,
) {
  await checkPredicate(db, input.predicate, 'body.predicate');
  const { slice, view } = await db.$transaction(async (tx) => {
    const slice = await tx.slice.create({
      data: {
        name: input.name,
        predicate: input.predicate as Prisma.InputJsonValue,
        createdBy: actor.userId,
      },
    });
    const view = await tx.exploreView.create({
      data: { sliceId: slice.id, state: input.state as Prisma.InputJsonValue, createdBy: actor.userId },
    });
    await recordAudit(tx, {
      actorId: actor.userId,
      action: 'curation.slice.created',
      subjectType: 'slice',
      subjectId: slice.id,
      detail: { name: slice.name, predicate: input.predicate as Prisma.InputJsonValue, explore_view: true },
      requestId: actor.requestId,
    });
    return { slice, view };
  });
  return viewOut(view, slice);
}

export async function listViews(db: Db, page: Page) {
  const { ids, next_cursor } = await newestFirst(db, 'views', page);
  const [views, slices] = await Promise.all([
    db.exploreView.findMany({ where: { sliceId: { in: ids } } }),
    db.slice.findMany({ where: { id: { in: ids } } }),
  ]);
  const sliceBy = new Map(slices.map((s) => [s.id, s]));
  return {
    items: inOrder(ids, views, (v) => v.sliceId).flatMap((v) =>
      sliceBy.has(v.sliceId) ? [viewOut(v, sliceBy.get(v.sliceId)!)] : [],
    ),
    limit: page.limit,
    next_cursor,
  };
}

/** A saved view and its slice (404 when either is gone). */
export async function findView(db: Db, sliceId: string): Promise<{ view: ExploreView; slice: Slice }> {
  const [view, slice] = await Promise.all([
    db.exploreView.findUnique({ where: { sliceId } }),
    db.slice.findUnique({ where: { id: sliceId } }),
  ]);
  if (!view) throw new NotFoundError(`no explore view ${sliceId}`);
  if (!slice) throw new NotFoundError(`the slice of explore view ${sliceId} no longer exists`);
  // Read back through the schema: what the export will parse.
  SlicePredicate.parse(slice.predicate);
  return { view, slice };
}

/** A dataset name (ExportIn.name: lower-case letters, digits, `.`, `_`, `-`; at most 64) made from a view's name. */
export function exportNameOf(name: string, sliceId: string): string {
  const cleaned = name
    .toLowerCase()
    .normalize('NFKD')
    .replace(/[^a-z0-9._-]+/g, '-')
    .replace(/^[^a-z0-9]+/, '')
    .slice(0, 64)
    .replace(/-+$/, '');
  return cleaned && !['download', 'lineage'].includes(cleaned) ? cleaned : `view-${sliceId.slice(0, 8)}`;
}
