import { z } from 'zod';
import { commitIdSchema, findCommit } from '../../../activities/datasets/read';
import { verifyCommit } from '../../../activities/datasets/transfer';
import { createCertificateSigner } from '../../../activities/export/signing';
import { NotFoundError } from '../../../core/errors';
import { decodeCursor, encodeCursor } from '../../../core/pagination';
import { Prisma } from '../../../generated/prisma/client';
import type { AppDeps } from '../../deps';
import { RouteGroup, uuidParams } from '../../http/route-group';
import { limitParam } from '../../http/session-reads';

/**
 * The `release` group (docs/datasets-release.md). A commit is released when it is recorded: it is
 * immutable and signed from that moment, and there is no separate release step, so the registry
 * lists every commit. Verification re-hashes the stored files within the request: a verifier wants
 * the verdict, the work is bounded by the commit's size, and nothing of it needs to survive the
 * request; a caller that hangs up stops it.
 */

export const MAX_REGISTRY_PAGE = 200;

const RegistryQuery = z.strictObject({
  name: z.string().min(1).max(200).optional(),
  cursor: z.string().max(512).optional(),
  limit: limitParam(50, MAX_REGISTRY_PAGE),
});

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

interface RegistryRow {
  commit_id: string;
  job_id: string;
  key_at: string;
  name: string;
  version: number;
  parent_id: string | null;
  created_at: Date;
  key_id: string;
  files: number;
  bytes: bigint;
  objects: number | null;
  gate_mode: string | null;
  gate_outcome: string | null;
}

export function createReleaseRoutes(deps: AppDeps): RouteGroup {
  const { db, storage } = deps;
  const signer = createCertificateSigner(deps.config.export);
  // `registry` and `gold/…` are declared before `{commit_id}/verify`; their depths differ anyway.
  return new RouteGroup('release')
    .get(
      '/api/release/registry',
      {
        summary: `Released dataset commits (every commit: each is signed and immutable once recorded), newest first by keyset pagination (pass next_cursor back as cursor; limit at most ${MAX_REGISTRY_PAGE}); ?name= keeps one dataset`,
        access: 'reviewer',
        query: RegistryQuery,
      },
      async ({ query }) => {
        const conds: Prisma.Sql[] = [];
        if (query.name) conds.push(Prisma.sql`name = ${query.name}`);
        // The job id (a UUID, unique per commit) breaks ties of equal times, so the shared cursor format fits.
        if (query.cursor) {
          const after = decodeCursor(query.cursor);
          conds.push(Prisma.sql`(created_at, job_id) < (${after.createdAt}::timestamptz, ${after.id}::uuid)`);
        }
        // Sizes are summed in the database: a page never loads the file lists themselves.
        const rows = await db.$queryRaw<RegistryRow[]>`
          SELECT commit_id, job_id::text AS job_id, name, version, parent_id, created_at, key_id,
                 to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS key_at,
                 jsonb_array_length(files) AS files,
                 (SELECT COALESCE(SUM((f->>'size')::bigint), 0) FROM jsonb_array_elements(files) f)::bigint AS bytes,
                 CASE WHEN jsonb_typeof(counts->'objects') = 'number' THEN (counts->>'objects')::float8 END AS objects,
                 gate->>'mode' AS gate_mode, gate->>'outcome' AS gate_outcome
            FROM dataset_commits
           ${conds.length ? Prisma.sql`WHERE ${Prisma.join(conds, ' AND ')}` : Prisma.empty}
           ORDER BY created_at DESC, job_id DESC
           LIMIT ${query.limit + 1}`;
        const page = rows.slice(0, query.limit);
        const last = page.at(-1);
        return {
          items: page.map((r) => ({
            commit_id: r.commit_id,
            name: r.name,
            version: r.version,
            parent_id: r.parent_id,
            created_at: r.created_at.toISOString(),
            key_id: r.key_id,
            files: r.files,
            bytes: Number(r.bytes),
            objects: r.objects,
            gate_mode: r.gate_mode,
            gate_outcome: r.gate_outcome,
            certificate: `/api/export/${r.commit_id}/certificate`,
            verify: `/api/release/${r.commit_id}/verify`,
          })),
          limit: query.limit,
          next_cursor:
            rows.length > query.limit && last
              ? encodeCursor({ createdAt: last.key_at, id: last.job_id })
              : null,
        };
      },
    )
    .get(
      '/api/release/gold/{gold_id}/lineage',
      {
        summary:
          "A gold set's lineage: its objects' frames and sessions (objects deleted since sealing are counted as missing) and the commits that contain any of those sessions, newest first",
        access: 'annotator',
        params: uuidParams('gold_id'),
        statuses: { 404: 'no such gold set' },
      },
      async ({ params }) => {
        const gold = await db.goldSet.findUnique({ where: { id: params.gold_id } });
        if (!gold) throw new NotFoundError(`no gold set ${params.gold_id}`);
        const ids = [...new Set(gold.objectIds)];
        // Ids are kept as text in the gold set; one that is not a UUID cannot name an object.
        const objects = await db.annoObject.findMany({
          where: { id: { in: ids.filter((id) => UUID.test(id)) } },
          select: { id: true, frameId: true, frame: { select: { sessionId: true } } },
        });
        const sessions = new Map<string, { frames: Set<string>; objects: number }>();
        for (const o of objects) {
          const s = sessions.get(o.frame.sessionId) ?? { frames: new Set<string>(), objects: 0 };
          s.frames.add(o.frameId);
          s.objects++;
          sessions.set(o.frame.sessionId, s);
        }
        const sessionIds = [...sessions.keys()].sort();
        const commits = sessionIds.length
          ? await db.datasetCommit.findMany({
              where: { sessionIds: { hasSome: sessionIds } },
              orderBy: [{ createdAt: 'desc' }, { commitId: 'asc' }],
              select: { commitId: true, name: true, version: true, createdAt: true, sessionIds: true },
            })
          : [];
        return {
          gold_id: gold.id,
          name: gold.name,
          sealed_at: gold.sealedAt?.toISOString() ?? null,
          objects: { total: ids.length, found: objects.length, missing: ids.length - objects.length },
          frame_ids: [...new Set(objects.map((o) => o.frameId))].sort(),
          sessions: sessionIds.map((id) => ({
            session_id: id,
            frames: sessions.get(id)!.frames.size,
            objects: sessions.get(id)!.objects,
          })),
          commits: commits.map((c) => ({
            commit_id: c.commitId,
            name: c.name,
            version: c.version,
            created_at: c.createdAt.toISOString(),
            // Which of the gold set's sessions the commit draws on.
            sessions: c.sessionIds.filter((id) => sessions.has(id)).sort(),
          })),
        };
      },
    )
    .get(
      '/api/release/{commit_id}/verify',
      {
        summary:
          "Re-hashes every stored file of a commit (size and SHA-256 against the record), checks that the file list is the certificate's and that the manifest hashes to the commit id, and verifies the signature; valid only when all hold. Runs within the request",
        access: 'reviewer',
        params: z.object({ commit_id: commitIdSchema }),
        statuses: { 404: 'no such commit' },
      },
      async ({ res, params }) => {
        const commit = await findCommit(db, params.commit_id);
        const left = new AbortController();
        res.on('close', () => {
          if (!res.writableFinished) left.abort();
        });
        return verifyCommit(storage, signer, commit, left.signal);
      },
    );
}
