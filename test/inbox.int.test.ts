import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { emitJobEvent } from '../activities/events/jobs';
import { makeDriveVideo } from '../testkit/media/video';
import { ingestAndWait, startIngestStack, type IngestStack } from '../testkit/media/harness';
import { createUserWithToken } from '../testkit/api';
import { createSessionFixture } from '../testkit/session-fixtures';

/**
 * The inbox on the real stack (docs/inbox.md, docs/events.md): real jobs and real review and
 * verdict routes produce events and notifications for the people the catalogue names; the
 * notifications stream delivers them as they commit; the frame routes record who saw original
 * pixels; the activity feed reads the audit log with its visibility rule.
 */

let stack: IngestStack;
const ids: Record<'admin' | 'reviewer' | 'annotator', string> = { admin: '', reviewer: '', annotator: '' };
let otherAnnotator: { userId: string; token: string };
let folder: string;
let sessionId: string;
let frameIds: string[];

const call = (method: string, p: string, token: string | undefined, body?: unknown) =>
  stack.api.call(method, p, { ...(token ? { token } : {}), ...(body === undefined ? {} : { body }) });

const inbox = async (token: string, query = '') => {
  const res = await call('GET', `/api/notifications${query}`, token);
  expect(res.status).toBe(200);
  return res.body as {
    items: Array<{
      id: string;
      kind: string;
      title: string;
      read: boolean;
      read_at: string | null;
      body: any;
    }>;
    next_cursor: string | null;
    unread: number;
  };
};

/** An SSE stream read with fetch, parsed into events as they come. */
async function openStream(token: string) {
  const controller = new AbortController();
  const res = await fetch(`${stack.api.url}/api/events/notifications?token=${token}`, {
    signal: controller.signal,
  });
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  const events: Array<{ event: string; data: any }> = [];
  let buffered = '';
  return {
    /** Reads until an event of `type` arrives; every event read so far stays in `events`. */
    async next(type: string) {
      for (;;) {
        const found = events.find((e) => e.event === type);
        if (found) {
          events.splice(events.indexOf(found), 1);
          return found.data;
        }
        const { value, done } = await reader.read();
        if (done) throw new Error(`the stream ended before a ${type} event`);
        buffered += decoder.decode(value);
        const blocks = buffered.split('\n\n');
        buffered = blocks.pop()!;
        for (const block of blocks) {
          const event = /^event: (.+)$/m.exec(block)?.[1];
          const data = /^data: (.+)$/m.exec(block)?.[1];
          if (event && data) events.push({ event, data: JSON.parse(data) });
        }
      }
    },
    close: () => controller.abort(),
  };
}

/** The reviewer's stream, opened before a notification of someone else and read after one of its own. */
const stream: { reviewer?: Awaited<ReturnType<typeof openStream>> } = {};

beforeAll(async () => {
  stack = await startIngestStack();
  for (const role of ['admin', 'reviewer', 'annotator'] as const)
    ids[role] = (await call('GET', '/api/users/me', stack[role])).body.id;
  otherAnnotator = await createUserWithToken(stack.api.deps, 'annotator');
  // Three distinct, sharp frames of a moving face, cut from the test drive with plain ffmpeg.
  const video = makeDriveVideo(stack.dir);
  folder = path.join(stack.dir, 'frames');
  fs.mkdirSync(folder);
  execFileSync('/usr/bin/ffmpeg', [
    '-v',
    'error',
    '-i',
    video,
    '-vf',
    'fps=3',
    '-t',
    '1',
    path.join(folder, 'f%d.jpg'),
  ]);
});
afterAll(() => stack?.close());

