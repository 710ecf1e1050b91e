import { randomUUID } from 'node:crypto';
import type { Box } from '../core/geometry';
import { startIngestStack, type IngestStack } from '../testkit/media/harness';
import { createSessionFixture } from '../testkit/session-fixtures';

/**
 * Propagation on the real stack (docs/propagation.md; PostgreSQL, and Temporal with the cpu worker
 * for the revert): a car moving right 20 px a frame carried 3 frames ahead by the Kalman filter,
 * a prediction snapped to a stored detection, the agent's plan writing nothing and its apply
 * undone by the revert route, and the refusals.
 */
let stack: IngestStack;
const call = (method: string, p: string, token: string | undefined, body?: unknown) =>
  stack.api.call(method, p, { token, ...(body === undefined ? {} : { body }) });
const MISSING = '00000000-0000-4000-8000-000000000000';

let frames: string[];
let sessionId: string;
let classIds: Record<string, number>;
/** An 80×60 box centred on (cx, cy). */
const box = (cx: number, cy: number): Box => [cx - 40, cy - 30, cx + 40, cy + 30];
const cx = (b: number[]) => (b[0]! + b[2]!) / 2;
const cy = (b: number[]) => (b[1]! + b[3]!) / 2;

/** A track of `className` over frames 0..3 moving right 20 px a frame at height `y`; its objects by frame. */
async function movingTrack(y: number, className = 'car'): Promise<{ trackId: string; objects: string[] }> {
  const { db } = stack.api.deps;
  const trackId = (
    await db.track.create({
      data: { sessionId, trackerVersion: 'bytetrack-ts-1', attrs: { class_name: className } },
    })
  ).id;
  const objects: string[] = [];
  for (let i = 0; i < 4; i++)
    objects.push(
      (
        await db.annoObject.create({
          data: {
            frameId: frames[i]!,
            classId: classIds[className]!,
            bbox: box(200 + 20 * i, y),
            source: 'fused',
            conf: 0.9,
            state: 'review',
            trackId,
          },
        })
      ).id,
    );
  return { trackId, objects };
}

const propagatedOf = (trackId: string) =>
  stack.api.deps.db.annoObject.findMany({
    where: { trackId, source: 'propagated' },
    include: { frame: true, provenance: true },
    orderBy: { frame: { index: 'asc' } },
  });

beforeAll(async () => {
  stack = await startIngestStack();
  const { db, storage } = stack.api.deps;
  const fixture = await createSessionFixture({ db, storage }, { frames: 10, storeImages: false });
  frames = fixture.frames.map((f) => f.id);
  sessionId = fixture.session.id;
  await db.frame.updateMany({ where: { sessionId }, data: { width: 1280, height: 720 } });
  const classes = await db.ontologyClass.findMany({ where: { name: { in: ['car', 'truck', 'person'] } } });
  classIds = Object.fromEntries(classes.map((c) => [c.name, c.id]));
});

afterAll(async () => {
  await stack?.close();
});

