import { decodeJobCursor, encodeJobCursor } from '../../core/jobs/cursor';
import { rawStatesOf, type JobKind, type JobState } from '../../core/jobs/kinds';
import { NotFoundError } from '../../core/errors';
import { Prisma } from '../../generated/prisma/client';
import type { Db } from '../db';
import { JOB_SOURCES, type JobItem } from './sources';

interface JobKey {
  kind: JobKind;
  id: string;
  key_at: string;
}

/**
 * One page of jobs of the given kinds, newest first. The keys of every table come from one
 * UNION ALL ordered by (created_at, kind, id), so the page is one database round trip however many
 * kinds it merges; then each kind's rows of the page are read whole, one query per kind present.
 */
export async function listJobs(
  db: Db,
  filter: {
    kinds: readonly JobKind[];
    state?: JobState | undefined;
    limit: number;
    cursor?: string | undefined;
  },
): Promise<{ items: JobItem[]; next_cursor: string | null }> {
  const branches = filter.kinds.flatMap((kind) => {
    const source = JOB_SOURCES[kind];
    const conds = source.where ? [source.where] : [];
    if (filter.state) {
      const raws = rawStatesOf(kind, filter.state);
      if (!raws.length) return [];
      conds.push(Prisma.sql`${source.state} IN (${Prisma.join(raws)})`);
    }
    return [
      Prisma.sql`SELECT ${kind}::text AS kind, id, created_at FROM ${Prisma.raw(source.table)}
        ${conds.length ? Prisma.sql`WHERE ${Prisma.join(conds, ' AND ')}` : Prisma.empty}`,
    ];
  });
  if (!branches.length) return { items: [], next_cursor: null };
  const after = filter.cursor ? decodeJobCursor(filter.cursor) : null;
  const keys = await db.$queryRaw<JobKey[]>`
    SELECT kind, id::text AS id,
           to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS key_at
      FROM (${Prisma.join(branches, ' UNION ALL ')}) AS jobs
     ${
       after
         ? Prisma.sql`WHERE (created_at, kind, id) < (${after.createdAt}::timestamptz, ${after.kind}::text, ${after.id}::uuid)`
         : Prisma.empty
     }
     ORDER BY created_at DESC, kind DESC, id DESC
     LIMIT ${filter.limit + 1}`;
  const page = keys.slice(0, filter.limit);
  const read = new Map<string, JobItem>();
  for (const kind of new Set(page.map((k) => k.kind))) {
    const ids = page.filter((k) => k.kind === kind).map((k) => k.id);
    for (const item of await JOB_SOURCES[kind].read(db, ids)) read.set(`${kind}/${item.job_id}`, item);
  }
  const last = page.at(-1);
  return {
    // A row deleted between the two reads is left out rather than shown half.
    items: page.flatMap((k) => read.get(`${k.kind}/${k.id}`) ?? []),
    next_cursor:
      keys.length > filter.limit && last
        ? encodeJobCursor({ kind: last.kind, createdAt: last.key_at, id: last.id })
        : null,
  };
}

/** One job of a kind, by id: a row of its table that is a job (not an imported run, not a gate verdict). */
export async function findJob(db: Db, kind: JobKind, id: string): Promise<JobItem> {
  const source = JOB_SOURCES[kind];
  const found = await db.$queryRaw<Array<{ id: string }>>`
    SELECT id::text AS id FROM ${Prisma.raw(source.table)}
     WHERE id = ${id}::uuid ${source.where ? Prisma.sql`AND ${source.where}` : Prisma.empty}`;
  const [item] = found.length ? await source.read(db, [id]) : [];
  if (!item) throw new NotFoundError(`no ${kind} job ${id}`);
  return item;
}

/** Every queued or running job of the kinds, all pages, queued ones first. */
export async function jobsInFlight(db: Db, kinds: readonly JobKind[]): Promise<JobItem[]> {
  const out: JobItem[] = [];
  for (const state of ['queued', 'running'] as const) {
    let cursor: string | undefined;
    do {
      const page = await listJobs(db, { kinds, state, limit: 200, cursor });
      out.push(...page.items);
      cursor = page.next_cursor ?? undefined;
    } while (cursor);
  }
  return out;
}