describe('events from real jobs', () => {
  it('a finished ingest records a job.completed event and notifies the admin who started it, no one else', async () => {
    const { started, outcome } = await ingestAndWait(stack, { path: folder, kind: 'frames' }, stack.admin);
    if (!outcome.ok) throw outcome.error;
    sessionId = started.session_id;
    frameIds = (
      await stack.api.deps.db.frame.findMany({ where: { sessionId }, orderBy: { index: 'asc' } })
    ).map((f) => f.id);
    expect(frameIds.length).toBeGreaterThan(0);

    const events = await stack.api.deps.db.platformEvent.findMany({ where: { subjectId: started.job_id } });
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      kind: 'job.completed',
      subjectType: 'job',
      actorId: null,
      payload: {
        job_kind: 'ingest',
        job_id: started.job_id,
        started_by: ids.admin,
        summary: { session_id: sessionId },
      },
    });

    const mine = await inbox(stack.admin);
    expect(mine.items).toHaveLength(1);
    expect(mine.items[0]).toMatchObject({
      kind: 'job.completed',
      title: 'Your ingest job finished',
      read: false,
      read_at: null,
      body: { event_id: events[0]!.id, subject_type: 'job', subject_id: started.job_id },
    });
    expect(mine.unread).toBe(1);
    expect((await inbox(stack.reviewer)).items).toEqual([]);
  });

  it('emits a job end once however often its bookkeeping runs (a retried activity)', async () => {
    const job = await stack.api.deps.db.ingestJob.findFirstOrThrow({ where: { sessionId } });
    await emitJobEvent(
      stack.api.deps.db,
      { kind: 'ingest', id: job.id, startedBy: ids.admin },
      { kind: 'job.completed', summary: { session_id: sessionId } },
    );
    expect(await stack.api.deps.db.platformEvent.count({ where: { subjectId: job.id } })).toBe(1);
    expect((await inbox(stack.admin)).items).toHaveLength(1);
  });

  it('streams a failed ingest to its starter as it commits, and only to them', async () => {
    const admin = await openStream(stack.admin);
    const reviewer = await openStream(stack.reviewer);
    expect(await admin.next('unread')).toMatchObject({ count: 1 });
    expect(await reviewer.next('unread')).toMatchObject({ count: 0 });

    // The same folder again: accepted, then its job fails naming the first session.
    const { started, outcome } = await ingestAndWait(stack, { path: folder, kind: 'frames' }, stack.admin);
    expect(outcome.ok).toBe(false);
    const pushed = await admin.next('notification');
    expect(pushed).toMatchObject({
      user_id: ids.admin,
      kind: 'job.failed',
      title: 'Your ingest job failed',
      read: false,
      body: { payload: { job_kind: 'ingest', job_id: started.job_id, started_by: ids.admin } },
    });
    expect(pushed.body.payload.reason).toMatch(/already ingested as session/);
    expect((await inbox(stack.admin)).items[0]!.id).toBe(pushed.id);
    admin.close();

    // The reviewer's stream got nothing of it: the first notification it sees is its own, below.
    stream.reviewer = reviewer;
  });
});

