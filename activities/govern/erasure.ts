import { ApplicationFailure, Context } from '@temporalio/activity';
import {
  bucketPlaces,
  countSql,
  evaluateProof,
  purgeSql,
  scrubText,
  scrubUpdateSql,
  storedKey,
  subjectIds,
  tablePlaces,
  type CatalogColumn,
  type ErasureProof,
  type ErasureReason,
  type ErasureSubjects,
  type PlaceCount,
} from '../../core/govern/erasure';
import { onceEventId } from '../../core/events/notify';
import type { Prisma } from '../../generated/prisma/client';
import { recordAudit } from '../audit';
import type { Db } from '../db';
import type { ActivityDeps } from '../deps';
import { emitEvent } from '../events/emit';
import { listKeys, removeKeys } from '../ingest/storage';
import type { ObjectStore } from '../storage/object-store';

export interface ErasureInput {
  erasureId: string;
}

/** States of a job that is still at work on its session. */
const ACTIVE_JOB_STATES = ['queued', 'running'];

/**
 * Why the session cannot be erased now, by name, or null: an ingest or an auto-label still writes
 * its frames and objects, and would write them again after the erasure. docs/erasure.md.
 */
export async function sessionBusy(db: Db, sessionId: string): Promise<string | null> {
  const ingest = await db.ingestJob.findFirst({
    where: { sessionId, state: { in: ACTIVE_JOB_STATES } },
  });
  if (ingest)
    return `session ${sessionId} is being ingested (ingest job ${ingest.id}, ${ingest.state}); erase it once the ingest has ended, or cancel it with POST /api/jobs/ingest/${ingest.id}/cancel`;
  const autolabel = await db.autolabelJob.findFirst({
    where: { sessionId, state: { in: ACTIVE_JOB_STATES } },
  });
  if (autolabel)
    return `session ${sessionId} is being auto-labelled (auto-label job ${autolabel.id}, ${autolabel.state}); erase it once the job has ended, or cancel it with POST /api/jobs/autolabel/${autolabel.id}/cancel`;
  return null;
}

/** Opens an erasure record of a session (the workflow does the rest). */
export async function openErasure(
  db: Db,
  input: {
    sessionId: string;
    sessionName: string | null;
    reason: ErasureReason;
    actorId: string | null;
    workflowId: string;
  },
): Promise<string> {
  const row = await db.erasure.create({
    data: {
      sessionId: input.sessionId,
      sessionName: input.sessionName,
      reason: input.reason,
      workflowId: input.workflowId,
      requestedBy: input.actorId,
    },
  });
  return row.id;
}

/** An erasure as the routes show it. */
export function erasureOut(e: Prisma.ErasureGetPayload<object>) {
  const proof = e.proof as { subjects?: unknown } | null;
  return {
    erasure_id: e.id,
    session_id: e.sessionId,
    session_name: e.sessionName,
    reason: e.reason,
    status: e.status,
    workflow_id: e.workflowId,
    deleted: e.deleted,
    // The collected ids are the erasure's working set while it runs, not part of its proof.
    proof: proof && !('subjects' in proof) ? proof : null,
    commit_ids: e.commitIds,
    error: e.error,
    requested_by: e.requestedBy,
    created_at: e.createdAt.toISOString(),
    finished_at: e.finishedAt?.toISOString() ?? null,
  };
}

/** What a session's erasure would delete, counted: the due list's preview and the erasure's own record. */
export async function erasurePreview(db: Db, sessionIds: readonly string[]) {
  const rows = await db.$queryRawUnsafe<
    Array<{
      id: string;
      frames: number;
      objects: number;
      tracks: number;
      pii_audits: number;
      commits: number;
    }>
  >(
    `SELECT s.id::text AS id,
       (SELECT count(*)::int FROM frames f WHERE f.session_id = s.id) AS frames,
       (SELECT count(*)::int FROM objects o JOIN frames f ON f.id = o.frame_id WHERE f.session_id = s.id) AS objects,
       (SELECT count(*)::int FROM tracks t WHERE t.session_id = s.id) AS tracks,
       (SELECT count(*)::int FROM pii_audits p JOIN frames f ON f.id = p.frame_id WHERE f.session_id = s.id) AS pii_audits,
       (SELECT count(*)::int FROM dataset_commits c WHERE s.id = ANY(c.session_ids)) AS commits
     FROM sessions s WHERE s.id = ANY($1::uuid[])`,
    [...sessionIds],
  );
  return new Map(rows.map(({ id, ...counts }) => [id, counts]));
}

