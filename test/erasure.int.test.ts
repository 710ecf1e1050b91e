import path from 'node:path';
import pg from 'pg';
import { createMaskStore } from '../activities/annotations/masks';
import { listKeys } from '../activities/ingest/storage';
import type { Frame } from '../generated/prisma/client';
import { startIngestStack, type IngestStack } from '../testkit/media/harness';
import { createSessionFixture } from '../testkit/session-fixtures';
import { recordHistoryIfAsked, replayRecordedHistory } from '../testkit/temporal';

/**
 * A data-protection officer erases a session on the real stack (PostgreSQL, Temporal, MinIO, the
 * cpu worker) and gets a proof that nothing remains: checked here independently of the proof, by a
 * scan of every column of every table and every object of every bucket for every id of the
 * session's data (docs/erasure.md). A second session, exported in the same commit, stays whole.
 */
const HISTORY = path.join(__dirname, 'histories/erase-session.json');
let stack: IngestStack;
let carId: number;

interface Drive {
  sessionId: string;
  frames: Frame[];
  objectIds: string[];
  trackId: string;
}

beforeAll(async () => {
  stack = await startIngestStack();
  carId = (await stack.api.deps.db.ontologyClass.findFirstOrThrow({ where: { name: 'car' } })).id;
}, 120_000);

afterAll(async () => {
  await stack?.close();
});

const call = (method: string, p: string, token: string, body?: unknown) =>
  stack.api.call(method, p, { token, body });

/** A drive with what a real one leaves behind: images, redacted copies, audits, objects with masks, a track, reviews, provenance, health. */
async function drive(name: string): Promise<Drive> {
  const { db, storage } = stack.api.deps;
  const { session, frames } = await createSessionFixture(
    { db, storage },
    { frames: 3, redacted: true, session: { name } },
  );
  const track = await db.track.create({ data: { sessionId: session.id, trackerVersion: 'bytetrack-ts-1' } });
  const objectIds: string[] = [];
  for (const f of frames) {
    await db.piiAudit.create({
      data: { frameId: f.id, nFaces: 1, regions: [{ kind: 'face', bbox: [5, 5, 9, 9], score: 0.9 }] },
    });
    const o = await db.annoObject.create({
      data: {
        frameId: f.id,
        classId: carId,
        bbox: [4, 4, 40, 30],
        source: 'fused',
        state: 'accepted',
        conf: 0.9,
        trackId: track.id,
      },
    });
    const uri = await createMaskStore(storage).put({
      object_id: o.id,
      version: 1,
      polygons: [[4, 4, 40, 4, 40, 30]],
    });
    await db.annoObject.update({ where: { id: o.id }, data: { maskUri: uri } });
    await db.provenance.create({
      data: { objectId: o.id, paths: ['closed_set'], rawConfidences: { closed_set: 0.9 } },
    });
    objectIds.push(o.id);
  }
  const review = await call('POST', `/api/objects/${objectIds[0]}/review`, stack.reviewer, {
    action: 'reject',
  });
  expect(review.status).toBeLessThan(300);
  await db.sessionHealth.create({
    data: { sessionId: session.id, indexerVersion: 'test', passed: true, score: 0.9 },
  });
  return { sessionId: session.id, frames, objectIds, trackId: track.id };
}