describe('events from review and verdict routes', () => {
  const createObject = async (token: string, frameId: string) => {
    const res = await call('POST', `/api/frames/${frameId}/objects`, token, {
      class_name: 'car',
      bbox: [10, 10, 40, 30],
      state: 'review',
    });
    expect(res.status).toBe(201);
    return res.body.id as string;
  };

  it('a review refused as stale notifies whoever changed the label since it was read', async () => {
    const objectId = await createObject(stack.annotator, frameIds[0]!);
    const edited = await call('POST', `/api/objects/${objectId}/review`, stack.reviewer, {
      action: 'edit',
      attrs: { occluded: true },
      expected_version: 1,
    });
    expect(edited.status).toBe(200);
    const stale = await call('POST', `/api/objects/${objectId}/review`, stack.admin, {
      action: 'confirm',
      expected_version: 1,
    });
    expect(stale.status).toBe(409);

    const pushed = await stream.reviewer!.next('notification');
    stream.reviewer!.close();
    expect(pushed).toMatchObject({
      kind: 'review.conflict',
      user_id: ids.reviewer,
      body: {
        subject_type: 'object',
        subject_id: objectId,
        actor_id: ids.admin,
        payload: {
          object_ids: [objectId],
          conflicts: [{ object_id: objectId, expected: 1, actual: 2 }],
          refused_by: ids.admin,
          edited_by: [ids.reviewer],
        },
      },
    });
    // The refused caller had the 409; the creator made version 1, which the caller had read.
    for (const token of [stack.admin, stack.annotator])
      expect((await inbox(token)).items.map((n) => n.kind)).not.toContain('review.conflict');
  });

  it('a confirmed label issue notifies the reviewer group and the annotator of the label, not the reviewer who confirmed it', async () => {
    const objectId = await createObject(stack.annotator, frameIds[0]!);
    const { db } = stack.api.deps;
    const truck = await db.ontologyClass.findFirstOrThrow({ where: { name: 'truck' } });
    // An error candidate as a detection run leaves it (the run itself is test/errordetect's).
    const run = await db.errorRun.create({ data: { scope: { session_id: sessionId }, status: 'completed' } });
    const candidate = await db.errorCandidate.create({
      data: {
        errorRunId: run.id,
        kind: 'label_flip',
        frameId: frameIds[0]!,
        objectIds: [objectId],
        score: 0.9,
        proposed: { action: 'relabel', class_id: truck.id },
        evidence: { object_versions: { [objectId]: 1 } },
      },
    });
    const confirmed = await call(
      'POST',
      `/api/errordetect/candidates/${candidate.id}/confirm`,
      stack.reviewer,
      { apply_proposed: false, reviewer: 'rev' },
    );
    expect(confirmed.status).toBe(200);

    const issue = (n: { kind: string }) => n.kind === 'label.issue';
    const toAnnotator = (await inbox(stack.annotator)).items.filter(issue);
    expect(toAnnotator).toHaveLength(1);
    expect(toAnnotator[0]).toMatchObject({
      title: 'Label issue confirmed: label_flip',
      body: {
        subject_type: 'error_candidate',
        subject_id: candidate.id,
        actor_id: ids.reviewer,
        payload: { candidate_id: candidate.id, object_ids: [objectId], annotators: [ids.annotator] },
      },
    });
    expect((await inbox(stack.admin)).items.filter(issue)).toHaveLength(1);
    expect((await inbox(stack.reviewer)).items.filter(issue)).toHaveLength(0);
    expect((await inbox(otherAnnotator.token)).items.filter(issue)).toHaveLength(0);
  });
});

describe('the inbox', () => {
  it('counts, reads one (twice), pages and reads all; another user’s notification is 404', async () => {
    const all = await inbox(stack.admin);
    expect(all.items.map((n) => n.kind).sort()).toEqual(['job.completed', 'job.failed', 'label.issue']);
    expect((await call('GET', '/api/notifications/count', stack.admin)).body).toEqual({ unread: 3 });

    const first = all.items[0]!;
    const read = await call('POST', `/api/notifications/${first.id}/read`, stack.admin);
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({ id: first.id, read: true });
    const again = await call('POST', `/api/notifications/${first.id}/read`, stack.admin);
    expect(again.body.read_at).toBe(read.body.read_at);
    expect((await call('GET', '/api/notifications/count', stack.admin)).body).toEqual({ unread: 2 });
    expect((await inbox(stack.admin, '?unread=false')).items.map((n) => n.id)).toEqual([first.id]);
    expect((await inbox(stack.admin, '?unread=true')).items).toHaveLength(2);

    const someoneElse = await call('POST', `/api/notifications/${first.id}/read`, stack.reviewer);
    expect(someoneElse.status).toBe(404);
    expect(someoneElse.headers.get('content-type')).toMatch(/application\/problem\+json/);

    const page1 = await inbox(stack.admin, '?limit=2');
    expect(page1.items.map((n) => n.id)).toEqual(all.items.slice(0, 2).map((n) => n.id));
    const page2 = await inbox(stack.admin, `?limit=2&cursor=${page1.next_cursor}`);
    expect(page2.items.map((n) => n.id)).toEqual([all.items[2]!.id]);
    expect(page2.next_cursor).toBeNull();
    // A cursor naming another user's notification is not one this list gave.
    const theirs = (await inbox(stack.reviewer)).items[0]!.id;
    expect((await call('GET', `/api/notifications?cursor=${theirs}`, stack.admin)).status).toBe(422);

    const readAll = await call('POST', '/api/notifications/read-all', stack.admin);
    expect(readAll.body).toEqual({ marked: 2, unread: 0 });
    expect((await call('GET', '/api/notifications/count', stack.admin)).body).toEqual({ unread: 0 });
    // Read-all is the caller's only.
    expect((await call('GET', '/api/notifications/count', stack.reviewer)).body).toEqual({ unread: 1 });
  });
});