const ids = (rows: Array<{ id: string }>) => rows.map((r) => r.id);

/** Reads every id and stored key of the session's data, before anything is deleted. */
async function collectSubjects(deps: ActivityDeps, sessionId: string): Promise<ErasureSubjects> {
  const { db, storage } = deps;
  const q = <T>(sql: string, ...params: unknown[]) => db.$queryRawUnsafe<T[]>(sql, ...params);
  const frames = await db.frame.findMany({
    where: { sessionId },
    select: { id: true, uri: true, redactedUri: true },
  });
  const frameIds = frames.map((f) => f.id);
  const trackIds = ids(
    await q<{ id: string }>(`SELECT id::text AS id FROM tracks WHERE session_id = $1::uuid`, sessionId),
  );
  const objectIds = ids(
    await q<{ id: string }>(
      // Live objects; those a corpus run replaced (kept whole for its revert) or created; reviews of
      // objects since deleted, found by their track; controls and gold copies of the session.
      `SELECT o.id::text AS id FROM objects o WHERE o.frame_id = ANY($2::uuid[])
       UNION SELECT e->'object'->>'id' FROM agent_run_frames a,
              jsonb_array_elements(CASE WHEN jsonb_typeof(a.replaced) = 'array' THEN a.replaced ELSE '[]' END) e
         WHERE a.frame_id = ANY($2::uuid[]) AND e->'object'->>'id' IS NOT NULL
       UNION SELECT unnest(a.created)::text FROM agent_run_frames a WHERE a.frame_id = ANY($2::uuid[])
       UNION SELECT r.object_id::text FROM reviews r
         WHERE r.before->>'track_id' = ANY($3::text[]) OR r.after->>'track_id' = ANY($3::text[])
       UNION SELECT c.object_id::text FROM control_samples c WHERE c.session_id = $1::uuid
       UNION SELECT g.object_id::text FROM gold_items g WHERE g.session_id = $1::uuid`,
      sessionId,
      frameIds,
      trackIds,
    ),
  );
  const uploadIds = ids(
    await q<{ id: string }>(
      `SELECT u.id::text AS id FROM uploads u JOIN ingest_jobs j ON j.source->>'uploadId' = u.id::text WHERE j.session_id = $1::uuid`,
      sessionId,
    ),
  );
  const masks = await db.annoObject.findMany({
    where: { frameId: { in: frameIds }, maskUri: { not: null } },
    select: { maskUri: true },
  });
  const uploads = await db.upload.findMany({ where: { id: { in: uploadIds } }, select: { objectKey: true } });
  // The redacted copies a PII run kept for its revert (docs/pii-recheck.md), under the run's folder.
  const kept = await q<{ key: string }>(
    `SELECT a.replaced->>'kept_key' AS key FROM agent_run_frames a
      WHERE a.frame_id = ANY($1::uuid[]) AND jsonb_typeof(a.replaced) = 'object' AND a.replaced->>'kept_key' IS NOT NULL`,
    frameIds,
  );
  const keys = [
    ...frames.map((f) => storedKey(f.uri, storage.bucket('frames'))),
    ...frames.flatMap((f) => (f.redactedUri ? [storedKey(f.redactedUri, storage.bucket('redacted'))] : [])),
    ...masks.map((m) => storedKey(m.maskUri!, storage.bucket('masks'))),
    ...uploads.map((u) => ({ bucket: storage.bucket('uploads'), key: u.objectKey })),
  ];
  const commits = await db.datasetCommit.findMany({
    where: { sessionIds: { has: sessionId } },
    select: { commitId: true, prefix: true },
  });
  const lake = await db.lakeTable.findMany({
    where: { commitId: { in: commits.map((c) => c.commitId) } },
    select: { key: true },
  });
  return {
    sessionId,
    frameIds,
    objectIds,
    trackIds,
    uploadIds,
    keys,
    prefixes: [
      // Each kept copy by its exact key: its folder under the run may hold other sessions' copies.
      ...kept.map((k) => ({ bucket: storage.bucket('redacted'), prefix: k.key })),
      ...commits.map((c) => ({ bucket: storage.bucket('exports'), prefix: c.prefix })),
      ...lake.map((t) => ({ bucket: storage.bucket('lake'), prefix: t.key })),
    ],
    commitIds: commits.map((c) => c.commitId),
  };
}

