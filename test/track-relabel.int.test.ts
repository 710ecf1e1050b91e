import { createUserWithToken } from '../testkit/api';
import { startIngestStack, type IngestStack } from '../testkit/media/harness';
import { createSessionFixture } from '../testkit/session-fixtures';

/**
 * Relabelling along a track on the real PostgreSQL (docs/track-relabel.md): machine objects move
 * as one bulk relabel review with one batch id, a person's object is left and listed, an
 * implausible move and a stale view of the track are refused with nothing written; the relabel is
 * an agent run whose revert (the cpu worker's workflow) undoes it, keeping what a person changed since.
 */
let stack: IngestStack;

beforeAll(async () => {
  stack = await startIngestStack();
});

afterAll(async () => {
  await stack?.close();
});

interface Member {
  object_id: string;
  reason?: string;
  from_class?: string;
  class_name: string;
  source: string;
  state?: string;
  version?: number;
}

describe('track relabel', () => {
  let frames: Array<{ id: string }>;
  let sessionId: string;
  let classIds: Record<string, number>;

  const call = (path: string, token: string | undefined, body?: unknown) =>
    stack.api.call('POST', path, { token, body });

  const newTrack = async () =>
    (
      await stack.api.deps.db.track.create({
        data: { sessionId, trackerVersion: 'bytetrack-ts-1', attrs: { class_name: 'car' } },
      })
    ).id;

  const box = async (trackId: string, frame: number, className: string, source: string) =>
    (
      await stack.api.deps.db.annoObject.create({
        data: {
          frameId: frames[frame]!.id,
          classId: classIds[className]!,
          bbox: [10, 10, 50, 40],
          conf: source === 'human' ? null : 0.7,
          source,
          state: source === 'human' ? 'accepted' : 'review',
          trackId,
        },
      })
    ).id;

  /** The track's rows as a comparison needs them, without the update timestamp. */
  const rowsOf = async (trackId: string) =>
    (await stack.api.deps.db.annoObject.findMany({ where: { trackId }, orderBy: { id: 'asc' } })).map(
      ({ updatedAt: _updated, ...row }) => row,
    );

  const counts = async () => ({
    reviews: await stack.api.deps.db.review.count(),
    batches: await stack.api.deps.db.reviewBatch.count(),
  });

  beforeAll(async () => {
    const { db, storage } = stack.api.deps;
    classIds = Object.fromEntries(
      (
        await db.ontologyClass.findMany({ where: { name: { in: ['car', 'van', 'truck', 'pedestrian'] } } })
      ).map((c) => [c.name, c.id]),
    );
    const fixture = await createSessionFixture({ db, storage }, { frames: 5, storeImages: false });
    frames = fixture.frames;
    sessionId = fixture.session.id;
  });

  it('relabels a car track to van as one review batch, leaving the person’s object and listing it', async () => {
    const { db } = stack.api.deps;
    const trackId = await newTrack();
    const machine = [await box(trackId, 0, 'car', 'fused'), await box(trackId, 1, 'car', 'interp')];
    const third = await box(trackId, 3, 'car', 'recall');
    machine.push(third);
    await db.provenance.create({ data: { objectId: third, paths: ['recall'], agreement: 0.4 } });
    const human = await box(trackId, 2, 'car', 'human');
    const alreadyVan = await box(trackId, 4, 'van', 'fused');
    const before = await rowsOf(trackId);
    const rowBefore = new Map(before.map((r) => [r.id, r]));

    const res = await call(`/api/tracks/${trackId}/relabel`, stack.reviewer, {
      class_name: 'van',
      reviewer: 'rev-1',
    });
    expect([res.status, res.body.detail]).toEqual([200, undefined]);
    expect(res.body).toMatchObject({ track_id: trackId, class_name: 'van' });
    const batchId: string = res.body.batch_id;
    expect(batchId).toEqual(expect.any(String));
    expect(res.body.relabelled.map((o: Member) => o.object_id).sort()).toEqual([...machine].sort());
    for (const o of res.body.relabelled as Member[])
      expect(o).toMatchObject({
        from_class: 'car',
        class_name: 'van',
        source: 'human',
        state: 'accepted',
        version: 2,
      });
    expect(res.body.left).toEqual([
      expect.objectContaining({
        object_id: human,
        class_name: 'car',
        source: 'human',
        reason: 'human_source',
      }),
      expect.objectContaining({ object_id: alreadyVan, class_name: 'van', reason: 'already_target' }),
    ]);

    const after = new Map((await rowsOf(trackId)).map((r) => [r.id, r]));
    expect(after.get(human)).toEqual(rowBefore.get(human));
    expect(after.get(alreadyVan)).toEqual(rowBefore.get(alreadyVan));
    for (const id of machine)
      expect(after.get(id)).toEqual({
        ...rowBefore.get(id),
        classId: classIds.van,
        source: 'human',
        state: 'accepted',
        version: 2,
      });

    // One batch stamp for all moves; each review's `before` holds what undoing the batch restores.
    const batch = await db.reviewBatch.findUniqueOrThrow({ where: { id: batchId } });
    expect(batch).toMatchObject({ reviewer: 'rev-1', action: 'relabel', objectCount: 3 });
    const reviews = await db.review.findMany({ where: { batchId } });
    expect(reviews.map((r) => r.objectId).sort()).toEqual([...machine].sort());
    for (const r of reviews) {
      const prior = rowBefore.get(r.objectId)!;
      expect(r).toMatchObject({ action: 'relabel', reviewer: 'rev-1' });
      expect(r.before).toMatchObject({
        class_id: prior.classId,
        source: prior.source,
        conf: prior.conf,
        state: prior.state,
        version: prior.version,
        attrs: prior.attrs,
      });
      expect(r.after).toMatchObject({
        class_id: classIds.van,
        source: 'human',
        state: 'accepted',
        version: 2,
      });
    }
    const recalled = reviews.find((r) => r.objectId === third)!;
    expect(recalled.before).toMatchObject({ provenance: { paths: ['recall'], agreement: 0.4 } });
    expect(await db.review.count({ where: { objectId: { in: [human, alreadyVan] } } })).toBe(0);

    const audit = await db.auditLog.findFirstOrThrow({
      where: { subjectId: trackId, action: 'track.relabelled' },
    });
    expect(audit.detail).toMatchObject({ batch_id: batchId, class: 'van', relabelled: 3 });

    // Again: the moved objects are a person's now, so nothing is left to relabel and no batch is made.
    const again = await call(`/api/tracks/${trackId}/relabel`, stack.reviewer, { class_name: 'van' });
    expect([again.status, again.body.batch_id, again.body.relabelled]).toEqual([200, null, []]);
    expect(again.body.left.map((l: Member) => l.reason).sort()).toEqual([
      'already_target',
      'human_source',
      'human_source',
      'human_source',
      'human_source',
    ]);
  });

  it('undoes the relabel as one run: the reviewer who made it reverts it, a later edit is kept', async () => {
    const { db } = stack.api.deps;
    const trackId = await newTrack();
    const untouched = await box(trackId, 0, 'car', 'fused');
    const editedLater = await box(trackId, 1, 'car', 'fused');
    const human = await box(trackId, 2, 'car', 'human');
    const before = new Map((await rowsOf(trackId)).map((r) => [r.id, r]));

    const res = await call(`/api/tracks/${trackId}/relabel`, stack.reviewer, { class_name: 'van' });
    expect(res.status).toBe(200);
    const runId: string = res.body.run_id;
    const run = await stack.api.call('GET', `/api/agent/runs/${runId}`, { token: stack.reviewer });
    expect(run.body).toMatchObject({
      kind: 'track-relabel',
      status: 'completed',
      revertible: true,
      params: { track_id: trackId, class_name: 'van', batch_id: res.body.batch_id },
    });
    // A person moves one of the relabelled objects on afterwards: the undo must not take that back.
    await db.annoObject.update({
      where: { id: editedLater },
      data: { bbox: [12, 12, 52, 42], version: { increment: 1 } },
    });
    const edited = await db.annoObject.findUniqueOrThrow({ where: { id: editedLater } });

    // Only an admin, or the reviewer who made the relabel, may undo it.
    const other = await createUserWithToken(stack.api.deps, 'reviewer');
    const revert = (token: string) => call(`/api/agent/runs/${runId}/revert`, token);
    expect((await revert(stack.annotator)).status).toBe(403);
    expect((await revert(other.token)).status).toBe(403);
    const started = await revert(stack.reviewer);
    expect([started.status, started.headers.get('location')]).toEqual([202, `/api/agent/runs/${runId}`]);
    await stack.env.client.workflow.getHandle(started.body.workflow_id).result();

    const after = new Map((await rowsOf(trackId)).map((r) => [r.id, r]));
    const { version: _v, ...restoredContent } = after.get(untouched)!;
    const { version: _b, ...priorContent } = before.get(untouched)!;
    expect(restoredContent).toEqual(priorContent);
    // Back to car, fused, review — with the next version, so the relabel's version is stale now.
    expect(after.get(untouched)!.version).toBe(3);
    expect(after.get(editedLater)).toMatchObject({
      classId: classIds.van,
      source: 'human',
      version: edited.version,
    });
    expect(after.get(human)).toEqual(before.get(human));
    const reverted = await stack.api.call('GET', `/api/agent/runs/${runId}`, { token: stack.reviewer });
    expect(reverted.body).toMatchObject({
      status: 'reverted',
      revertible: false,
      changes: { reverted: { frames: 2, objects_restored: 1, objects_removed: 0, kept_human_edited: 1 } },
    });
    expect((await revert(stack.reviewer)).status).toBe(409);
  });

  it('refuses an implausible move by the rule, naming both classes, and writes nothing', async () => {
    const trackId = await newTrack();
    await box(trackId, 0, 'car', 'fused');
    await box(trackId, 1, 'car', 'fused');
    await box(trackId, 2, 'car', 'human');
    const before = await rowsOf(trackId);
    const tally = await counts();

    const res = await call(`/api/tracks/${trackId}/relabel`, stack.reviewer, {
      class_name: 'pedestrian',
    });
    expect(res.status).toBe(422);
    expect(res.body.type).toBe('urn:drivelab:problem:refused');
    expect(res.body.detail).toMatch(/same_l1/);
    expect(res.body.detail).toMatch(/car \(vehicle\) → pedestrian \(vru\)/);
    expect(res.body.rule).toBe('same_l1');
    expect(res.body.refused_moves).toEqual([
      expect.objectContaining({ from_class: 'car', to_class: 'pedestrian', object_ids: expect.any(Array) }),
    ]);
    expect(res.body.refused_moves[0].object_ids).toHaveLength(2);
    expect(await rowsOf(trackId)).toEqual(before);
    expect(await counts()).toEqual(tally);
  });

  it('answers 409 for a stale view of the track and writes nothing', async () => {
    const trackId = await newTrack();
    const a = await box(trackId, 0, 'car', 'fused');
    const b = await box(trackId, 1, 'car', 'human');
    const before = await rowsOf(trackId);
    const tally = await counts();

    const stale = await call(`/api/tracks/${trackId}/relabel`, stack.reviewer, {
      class_name: 'truck',
      expected_versions: { [a]: 1, [b]: 2 },
    });
    expect(stale.status).toBe(409);
    expect(stale.body.conflicts).toEqual([{ object_id: b, expected: 2, actual: 1 }]);
    const partial = await call(`/api/tracks/${trackId}/relabel`, stack.reviewer, {
      class_name: 'truck',
      expected_versions: { [a]: 1 },
    });
    expect(partial.status).toBe(409);
    expect(partial.body.conflicts).toEqual([{ object_id: b, expected: null, actual: 1 }]);
    expect(await rowsOf(trackId)).toEqual(before);
    expect(await counts()).toEqual(tally);

    const fresh = await call(`/api/tracks/${trackId}/relabel`, stack.reviewer, {
      class_name: 'truck',
      expected_versions: { [a]: 1, [b]: 1 },
    });
    expect(fresh.status).toBe(200);
    expect(fresh.body.relabelled.map((o: Member) => o.object_id)).toEqual([a]);
  });

  it('answers 404 for an unknown track and 422 for an unknown class or a malformed body', async () => {
    const trackId = await newTrack();
    await box(trackId, 0, 'car', 'fused');
    const unknownTrack = await call(
      '/api/tracks/00000000-0000-4000-8000-000000000000/relabel',
      stack.reviewer,
      { class_name: 'van' },
    );
    expect(unknownTrack.status).toBe(404);
    const unknownClass = await call(`/api/tracks/${trackId}/relabel`, stack.reviewer, {
      class_name: 'spaceship',
    });
    expect(unknownClass.status).toBe(422);
    expect(unknownClass.body.errors).toEqual([
      { field: 'body.class_name', message: 'not an ontology class' },
    ]);
    for (const body of [
      {},
      { class_name: 'van', extra: 1 },
      { class_name: 'van', expected_versions: { x: 1 } },
    ]) {
      const res = await call(`/api/tracks/${trackId}/relabel`, stack.reviewer, body);
      expect(res.status).toBe(422);
    }
    expect((await call('/api/tracks/not-a-uuid/relabel', stack.reviewer, { class_name: 'van' })).status).toBe(
      422,
    );
  });

  it('needs a token and the reviewer role', async () => {
    const trackId = await newTrack();
    await box(trackId, 0, 'car', 'fused');
    expect((await call(`/api/tracks/${trackId}/relabel`, undefined, { class_name: 'van' })).status).toBe(401);
    expect(
      (await call(`/api/tracks/${trackId}/relabel`, stack.annotator, { class_name: 'van' })).status,
    ).toBe(403);
    expect((await call(`/api/tracks/${trackId}/relabel`, stack.admin, { class_name: 'van' })).status).toBe(
      200,
    );
  });
});