describe('PII access', () => {
  let unredacted: { frameId: string; sessionId: string; objectId: string };
  let redactedObject: string;

  beforeAll(async () => {
    const fixture = await createSessionFixture(stack.api.deps, { frames: 1 });
    const made = await call('POST', `/api/frames/${fixture.frames[0]!.id}/objects`, stack.annotator, {
      class_name: 'person',
      bbox: [4, 4, 30, 40],
      state: 'review',
    });
    unredacted = { frameId: fixture.frames[0]!.id, sessionId: fixture.session.id, objectId: made.body.id };
    const onIngested = await call('POST', `/api/frames/${frameIds[0]}/objects`, stack.annotator, {
      class_name: 'person',
      bbox: [4, 4, 60, 80],
      state: 'review',
    });
    redactedObject = onIngested.body.id;
  });

  const image = (frameId: string, token: string, variant: string, method = 'GET') =>
    fetch(`${stack.api.url}/api/frames/${frameId}/image?variant=${variant}`, {
      method,
      headers: { authorization: `Bearer ${token}` },
    });

  it('records every serving of original pixels, and nothing else', async () => {
    const { db } = stack.api.deps;
    expect((await image(frameIds[0]!, stack.reviewer, 'original')).status).toBe(200);
    // Not original pixels, or none served: a redacted image, a HEAD, a refused original.
    expect((await image(frameIds[0]!, stack.annotator, 'redacted')).status).toBe(200);
    expect((await image(frameIds[0]!, stack.reviewer, 'original', 'HEAD')).status).toBe(200);
    expect((await image(frameIds[0]!, stack.annotator, 'original')).status).toBe(403);
    // A crop of a redacted frame comes from the redacted copy; one of a frame without it, from the original.
    const crop = (objectId: string) =>
      fetch(`${stack.api.url}/api/objects/${objectId}/crop`, {
        headers: { authorization: `Bearer ${stack.annotator}` },
      });
    expect((await crop(redactedObject)).status).toBe(200);
    expect((await crop(unredacted.objectId)).status).toBe(200);
    const sheet = await call('POST', '/api/objects/crops', stack.annotator, {
      object_ids: [redactedObject, unredacted.objectId],
    });
    expect(sheet.status).toBe(200);

    const rows = await db.piiAccess.findMany({ orderBy: { id: 'asc' } });
    expect(rows.map((r) => [r.userId, r.frameId, r.sessionId, r.route])).toEqual([
      [ids.reviewer, frameIds[0], sessionId, 'GET /api/frames/{frame_id}/image'],
      [ids.annotator, unredacted.frameId, unredacted.sessionId, 'GET /api/objects/{object_id}/crop'],
      [ids.annotator, unredacted.frameId, unredacted.sessionId, 'POST /api/objects/crops'],
    ]);
    expect(rows[0]!.ip).toMatch(/127\.0\.0\.1/);
  });

  it('lists the views for an admin, newest first, filtered and paged', async () => {
    const res = await call('GET', '/api/govern/pii-access', stack.admin);
    expect(res.status).toBe(200);
    expect(res.body.items.map((i: any) => i.route)).toEqual([
      'POST /api/objects/crops',
      'GET /api/objects/{object_id}/crop',
      'GET /api/frames/{frame_id}/image',
    ]);
    expect(res.body.items[2]).toMatchObject({
      user_id: ids.reviewer,
      user: { kind: 'person' },
      frame_id: frameIds[0],
      session_id: sessionId,
    });
    const byReviewer = await call('GET', `/api/govern/pii-access?user_id=${ids.reviewer}`, stack.admin);
    expect(byReviewer.body.items).toHaveLength(1);
    const page1 = await call('GET', '/api/govern/pii-access?limit=2', stack.admin);
    const page2 = await call(
      'GET',
      `/api/govern/pii-access?limit=2&cursor=${page1.body.next_cursor}`,
      stack.admin,
    );
    expect([...page1.body.items, ...page2.body.items].map((i: any) => i.id)).toEqual(
      res.body.items.map((i: any) => i.id),
    );
    expect(page2.body.next_cursor).toBeNull();
    const future = await call('GET', '/api/govern/pii-access?since=2999-01-01T00:00:00Z', stack.admin);
    expect(future.body.items).toEqual([]);
  });

  it('summarises who saw how much', async () => {
    const res = await call('GET', '/api/govern/pii-access/summary', stack.admin);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ views: 3, frames: 2, sessions: 2, users: 2 });
    expect(res.body.by_user).toEqual([
      expect.objectContaining({ user_id: ids.annotator, views: 2, frames: 1, sessions: 1 }),
      expect.objectContaining({ user_id: ids.reviewer, views: 1, frames: 1, sessions: 1 }),
    ]);
    expect(res.body.by_route).toHaveLength(3);
    const ofSession = await call(
      'GET',
      `/api/govern/pii-access/summary?session_id=${sessionId}`,
      stack.admin,
    );
    expect(ofSession.body).toMatchObject({ views: 1, users: 1 });
    const reversed = await call(
      'GET',
      '/api/govern/pii-access/summary?since=2026-02-01T00:00:00Z&until=2026-01-01T00:00:00Z',
      stack.admin,
    );
    expect(reversed.status).toBe(422);
  });

  it('records a prediction crop cut from original pixels, with who and when; one cut from a redacted copy is not recorded', async () => {
    const { db } = stack.api.deps;
    const car = await db.ontologyClass.findFirstOrThrow({ where: { name: 'car' } });
    // Predictions as an imported run leaves them (importing itself is test/quality-gold's).
    const run = await db.inferenceRun.create({
      data: { modelVersion: 'pii-crop-run', origin: 'import', status: 'completed' },
    });
    const predicted = (frameId: string) =>
      db.prediction.create({
        data: { runId: run.id, frameId, classId: car.id, conf: 0.8, bbox: [4, 4, 30, 40] },
      });
    const onRedacted = await predicted(frameIds[0]!);
    const onOriginal = await predicted(unredacted.frameId);
    const crop = (predictionId: string) =>
      fetch(`${stack.api.url}/api/predictions/${predictionId}/crop`, {
        headers: { authorization: `Bearer ${stack.annotator}` },
      });
    const before = Date.now();
    expect((await crop(onRedacted.id)).status).toBe(200);
    const served = await crop(onOriginal.id);
    expect(served.status).toBe(200);
    expect(served.headers.get('content-type')).toMatch(/^image\/jpeg/);
    const after = Date.now();

    // The annotator's views, newest first: this crop on top of the two frame-route views above.
    const views = await call('GET', `/api/govern/pii-access?user_id=${ids.annotator}`, stack.admin);
    expect(views.body.items.map((i: any) => [i.route, i.frame_id, i.session_id])).toEqual([
      ['GET /api/predictions/{prediction_id}/crop', unredacted.frameId, unredacted.sessionId],
      ['POST /api/objects/crops', unredacted.frameId, unredacted.sessionId],
      ['GET /api/objects/{object_id}/crop', unredacted.frameId, unredacted.sessionId],
    ]);
    const when = Date.parse(views.body.items[0].created_at);
    expect(when).toBeGreaterThanOrEqual(before);
    expect(when).toBeLessThanOrEqual(after);
    expect(views.body.items[0].ip).toMatch(/127\.0\.0\.1/);
    expect(await db.piiAccess.count({ where: { frameId: frameIds[0]!, userId: ids.annotator } })).toBe(0);
  });
});