/** The erasure's working set, stored once collected (a retried step must not recollect from half-deleted rows). */
async function storedSubjects(db: Db, erasureId: string): Promise<ErasureSubjects> {
  const e = await db.erasure.findUniqueOrThrow({ where: { id: erasureId } });
  const subjects = (e.proof as { subjects?: ErasureSubjects } | null)?.subjects;
  if (!subjects) throw new Error(`erasure ${erasureId} has not collected what it erases yet`);
  return subjects;
}

/** Adds counts to the erasure's `deleted` tally (per place), in one statement so concurrent steps cannot lose any. */
async function addDeleted(db: Db, erasureId: string, counts: Record<string, number>): Promise<void> {
  const nonZero = Object.fromEntries(Object.entries(counts).filter(([, n]) => n > 0));
  if (!Object.keys(nonZero).length) return;
  await db.$executeRawUnsafe(
    `UPDATE erasures SET deleted = (
       SELECT jsonb_object_agg(k, COALESCE((deleted->>k)::int, 0) + COALESCE((($2::jsonb)->>k)::int, 0))
       FROM (SELECT jsonb_object_keys(deleted) AS k UNION SELECT jsonb_object_keys($2::jsonb)) AS keys)
     WHERE id = $1::uuid`,
    erasureId,
    JSON.stringify(nonZero),
  );
}

/** Every column of every table of the schema, from the catalogue (so a table added later is searched too). */
async function catalogColumns(db: Db): Promise<CatalogColumn[]> {
  return db.$queryRawUnsafe<CatalogColumn[]>(
    `SELECT c.table_name AS "table", c.column_name AS "column", c.data_type AS "dataType", c.udt_name AS "udtName"
     FROM information_schema.columns c
     JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name
     WHERE c.table_schema = current_schema() AND t.table_type = 'BASE TABLE'
     ORDER BY c.table_name, c.ordinal_position`,
  );
}

async function countObjects(storage: ObjectStore, bucket: string, prefix: string): Promise<number> {
  return (await listKeys(storage, bucket, prefix)).length;
}

const beat = (detail?: unknown) => {
  // Outside an activity (a route computing a preview) there is nobody to tell.
  try {
    Context.current().heartbeat(detail);
  } catch {
    /* not in an activity */
  }
};