/** Every (table.column, row count) whose value mentions one of `ids`, over the whole schema. */
async function tableMentions(ids: string[], exempt: readonly string[]): Promise<string[]> {
  const c = new pg.Client({ connectionString: stack.db.url });
  await c.connect();
  try {
    const cols = await c.query<{ t: string; c: string }>(
      `SELECT table_name AS t, column_name AS c FROM information_schema.columns
        WHERE table_schema = 'public' AND table_name IN (SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE')`,
    );
    const found: string[] = [];
    for (const { t, c: col } of cols.rows) {
      if (exempt.includes(t)) continue;
      const r = await c.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM "${t}" WHERE lower("${col}"::text) LIKE ANY($1::text[])`,
        [ids.map((id) => `%${id.toLowerCase()}%`)],
      );
      if (r.rows[0]!.n) found.push(`${t}.${col}: ${r.rows[0]!.n}`);
    }
    return found;
  } finally {
    await c.end();
  }
}

/** Every stored object, in every bucket, whose key names one of `ids`, or that lies under one of `prefixes`. */
async function storedMentions(ids: string[], prefixes: string[]): Promise<string[]> {
  const { storage } = stack.api.deps;
  const found: string[] = [];
  for (const b of await storage.client.listBuckets()) {
    for (const key of await listKeys(storage, b.name, '')) {
      const hit = ids.some((id) => key.includes(id)) || prefixes.some((p) => key.startsWith(p));
      if (hit) found.push(`${b.name}/${key}`);
    }
  }
  return found;
}

describe('erasure', () => {
  let erased: Drive;
  let kept: Drive;
  let commit: { commitId: string; prefix: string };
  let ids: string[];

  beforeAll(async () => {
    erased = await drive('drive to erase');
    kept = await drive('drive to keep');
    await call('POST', '/api/govern/consent', stack.admin, {
      session_id: erased.sessionId,
      consent_status: 'withdrawn',
    });
    await call('POST', '/api/govern/consent', stack.admin, {
      session_id: erased.sessionId,
      consent_status: 'granted',
    });
    const res = await call('POST', '/api/export', stack.reviewer, {
      name: 'before-erasure',
      formats: ['coco', 'parquet'],
      predicate: { session_ids: [erased.sessionId, kept.sessionId], states: ['accepted', 'rejected'] },
      split: { seed: 1, train: 1, val: 0, test: 0 },
    });
    expect([res.status, res.body.detail]).toEqual([202, undefined]);
    const outcome = (await stack.env.client.workflow.getHandle(res.body.workflow_id).result()) as {
      commit_id: string;
    };
    commit = await stack.api.deps.db.datasetCommit.findUniqueOrThrow({
      where: { commitId: outcome.commit_id },
    });
    ids = [erased.sessionId, erased.trackId, ...erased.frames.map((f) => f.id), ...erased.objectIds];
    // Before: the data is everywhere the scans look.
    expect((await tableMentions(ids, [])).length).toBeGreaterThan(5);
    expect((await storedMentions(ids, [commit.prefix])).length).toBeGreaterThan(9);
  }, 120_000);

  it('refuses callers below admin, unknown sessions and bad input, starting nothing', async () => {
    expect(
      (await call('POST', '/api/govern/erase', stack.reviewer, { session_id: erased.sessionId })).status,
    ).toBe(403);
    const unknown = await call('POST', '/api/govern/erase', stack.admin, {
      session_id: '00000000-0000-4000-8000-000000000000',
    });
    expect(unknown.status).toBe(404);
    for (const body of [{}, { session_id: 'x' }, { session_id: erased.sessionId, extra: 1 }])
      expect((await call('POST', '/api/govern/erase', stack.admin, body)).status).toBe(422);
    expect(await stack.api.deps.db.erasure.count()).toBe(0);
  });

  it('erases the session, marks the commit, and proves every place empty — as an independent scan confirms', async () => {
    const res = await call('POST', '/api/govern/erase', stack.admin, {
      session_id: erased.sessionId,
      note: 'DSR 2026-7',
    });
    expect(res.status).toBe(202);
    expect(res.headers.get('location')).toBe(`/api/govern/lineage/session:${erased.sessionId}`);
    expect(res.body).toMatchObject({
      session_id: erased.sessionId,
      session_name: 'drive to erase',
      status: 'running',
      proof: null,
    });
    const again = await call('POST', '/api/govern/erase', stack.admin, { session_id: erased.sessionId });
    expect(again.status).toBe(409);
    await stack.env.client.workflow.getHandle(res.body.workflow_id).result();
    await recordHistoryIfAsked(HISTORY, () =>
      stack.env.client.workflow.getHandle(res.body.workflow_id).fetchHistory(),
    );
    await expect(
      replayRecordedHistory(HISTORY, require.resolve('../workflows'), 'recorded'),
    ).resolves.toBeUndefined();

    // The independent scan: nothing names the session's ids outside the documented exempt tables.
    expect(await tableMentions(ids, ['audit_log', 'erasures', 'dataset_commits'])).toEqual([]);
    expect(await storedMentions(ids, [commit.prefix])).toEqual([]);

    const lineage = await call('GET', `/api/govern/lineage/session:${erased.sessionId}`, stack.reviewer);
    expect(lineage.status).toBe(200);
    const [erasure] = lineage.body.came_from.erasures;
    expect(lineage.body.came_from).toMatchObject({ exists: false, session: null });
    expect(erasure).toMatchObject({
      status: 'completed',
      reason: 'request',
      commit_ids: [commit.commitId],
      error: null,
    });
    expect(erasure.proof).toMatchObject({
      complete: true,
      not_empty: [],
      searched: { frames: 3, objects: 3, tracks: 1 },
    });
    expect(erasure.proof.places.length).toBeGreaterThan(50);
    expect(erasure.proof.places.every((p: { remaining: number }) => p.remaining === 0)).toBe(true);
    expect(erasure.deleted).toMatchObject({ 'table:frames': 3, 'table:objects': 3, 'table:sessions': 1 });
    expect(lineage.body.used_by.commits).toEqual([expect.objectContaining({ commit_id: commit.commitId })]);
    const { db } = stack.api.deps;
    expect(
      (await db.datasetCommit.findUniqueOrThrow({ where: { commitId: commit.commitId } })).erasedSessionIds,
    ).toEqual([erased.sessionId]);
    expect(
      await db.auditLog.count({ where: { action: 'session.erased', subjectId: erased.sessionId } }),
    ).toBe(1);
    expect(
      await db.platformEvent.count({ where: { kind: 'erasure.completed', subjectId: erasure.erasure_id } }),
    ).toBe(1);
  });

  it('leaves the other session of the commit whole', async () => {
    const { db, storage } = stack.api.deps;
    expect(await db.frame.count({ where: { sessionId: kept.sessionId } })).toBe(3);
    expect(await db.annoObject.count({ where: { id: { in: kept.objectIds } } })).toBe(3);
    expect(await db.track.count({ where: { id: kept.trackId } })).toBe(1);
    expect(await db.piiAudit.count({ where: { frameId: { in: kept.frames.map((f) => f.id) } } })).toBe(3);
    const images = await listKeys(storage, storage.bucket('frames'), `test/${kept.sessionId}/`);
    expect(images).toHaveLength(3);
    const masks = await Promise.all(
      kept.objectIds.map((id) => listKeys(storage, storage.bucket('masks'), `objects/${id}/`)),
    );
    expect(masks.every((m) => m.length === 1)).toBe(true);
  });

  it('answers 404 for the erased session, and a re-export of the slice cannot include it', async () => {
    expect(
      (await call('POST', '/api/govern/erase', stack.admin, { session_id: erased.sessionId })).status,
    ).toBe(404);
    const res = await call('POST', '/api/export', stack.reviewer, {
      name: 'after-erasure',
      formats: ['coco'],
      predicate: { session_ids: [erased.sessionId, kept.sessionId], states: ['accepted', 'rejected'] },
      split: { seed: 1, train: 1, val: 0, test: 0 },
    });
    expect(res.status).toBe(202);
    const outcome = (await stack.env.client.workflow.getHandle(res.body.workflow_id).result()) as {
      commit_id: string;
    };
    const after = await stack.api.deps.db.datasetCommit.findUniqueOrThrow({
      where: { commitId: outcome.commit_id },
    });
    expect(after.sessionIds).toEqual([kept.sessionId]);
  });
});