describe('POST /api/objects/{object_id}/propagate', () => {
  it('carries a moving car 3 frames ahead, continuing its motion, as propagated objects in review on its track', async () => {
    const { trackId, objects } = await movingTrack(200);
    const res = await call('POST', `/api/objects/${objects[3]}/propagate`, stack.annotator, { frames: 3 });
    expect([res.status, res.body.detail]).toEqual([200, undefined]);
    expect(res.body).toMatchObject({
      object_id: objects[3],
      track_id: trackId,
      class_name: 'car',
      creates_track: false,
      method: 'kalman_constant_velocity',
      params: { frames: 3, redetect: false, min_iou: 0.5 },
      seed_objects: 4,
      created: 3,
      skipped: 0,
    });
    expect(res.body.frames.map((f: { frame_id: string }) => f.frame_id)).toEqual(frames.slice(4, 7));
    const made = await propagatedOf(trackId);
    expect(made.map((o) => o.frame.index)).toEqual([4, 5, 6]);
    // Beyond the last box (centre x 260), each further right, at the same height and size.
    const xs = made.map((o) => cx(o.bbox));
    expect(xs[0]).toBeGreaterThan(260);
    expect(xs[1]).toBeGreaterThan(xs[0]!);
    expect(xs[2]).toBeGreaterThan(xs[1]!);
    for (const o of made) {
      expect(cy(o.bbox)).toBeCloseTo(200, 1);
      expect(o.bbox[2]! - o.bbox[0]!).toBeCloseTo(80, 1);
      expect(o).toMatchObject({
        source: 'propagated',
        state: 'review',
        classId: classIds.car,
        conf: null,
        version: 1,
      });
      expect(o.provenance[0]).toMatchObject({ paths: ['propagated'] });
      expect(o.provenance[0]!.reasonerTrace).toMatchObject({
        method: 'kalman_constant_velocity',
        from_object_id: objects[3],
      });
    }
    expect(res.body.objects.map((o: { id: string }) => o.id)).toEqual(made.map((o) => o.id));

    // The same request again finds every next frame held by the track: nothing to propagate, nothing written.
    const again = await call('POST', `/api/objects/${objects[3]}/propagate`, stack.annotator, { frames: 3 });
    expect(again.status).toBe(422);
    expect((await propagatedOf(trackId)).length).toBe(3);
    // Two frames ahead from frame 5: frame 6 is skipped (the track holds it), frame 7 is made.
    const skip = await call('POST', `/api/objects/${made[1]!.id}/propagate`, stack.annotator, { frames: 2 });
    expect([
      skip.status,
      skip.body.created,
      skip.body.frames.map((f: { action: string }) => f.action),
    ]).toEqual([200, 1, ['skip', 'create']]);
    expect(skip.body.frames[0]).toMatchObject({ reason: 'track_has_object', object_id: made[2]!.id });
  });

  it('snaps a prediction to the best-overlapping stored detection of its class with redetect', async () => {
    const { db } = stack.api.deps;
    const { trackId, objects } = await movingTrack(500);
    // The car where it really is on frame 4 (+20 px); a truck overlapping even more is another class.
    const detection = await db.annoObject.create({
      data: {
        frameId: frames[4]!,
        classId: classIds.car!,
        bbox: box(280, 500),
        source: 'fused',
        conf: 0.77,
        state: 'review',
      },
    });
    await db.annoObject.create({
      data: {
        frameId: frames[4]!,
        classId: classIds.truck!,
        bbox: box(272, 500),
        source: 'fused',
        conf: 0.9,
        state: 'review',
      },
    });
    const res = await call('POST', `/api/objects/${objects[3]}/propagate`, stack.annotator, {
      frames: 2,
      redetect: true,
    });
    expect([res.status, res.body.detail]).toEqual([200, undefined]);
    const [first, second] = res.body.frames;
    expect(first).toMatchObject({
      action: 'create',
      box: box(280, 500),
      snapped: { object_id: detection.id, conf: 0.77 },
    });
    expect(first.snapped.iou).toBeGreaterThanOrEqual(0.5);
    // Frame 5 has no detection: the prediction stands, from the filter corrected by the snapped box.
    expect(second).toMatchObject({ action: 'create', snapped: null });
    expect(second.box).toEqual(second.predicted);
    const made = await propagatedOf(trackId);
    expect(made.map((o) => [o.frame.index, o.conf])).toEqual([
      [4, 0.77],
      [5, null],
    ]);
    expect(made[0]!.bbox).toEqual(box(280, 500));
    expect(made[0]!.provenance[0]!.reasonerTrace).toMatchObject({ snapped_to: { object_id: detection.id } });
  });

  it('refuses an unknown object (404), malformed input, a rejected object and the last frame (422), and no token (401)', async () => {
    const { db } = stack.api.deps;
    const last = await db.annoObject.create({
      data: {
        frameId: frames[9]!,
        classId: classIds.person!,
        bbox: [10, 10, 40, 90],
        source: 'human',
        state: 'accepted',
      },
    });
    const rejected = await db.annoObject.create({
      data: {
        frameId: frames[2]!,
        classId: classIds.person!,
        bbox: [10, 10, 40, 90],
        source: 'fused',
        state: 'rejected',
      },
    });
    expect((await call('POST', `/api/objects/${MISSING}/propagate`, stack.annotator, {})).status).toBe(404);
    expect((await call('POST', '/api/objects/nope/propagate', stack.annotator, {})).status).toBe(422);
    expect(
      (await call('POST', `/api/objects/${last.id}/propagate`, stack.annotator, { frames: 0 })).status,
    ).toBe(422);
    expect(
      (await call('POST', `/api/objects/${last.id}/propagate`, stack.annotator, { frames: 31 })).status,
    ).toBe(422);
    expect(
      (await call('POST', `/api/objects/${last.id}/propagate`, stack.annotator, { what: 1 })).status,
    ).toBe(422);
    expect((await call('POST', `/api/objects/${last.id}/propagate`, stack.annotator, {})).status).toBe(422);
    expect((await call('POST', `/api/objects/${rejected.id}/propagate`, stack.annotator, {})).status).toBe(
      422,
    );
    expect((await call('POST', `/api/objects/${last.id}/propagate`, undefined, {})).status).toBe(401);
    expect(await db.annoObject.count({ where: { source: 'propagated', frame: { index: { gt: 7 } } } })).toBe(
      0,
    );
  });
});