/** The activities of EraseSessionWorkflow (docs/erasure.md), on the `cpu` queue; each may run again and ends the same. */
export function createErasureActivities(deps: ActivityDeps) {
  const { db, storage } = deps;
  const bucketRoles = {
    frames: storage.bucket('frames'),
    redacted: storage.bucket('redacted'),
    masks: storage.bucket('masks'),
  };

  const proveNow = async (erasureId: string): Promise<ErasureProof> => {
    const subjects = await storedSubjects(db, erasureId);
    const search = subjectIds(subjects);
    const counts: PlaceCount[] = [];
    for (const place of tablePlaces(await catalogColumns(db))) {
      const [row] = await db.$queryRawUnsafe<Array<{ n: number }>>(countSql(place), search);
      counts.push({ place: place.place, kind: 'table', remaining: row!.n });
      beat(place.place);
    }
    for (const place of bucketPlaces(subjects, bucketRoles))
      counts.push({
        place: place.place,
        kind: 'bucket',
        remaining: await countObjects(storage, place.bucket, place.prefix),
      });
    return evaluateProof(subjects, counts, new Date());
  };

  return {
    /**
     * Refuses a session still being ingested or auto-labelled (non-retryable, by name) and marks it
     * `erasing`. A session already gone is fine when this erasure collected it before (a resumed or
     * repeated erasure); otherwise there is nothing to erase.
     */
    checkErasable: async ({ erasureId }: ErasureInput): Promise<void> => {
      const erasure = await db.erasure.findUniqueOrThrow({ where: { id: erasureId } });
      const session = await db.session.findUnique({ where: { id: erasure.sessionId } });
      if (!session) {
        if ((erasure.proof as { subjects?: unknown } | null)?.subjects) return;
        throw ApplicationFailure.nonRetryable(`no session ${erasure.sessionId}`, 'SessionNotFound');
      }
      const busy = await sessionBusy(db, session.id);
      if (busy) throw ApplicationFailure.nonRetryable(busy, 'SessionBusy');
      await db.session.update({ where: { id: session.id }, data: { state: 'erasing' } });
      await db.erasure.update({ where: { id: erasureId }, data: { status: 'running', error: null } });
    },

    /** Collects every id and stored key of the session once, into the erasure row. */
    collectErasureSubjects: async ({ erasureId }: ErasureInput) => {
      const erasure = await db.erasure.findUniqueOrThrow({ where: { id: erasureId } });
      const have = (erasure.proof as { subjects?: ErasureSubjects } | null)?.subjects;
      const subjects = have ?? (await collectSubjects(deps, erasure.sessionId));
      if (!have)
        await db.erasure.update({
          where: { id: erasureId },
          data: { proof: { subjects } as unknown as Prisma.InputJsonValue, commitIds: subjects.commitIds },
        });
      return {
        frames: subjects.frameIds.length,
        objects: subjects.objectIds.length,
        tracks: subjects.trackIds.length,
        uploads: subjects.uploadIds.length,
        commits: subjects.commitIds.length,
      };
    },

    /** Marks the dataset commits that contained the session: their lineage names it as erased. */
    markErasedCommits: async ({ erasureId }: ErasureInput): Promise<number> => {
      const { sessionId, commitIds } = await storedSubjects(db, erasureId);
      return db.$executeRawUnsafe(
        `UPDATE dataset_commits SET erased_session_ids = array_append(erased_session_ids, $1::uuid)
         WHERE commit_id = ANY($2::text[]) AND NOT ($1::uuid = ANY(erased_session_ids))`,
        sessionId,
        commitIds,
      );
    },

    /**
     * Deletes the stored objects: frame images and redacted copies, mask blobs (every version), the
     * upload, and the files of the commits and lake tables that held the session.
     */
    deleteErasureObjects: async ({ erasureId }: ErasureInput): Promise<number> => {
      const subjects = await storedSubjects(db, erasureId);
      const removed: Record<string, number> = {};
      for (const place of bucketPlaces(subjects, bucketRoles)) {
        const keys = await listKeys(storage, place.bucket, place.prefix);
        await removeKeys(storage, place.bucket, keys);
        removed[`bucket:${place.bucket}`] = (removed[`bucket:${place.bucket}`] ?? 0) + keys.length;
        beat(place.place);
      }
      await addDeleted(db, erasureId, removed);
      return Object.values(removed).reduce((a, b) => a + b, 0);
    },

    /**
     * Deletes the session row, and with it (foreign keys) its frames, objects and their provenance,
     * tracks, PII audits, health rows, ingest job, candidates and rejected frames, embeddings,
     * drivable areas, predictions, checkpoints and corpus-run frames; and the lake tables published
     * from the commits that held it. What no foreign key reaches is the purge's.
     */
    deleteErasureRows: async ({ erasureId }: ErasureInput): Promise<void> => {
      const { sessionId, commitIds } = await storedSubjects(db, erasureId);
      const [counts] = await db.$queryRawUnsafe<Array<Record<string, number>>>(
        `SELECT
           (SELECT count(*)::int FROM frames WHERE session_id = $1::uuid) AS "table:frames",
           (SELECT count(*)::int FROM objects o JOIN frames f ON f.id = o.frame_id WHERE f.session_id = $1::uuid) AS "table:objects",
           (SELECT count(*)::int FROM tracks WHERE session_id = $1::uuid) AS "table:tracks",
           (SELECT count(*)::int FROM pii_audits p JOIN frames f ON f.id = p.frame_id WHERE f.session_id = $1::uuid) AS "table:pii_audits",
           (SELECT count(*)::int FROM session_health WHERE session_id = $1::uuid) AS "table:session_health",
           (SELECT count(*)::int FROM sessions WHERE id = $1::uuid) AS "table:sessions"`,
        sessionId,
      );
      const lake = await db.lakeTable.deleteMany({ where: { commitId: { in: commitIds } } });
      await db.session.deleteMany({ where: { id: sessionId } });
      await addDeleted(db, erasureId, { ...counts, 'table:lake_tables': lake.count });
    },

    /**
     * The generic purge over every place of the catalogue: rows whose UUID column names an erased
     * id are deleted, arrays lose the ids, text and JSON values that mention one have it replaced
     * by the nil UUID (core/govern/erasure.ts).
     */
    purgeErasurePlaces: async ({ erasureId }: ErasureInput): Promise<number> => {
      const subjects = await storedSubjects(db, erasureId);
      const search = subjectIds(subjects);
      const idSet = new Set(search);
      const changed: Record<string, number> = {};
      const places = tablePlaces(await catalogColumns(db));
      // Rows go first, so the values scrubbed after are only those of rows that stay.
      const order = { uuid: 0, uuid_array: 1, text: 2 } as const;
      for (const place of [...places].sort((a, b) => order[a.holding] - order[b.holding])) {
        const { mode, sql } = purgeSql(place);
        let n = 0;
        if (mode === 'select') {
          const rows = await db.$queryRawUnsafe<Array<{ row_ref: string; value: string }>>(sql, search);
          for (const row of rows)
            n += await db.$executeRawUnsafe(scrubUpdateSql(place), row.row_ref, scrubText(row.value, idSet));
        } else n = await db.$executeRawUnsafe(sql, search);
        if (n) changed[`${mode === 'delete' ? 'table' : 'scrubbed'}:${place.table}`] = n;
        beat(place.place);
      }
      await addDeleted(db, erasureId, changed);
      return Object.values(changed).reduce((a, b) => a + b, 0);
    },

    /**
     * Searches every place for every id and stores the proof. Complete: the erasure is done, its
     * working set of ids dropped, its event emitted. Not complete on the last try: it fails naming
     * the places that still hold something.
     */
    proveErasure: async ({
      erasureId,
      last,
    }: ErasureInput & { last: boolean }): Promise<{ complete: boolean; not_empty: string[] }> => {
      const proof = await proveNow(erasureId);
      if (!proof.complete) {
        if (last)
          throw ApplicationFailure.nonRetryable(
            `the erasure left data in ${proof.not_empty.join(', ')}`,
            'ErasureIncomplete',
          );
        return { complete: false, not_empty: proof.not_empty };
      }
      await db.$transaction(async (tx) => {
        const e = await tx.erasure.update({
          where: { id: erasureId },
          data: {
            status: 'completed',
            proof: proof as unknown as Prisma.InputJsonValue,
            finishedAt: new Date(),
          },
        });
        await recordAudit(tx, {
          actorId: e.requestedBy,
          action: 'session.erased',
          subjectType: 'session',
          subjectId: e.sessionId,
          detail: {
            erasure_id: e.id,
            reason: e.reason,
            deleted: e.deleted,
            commit_ids: e.commitIds,
            places: proof.places.length,
          },
        });
        // The event names the erasure, not the session: events and notifications are searched by the next erasure's proof.
        await emitEvent(tx, {
          id: onceEventId('erasure.completed', e.id),
          kind: 'erasure.completed',
          subjectType: 'erasure',
          subjectId: e.id,
          actorId: e.requestedBy,
          payload: {
            erasure_id: e.id,
            reason: e.reason,
            places: proof.places.length,
            commits_marked: e.commitIds.length,
          },
        });
      });
      return { complete: true, not_empty: [] };
    },

    /** Records why an erasure failed; a session it had begun to delete stays `erasing` until an erase runs again. */
    failErasure: async ({ erasureId, error }: ErasureInput & { error: string }): Promise<void> => {
      const e = await db.erasure.update({
        where: { id: erasureId },
        data: { status: 'failed', error, finishedAt: new Date() },
      });
      await recordAudit(db, {
        actorId: e.requestedBy,
        action: 'session.erasure_failed',
        subjectType: 'session',
        subjectId: e.sessionId,
        detail: { erasure_id: e.id, error },
      });
      await emitEvent(db, {
        id: onceEventId('erasure.failed', e.id, Context.current().info.workflowExecution?.runId ?? e.id),
        kind: 'erasure.failed',
        subjectType: 'erasure',
        subjectId: e.id,
        actorId: e.requestedBy,
        payload: { erasure_id: e.id, reason: e.reason, error },
      });
    },
  };
}