describe('the activity feed', () => {
  it('shows an admin everyone’s activity, filtered by action family, subject and time', async () => {
    const res = await call(
      'GET',
      `/api/activity?action=ingest.*&subject_type=session&subject_id=${sessionId}`,
      stack.admin,
    );
    expect(res.status).toBe(200);
    const actions = res.body.items.map((i: any) => i.action);
    expect(actions).toContain('ingest.completed');
    expect(actions.every((a: string) => a.startsWith('ingest.'))).toBe(true);
    const completed = res.body.items.find((i: any) => i.action === 'ingest.completed');
    expect(completed).toMatchObject({
      actor_id: ids.admin,
      actor: { kind: 'person' },
      subject_id: sessionId,
    });

    // LIKE's wildcards are literal: ingest_ is no prefix of ingest.completed.
    expect((await call('GET', '/api/activity?action=ingest_*', stack.admin)).body.items).toEqual([]);
    const exact = await call('GET', '/api/activity?action=object.created', stack.admin);
    expect(new Set(exact.body.items.map((i: any) => i.actor_id))).toEqual(new Set([ids.annotator]));
    const byActor = await call('GET', `/api/activity?actor_id=${ids.reviewer}`, stack.admin);
    expect(byActor.body.items.length).toBeGreaterThan(0);
    expect(byActor.body.items.every((i: any) => i.actor_id === ids.reviewer)).toBe(true);
    const future = await call('GET', '/api/activity?since=2999-01-01T00:00:00Z', stack.admin);
    expect(future.body.items).toEqual([]);

    const page1 = await call('GET', '/api/activity?limit=1', stack.admin);
    const page2 = await call('GET', `/api/activity?limit=1&cursor=${page1.body.next_cursor}`, stack.admin);
    expect(BigInt(page2.body.items[0].id)).toBeLessThan(BigInt(page1.body.items[0].id));
  });

  it('shows anyone else only their own, and refuses another actor', async () => {
    const mine = await call('GET', '/api/activity', stack.annotator);
    expect(mine.body.items.length).toBeGreaterThan(0);
    expect(mine.body.items.every((i: any) => i.actor_id === ids.annotator)).toBe(true);
    expect((await call('GET', `/api/activity?actor_id=${ids.annotator}`, stack.annotator)).status).toBe(200);
    expect((await call('GET', `/api/activity?actor_id=${ids.admin}`, stack.annotator)).status).toBe(403);
    expect((await call('GET', `/api/activity/summary?actor_id=${ids.admin}`, stack.reviewer)).status).toBe(
      403,
    );
  });

  it('summarises activity per action and per actor over a window', async () => {
    const all = await call('GET', '/api/activity/summary', stack.admin);
    expect(all.status).toBe(200);
    const count = (action: string) => all.body.by_action.find((a: any) => a.action === action)?.count;
    // The annotator created four objects: two in the review tests, two for the PII tests.
    expect(count('object.created')).toBe(4);
    expect(count('ingest.completed')).toBe(1);
    expect(all.body.total).toBe(all.body.by_action.reduce((n: number, a: any) => n + a.count, 0));
    expect(all.body.by_actor.map((a: any) => a.actor_id)).toEqual(
      expect.arrayContaining([ids.admin, ids.reviewer, ids.annotator]),
    );

    const own = await call('GET', '/api/activity/summary?action=object.*', stack.annotator);
    expect(own.body.by_actor).toEqual([expect.objectContaining({ actor_id: ids.annotator, count: 4 })]);
    expect(own.body.by_action).toEqual([{ action: 'object.created', count: 4 }]);
    const empty = await call(
      'GET',
      '/api/activity/summary?since=2999-01-01T00:00:00Z&until=2999-01-02T00:00:00Z',
      stack.admin,
    );
    expect(empty.body).toMatchObject({ total: 0, by_action: [], by_actor: [] });
  });
});