describe('the agent propagate pair', () => {
  it('plans without writing anything', async () => {
    const { db } = stack.api.deps;
    const { objects } = await movingTrack(650);
    const before = {
      objects: await db.annoObject.count(),
      runs: await db.agentRun.count(),
      tracks: await db.track.count(),
    };
    const res = await call('POST', `/api/agent/objects/${objects[3]}/propagate/plan`, stack.reviewer, {
      frames: 3,
    });
    expect([res.status, res.body.detail]).toEqual([200, undefined]);
    expect(res.body).toMatchObject({ dry_run: true, created: 3, skipped: 0, object_id: objects[3] });
    expect(
      res.body.frames.map((f: { frame_index: number; action: string }) => [f.frame_index, f.action]),
    ).toEqual([
      [4, 'create'],
      [5, 'create'],
      [6, 'create'],
    ]);
    expect(cx(res.body.frames[0].box)).toBeGreaterThan(260);
    expect({
      objects: await db.annoObject.count(),
      runs: await db.agentRun.count(),
      tracks: await db.track.count(),
    }).toEqual(before);
  });

  it('applies as one revertible agent run, on a new track for an object without one; the revert leaves no propagated object', async () => {
    const { db } = stack.api.deps;
    const seed = await db.annoObject.create({
      data: {
        frameId: frames[0]!,
        classId: classIds.car!,
        bbox: box(900, 300),
        source: 'human',
        state: 'accepted',
      },
    });
    const res = await call('POST', `/api/agent/objects/${seed.id}/propagate`, stack.reviewer, { frames: 3 });
    expect([res.status, res.body.detail]).toEqual([200, undefined]);
    expect(res.body).toMatchObject({ status: 'completed', created: 3, creates_track: true });
    const trackId = res.body.track_id as string;
    expect((await db.annoObject.findUniqueOrThrow({ where: { id: seed.id } })).trackId).toBe(trackId);
    // One box has no velocity: the prediction holds it still.
    const made = await propagatedOf(trackId);
    expect(made.map((o) => [o.frame.index, o.bbox])).toEqual([1, 2, 3].map((i) => [i, box(900, 300)]));

    const run = await call('GET', `/api/agent/runs/${res.body.run_id}`, stack.reviewer);
    expect(run.body).toMatchObject({
      kind: 'propagate',
      status: 'completed',
      revertible: true,
      params: { object_id: seed.id, track_id: trackId, frames: 3 },
      changes: { frames: 3, objects_created: 3, track_created: true },
    });
    expect(await db.agentRunFrame.count({ where: { runId: res.body.run_id } })).toBe(3);

    expect((await call('POST', `/api/agent/runs/${res.body.run_id}/revert`, stack.reviewer)).status).toBe(
      403,
    );
    const undo = await call('POST', `/api/agent/runs/${res.body.run_id}/revert`, stack.admin);
    expect([undo.status, undo.body.detail]).toEqual([202, undefined]);
    await stack.env.client.workflow.getHandle(`agent-run-revert-${res.body.run_id}`).result();
    expect(await propagatedOf(trackId)).toEqual([]);
    expect(await db.annoObject.count({ where: { id: { in: made.map((o) => o.id) } } })).toBe(0);
    expect(await db.annoObject.findUnique({ where: { id: seed.id } })).not.toBeNull();
    const reverted = await call('GET', `/api/agent/runs/${res.body.run_id}`, stack.reviewer);
    expect(reverted.body).toMatchObject({
      status: 'reverted',
      changes: { reverted: { objects_removed: 3 } },
    });
  });

  it('is the reviewer’s: an annotator gets 403; unknown objects 404, malformed bodies 422', async () => {
    const { trackId, objects } = await movingTrack(50);
    for (const p of ['propagate', 'propagate/plan']) {
      expect((await call('POST', `/api/agent/objects/${objects[3]}/${p}`, stack.annotator, {})).status).toBe(
        403,
      );
      expect((await call('POST', `/api/agent/objects/${randomUUID()}/${p}`, stack.reviewer, {})).status).toBe(
        404,
      );
      expect(
        (await call('POST', `/api/agent/objects/${objects[3]}/${p}`, stack.reviewer, { frames: 'x' })).status,
      ).toBe(422);
    }
    expect(await propagatedOf(trackId)).toEqual([]);
  });
});
