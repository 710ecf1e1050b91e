import path from 'node:path';
import { startIngestStack, type IngestStack } from '../testkit/media/harness';
import { createSessionFixture } from '../testkit/session-fixtures';
import { recordHistoryIfAsked, replayRecordedHistory } from '../testkit/temporal';

/**
 * A reviewer retracks a session on the real stack (PostgreSQL, Temporal, the cpu worker): its
 * objects are linked into tracks per class by ByteTrack, a track reads back with its trajectory,
 * deleting one unlinks its objects, and retracking replaces the tracks (docs/tracks.md).
 */
const HISTORY = path.join(__dirname, 'histories/retrack.json');
let stack: IngestStack;
let sessionId: string;
const cars: string[] = [];
const people: string[] = [];
let flash: string;
let rejected: string;

const call = (method: string, p: string, token: string, body?: unknown) =>
  stack.api.call(method, p, { token, body });

beforeAll(async () => {
  stack = await startIngestStack();
  const { db, storage } = stack.api.deps;
  const classId = async (name: string) => (await db.ontologyClass.findFirstOrThrow({ where: { name } })).id;
  const [car, person] = [await classId('car'), await classId('pedestrian')];
  const { session, frames } = await createSessionFixture({ db, storage }, { frames: 8, storeImages: false });
  sessionId = session.id;
  const object = async (
    frameId: string,
    cls: number,
    bbox: number[],
    extra: { conf?: number; state?: string } = {},
  ) =>
    (
      await db.annoObject.create({
        data: {
          frameId,
          classId: cls,
          bbox,
          source: 'fused',
          state: extra.state ?? 'pending',
          conf: extra.conf ?? 0.9,
        },
      })
    ).id;
  for (const [i, f] of frames.entries()) {
    cars.push(await object(f.id, car, [10 + 8 * i, 100, 60 + 8 * i, 140]));
    people.push(
      await object(f.id, person, [300 - 6 * i, 90, 330 - 6 * i, 170], {
        conf: i === 4 || i === 5 ? 0.3 : 0.8,
      }),
    );
  }
  // A box on one frame only, far from anything: no track. A rejected box: not an object of the scene.
  flash = await object(frames[3]!.id, car, [500, 20, 540, 50], { conf: 0.95 });
  rejected = await object(frames[5]!.id, car, [10 + 40, 100, 60 + 40, 140], { state: 'rejected' });
}, 120_000);

afterAll(async () => {
  await stack?.close();
});

async function retrack(body: unknown = { session_id: sessionId }) {
  const res = await call('POST', '/api/tracks/retrack', stack.reviewer, body);
  expect([res.status, res.body.detail]).toEqual([202, undefined]);
  const outcome = await stack.env.client.workflow.getHandle(res.body.workflow_id).result();
  return { res, outcome };
}

const trackOf = async (objectId: string) =>
  (await stack.api.deps.db.annoObject.findUniqueOrThrow({ where: { id: objectId } })).trackId;

it('links the objects of a session into one track per object and class, through low-score frames', async () => {
  const { res, outcome } = await retrack();
  expect(res.headers.get('location')).toBe(`/api/sessions/${sessionId}`);
  expect(outcome).toEqual({
    session_id: sessionId,
    tracker_version: 'bytetrack-ts-1',
    tracks: 2,
    tracks_continued: 0,
    objects_tracked: 16,
    objects_untracked: 1,
    switch_flags: 0,
  });
  await recordHistoryIfAsked(HISTORY, () =>
    stack.env.client.workflow.getHandle(res.body.workflow_id).fetchHistory(),
  );
  await expect(
    replayRecordedHistory(HISTORY, require.resolve('../workflows'), 'recorded'),
  ).resolves.toBeUndefined();
  const carTrack = await trackOf(cars[0]!);
  const personTrack = await trackOf(people[0]!);
  expect(carTrack).not.toBeNull();
  expect(personTrack).not.toBeNull();
  expect(carTrack).not.toBe(personTrack);
  for (const id of cars) expect(await trackOf(id)).toBe(carTrack);
  for (const id of people) expect(await trackOf(id)).toBe(personTrack);
  expect(await trackOf(flash)).toBeNull();
  expect(await trackOf(rejected)).toBeNull();

  const read = await call('GET', `/api/tracks/${carTrack}`, stack.annotator);
  expect(read.status).toBe(200);
  expect(read.body).toMatchObject({
    track_id: carTrack,
    session_id: sessionId,
    class_name: 'car',
    tracker_version: 'bytetrack-ts-1',
    length: 8,
    first_frame_index: 0,
    last_frame_index: 7,
    id_switch_flags: [],
  });
  expect(read.body.trajectory.map((p: { object_id: string }) => p.object_id)).toEqual(cars);
  expect(read.body.trajectory[1]).toMatchObject({ frame_index: 1, box: [18, 100, 68, 140], score: 0.9 });
});

