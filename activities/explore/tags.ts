import { NotFoundError } from '../../core/errors';
import { Prisma } from '../../generated/prisma/client';
import type { Actor } from '../annotations/objects';
import type { Db } from '../db';

/**
 * Tags people put on frames and objects while exploring (POST /api/explore/tag): free-form labels,
 * one row per (tag, target), so tagging twice changes nothing.
 */

export type TagTargetKind = 'frame' | 'object';

/** Tags the targets; every target must exist (404 naming the missing), and those already tagged stay as they are. */
export async function tagTargets(
  db: Db,
  input: { tag: string; target_kind: TagTargetKind; target_ids: string[] },
  actor: Actor,
) {
  const ids = [...new Set(input.target_ids.map((id) => id.toLowerCase()))];
  const found = new Set(
    (input.target_kind === 'frame'
      ? await db.frame.findMany({ where: { id: { in: ids } }, select: { id: true } })
      : await db.annoObject.findMany({ where: { id: { in: ids } }, select: { id: true } })
    ).map((r) => r.id),
  );
  const missing = ids.filter((id) => !found.has(id));
  if (missing.length)
    throw new NotFoundError(`${missing.length} ${input.target_kind}(s) do not exist`, {
      missing: missing.slice(0, 100),
    });
  const { count } = await db.exploreTag.createMany({
    data: ids.map((targetId) => ({
      tag: input.tag,
      targetKind: input.target_kind,
      targetId,
      createdBy: actor.userId,
    })),
    skipDuplicates: true,
  });
  return {
    tag: input.tag,
    target_kind: input.target_kind,
    targets: ids.length,
    tagged: count,
    already_tagged: ids.length - count,
  };
}

/**
 * Tags with how many frames and objects carry each, most used first; filtered to one kind of
 * target, one target, or tags starting with a prefix.
 */
export async function listTags(
  db: Db,
  query: {
    target_kind?: TagTargetKind | undefined;
    target_id?: string | undefined;
    prefix?: string | undefined;
    limit: number;
  },
) {
  const where = [
    query.target_kind ? Prisma.sql`target_kind = ${query.target_kind}` : Prisma.sql`TRUE`,
    query.target_id ? Prisma.sql`target_id = ${query.target_id}::uuid` : Prisma.sql`TRUE`,
    // starts_with, not LIKE: a `%` or `_` in the prefix is itself.
    query.prefix ? Prisma.sql`starts_with(tag, ${query.prefix})` : Prisma.sql`TRUE`,
  ];
  const rows = await db.$queryRaw<Array<{ tag: string; frames: bigint; objects: bigint }>>`
    SELECT tag, count(*) FILTER (WHERE target_kind = 'frame') AS frames,
           count(*) FILTER (WHERE target_kind = 'object') AS objects
      FROM explore_tags WHERE ${Prisma.join(where, ' AND ')}
     GROUP BY tag ORDER BY count(*) DESC, tag LIMIT ${query.limit + 1}`;
  return {
    items: rows.slice(0, query.limit).map((r) => ({
      tag: r.tag,
      frames: Number(r.frames),
      objects: Number(r.objects),
      total: Number(r.frames) + Number(r.objects),
    })),
    truncated: rows.length > query.limit,
  };
}