describe('who may call', () => {
  const routes: Array<[string, string]> = [
    ['GET', '/api/notifications'],
    ['GET', '/api/notifications/count'],
    ['POST', '/api/notifications/read-all'],
    ['POST', '/api/notifications/00000000-0000-4000-8000-000000000000/read'],
    ['GET', '/api/activity'],
    ['GET', '/api/activity/summary'],
    ['GET', '/api/govern/pii-access'],
    ['GET', '/api/govern/pii-access/summary'],
    ['GET', '/api/events/notifications'],
  ];

  it.each(routes)('%s %s answers 401 without a valid token', async (method, p) => {
    expect((await call(method, p, undefined)).status).toBe(401);
  });

  it.each(routes.filter(([, p]) => p.startsWith('/api/govern/')))(
    '%s %s is for admins only',
    async (method, p) => {
      for (const token of [stack.reviewer, stack.annotator])
        expect((await call(method, p, token)).status).toBe(403);
    },
  );

  it('takes a query token on the stream only', async () => {
    expect((await call('GET', `/api/notifications?token=${stack.admin}`, undefined)).status).toBe(401);
    const controller = new AbortController();
    const res = await fetch(`${stack.api.url}/api/events/notifications?token=${stack.admin}`, {
      signal: controller.signal,
    });
    expect(res.status).toBe(200);
    controller.abort();
  });
});