it('retracks with the settings given, keeping the identities the new tracks continue', async () => {
  const { db } = stack.api.deps;
  const carBefore = (await trackOf(cars[0]!))!;
  const personBefore = (await trackOf(people[0]!))!;
  const event = await db.trackEvent.create({ data: { trackId: carBefore, kind: 'overtake' } });
  await db.track.update({
    where: { id: carBefore },
    data: { attrs: { class_name: 'car', intent: { value: 'parking' } } },
  });
  // A person confirms the pedestrian's last box: the part of the split track holding it keeps the id.
  await db.annoObject.update({ where: { id: people.at(-1)! }, data: { source: 'human' } });
  // A low-score floor above the pedestrian's two 0.3 frames, and a short max_age, split its track there.
  const { outcome } = await retrack({ session_id: sessionId, settings: { low_score: 0.5, max_age: 1 } });
  expect(outcome).toMatchObject({ tracks: 3, tracks_continued: 2, objects_tracked: 14 });
  for (const id of cars) expect(await trackOf(id)).toBe(carBefore);
  const car = await db.track.findUniqueOrThrow({ where: { id: carBefore } });
  expect(car.attrs).toMatchObject({
    class_name: 'car',
    intent: { value: 'parking' },
    settings: { low_score: 0.5 },
  });
  expect(await db.trackEvent.count({ where: { id: event.id, trackId: carBefore } })).toBe(1);
  expect(await trackOf(people[4]!)).toBeNull();
  expect(await trackOf(people[5]!)).toBeNull();
  expect(await trackOf(people.at(-1)!)).toBe(personBefore);
  expect(await trackOf(people[3]!)).not.toBe(personBefore);
  expect(await trackOf(people[3]!)).not.toBeNull();
});

it('deletes a track, leaving its objects unlinked', async () => {
  const track = (await trackOf(cars[2]!))!;
  const res = await call('DELETE', `/api/tracks/${track}`, stack.reviewer);
  expect(res.status).toBe(200);
  expect(res.body).toEqual({ track_id: track, deleted: true, objects_unlinked: 8 });
  for (const id of cars) expect(await trackOf(id)).toBeNull();
  expect(await stack.api.deps.db.annoObject.count({ where: { id: { in: cars } } })).toBe(8);
  expect((await call('GET', `/api/tracks/${track}`, stack.annotator)).status).toBe(404);
  expect((await call('DELETE', `/api/tracks/${track}`, stack.reviewer)).status).toBe(404);
  expect(
    await stack.api.deps.db.auditLog.count({ where: { action: 'track.deleted', subjectId: track } }),
  ).toBe(1);
});

it('refuses unknown sessions, bad settings and callers below their role', async () => {
  expect(
    (
      await call('POST', '/api/tracks/retrack', stack.reviewer, {
        session_id: '00000000-0000-4000-8000-000000000000',
      })
    ).status,
  ).toBe(404);
  for (const body of [
    {},
    { session_id: 'x' },
    { session_id: sessionId, settings: { high_score: 2 } },
    { session_id: sessionId, settings: { nope: 1 } },
  ])
    expect((await call('POST', '/api/tracks/retrack', stack.reviewer, body)).status).toBe(422);
  expect((await call('POST', '/api/tracks/retrack', stack.annotator, { session_id: sessionId })).status).toBe(
    403,
  );
  const track = (await trackOf(people[0]!))!;
  expect((await call('DELETE', `/api/tracks/${track}`, stack.annotator)).status).toBe(403);
  expect((await call('GET', '/api/tracks/not-a-uuid', stack.annotator)).status).toBe(422);
});
