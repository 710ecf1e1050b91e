import sharp from 'sharp';
import { drawRoad, markingCentre, WHITE, YELLOW, type DrawnRoad } from '../core/lanes/synthetic-road';
import { useApiForFile } from '../testkit/api';
import { createSessionFixture } from '../testkit/session-fixtures';

/**
 * Lanes on the real stack (docs/lanes.md): a session of three 320×240 frames, the first two with
 * a road drawn into a JPEG in MinIO (a solid white line, white dashes, a yellow double line; the
 * second frame's road moved 6 px right), the third with no stored image.
 */
const ctx = useApiForFile();
const call = (method: string, p: string, token: string | undefined, body?: unknown) =>
  ctx.api.call(method, p, { token, body });
const MISSING = '00000000-0000-4000-8000-000000000000';

const road = (dx: number): DrawnRoad => ({
  width: 320,
  height: 240,
  vanishing: [160 + dx, 96],
  markings: [
    { bottomX: 40 + dx, bottomWidth: 8, colour: WHITE },
    { bottomX: 170 + dx, bottomWidth: 8, colour: WHITE, pattern: { on: 12, off: 12 } },
    { bottomX: 282 + dx, bottomWidth: 6, colour: YELLOW },
    { bottomX: 298 + dx, bottomWidth: 6, colour: YELLOW },
  ],
});
/** Bottom x of the lanes a detector should find (the double line by its middle), left to right. */
const LANES_X = [40, 170, 290];

type Lane = { lane_id: string; points: Array<[number, number]>; lane_group_id: string | null } & Record<
  string,
  any
>;

/** The largest distance of a lane's points from the drawn line through `bottomX` of `r`. */
const offBy = (lane: Lane, r: DrawnRoad, bottomX: number) =>
  Math.max(
    ...lane.points.map(([x, y]) =>
      Math.abs(x - markingCentre(r, { bottomX, bottomWidth: 1, colour: WHITE }, y)),
    ),
  );
const bottomX = (lane: Lane) => lane.points[lane.points.length - 1]![0];

let sessionId: string;
let frames: string[];

beforeAll(async () => {
  const { db, storage } = ctx.api.deps;
  const fixture = await createSessionFixture({ db, storage }, { frames: 3, storeImages: false });
  sessionId = fixture.session.id;
  frames = fixture.frames.map((f) => f.id);
  const bucket = storage.bucket('frames');
  for (const [i, id] of frames.entries()) {
    const key = `test/${sessionId}/lanes-${i}.jpg`;
    if (i < 2) {
      const { width, height, rgb } = drawRoad(road(6 * i));
      const jpeg = await sharp(Buffer.from(rgb), { raw: { width, height, channels: 3 } })
        .jpeg({ quality: 95 })
        .toBuffer();
      await storage.client.putObject(bucket, key, jpeg, undefined, { 'Content-Type': 'image/jpeg' });
    }
    await db.frame.update({ where: { id }, data: { width: 320, height: 240, uri: `s3://${bucket}/${key}` } });
  }
});

describe('lane CRUD', () => {
  let laneId: string;

  it('draws a lane, lists it, and refuses malformed lanes naming the field', async () => {
    const created = await call('POST', `/api/frames/${frames[2]}/lanes`, ctx.token.annotator, {
      points: [
        [100, 120],
        [40, 239],
      ],
      lane_type: 'solid',
      attrs: { note: 'kerb side' },
    });
    expect([created.status, created.body.detail]).toEqual([201, undefined]);
    expect(created.body).toMatchObject({
      frame_id: frames[2],
      session_id: sessionId,
      lane_type: 'solid',
      source: 'human',
      conf: null,
      lane_group_id: null,
      attrs: { note: 'kerb side' },
      version: 1,
    });
    laneId = created.body.lane_id;
    const list = await call('GET', `/api/frames/${frames[2]}/lanes`, ctx.token.annotator);
    expect([list.status, list.body.count, list.body.items[0].lane_id]).toEqual([200, 1, laneId]);

    const refused = async (body: unknown, path = `/api/frames/${frames[2]}/lanes`, method = 'POST') => {
      const res = await call(method, path, ctx.token.annotator, body);
      expect(res.status).toBe(422);
      return (res.body.errors as Array<{ field: string }>).map((e) => e.field);
    };
    const line = [
      [10, 10],
      [20, 200],
    ];
    expect(await refused({ points: [line[0], [321, 100]] })).toEqual(['body.points.1']);
    expect(await refused({ points: [line[0]] })).toEqual(['body.points']);
    expect(await refused({ points: [line[0], line[0]] })).toEqual(['body.points']);
    expect(await refused({ points: line, lane_type: 'zigzag' })).toEqual(['body.lane_type']);
    expect(await refused({ points: line, conf: 2 })).toEqual(['body.conf']);
    expect(await refused({ points: line, colour: 'red' })).toEqual(['body.colour']);
    expect(await refused({ points: [[10, 'x'], line[1]] })).toEqual(['body.points.0.1']);
    expect(await refused({ expected_version: 1 }, `/api/lanes/${laneId}`, 'PUT')).toEqual(['body']);
    expect(await refused({ points: line }, `/api/lanes/${laneId}`, 'PUT')).toEqual(['body.expected_version']);
    expect(await refused({ expected_version: 1, conf: 0.5 }, `/api/lanes/not-a-uuid`, 'PUT')).toEqual([
      'path.lane_id',
    ]);
    expect(await ctx.api.deps.db.lane.count({ where: { frameId: frames[2] } })).toBe(1);
  });

  it('edits with the stored version, answers 409 on another, and audits what it was', async () => {
    const edited = await call('PUT', `/api/lanes/${laneId}`, ctx.token.annotator, {
      expected_version: 1,
      lane_type: 'dashed',
      points: [
        [110, 120],
        [40, 239],
      ],
    });
    expect([edited.status, edited.body.detail]).toEqual([200, undefined]);
    expect(edited.body).toMatchObject({
      lane_type: 'dashed',
      version: 2,
      source: 'human',
      attrs: { note: 'kerb side' },
    });
    expect(edited.body.points[0]).toEqual([110, 120]);
    const stale = await call('PUT', `/api/lanes/${laneId}`, ctx.token.annotator, {
      expected_version: 1,
      lane_type: 'solid',
    });
    expect(stale.status).toBe(409);
    expect(stale.body.conflicts).toEqual([{ lane_id: laneId, expected: 1, actual: 2 }]);
    const offFrame = await call('PUT', `/api/lanes/${laneId}`, ctx.token.annotator, {
      expected_version: 2,
      points: [
        [0, 0],
        [10, 241],
      ],
    });
    expect([offFrame.status, offFrame.body.errors?.[0]?.field]).toEqual([422, 'body.points.1']);
    const audit = await ctx.api.deps.db.auditLog.findFirstOrThrow({
      where: { action: 'lane.updated', subjectId: laneId },
    });
    expect(audit.detail).toMatchObject({
      changed: ['lane_type', 'points'],
      from_version: 1,
      before: {
        lane_type: 'solid',
        points: [
          [100, 120],
          [40, 239],
        ],
      },
    });
    const kept = await ctx.api.deps.db.lane.findUniqueOrThrow({ where: { id: laneId } });
    expect([kept.laneType, kept.version]).toEqual(['dashed', 2]);
  });

  it('deletes for a reviewer only, and answers 404 for what is not there', async () => {
    expect((await call('DELETE', `/api/lanes/${laneId}`, ctx.token.annotator)).status).toBe(403);
    const deleted = await call('DELETE', `/api/lanes/${laneId}`, ctx.token.reviewer);
    expect([deleted.status, deleted.body]).toEqual([
      200,
      { lane_id: laneId, frame_id: frames[2], deleted: true },
    ]);
    expect(
      await ctx.api.deps.db.auditLog.count({ where: { action: 'lane.deleted', subjectId: laneId } }),
    ).toBe(1);
    expect((await call('DELETE', `/api/lanes/${laneId}`, ctx.token.reviewer)).status).toBe(404);
    expect(
      (await call('PUT', `/api/lanes/${laneId}`, ctx.token.annotator, { expected_version: 2, conf: 0.5 }))
        .status,
    ).toBe(404);
    expect((await call('GET', `/api/frames/${MISSING}/lanes`, ctx.token.annotator)).status).toBe(404);
    const onMissing = await call('POST', `/api/frames/${MISSING}/lanes`, ctx.token.annotator, {
      points: [
        [1, 1],
        [2, 2],
      ],
    });
    expect(onMissing.status).toBe(404);
    expect((await call('GET', `/api/frames/${frames[0]}/lanes`, undefined)).status).toBe(401);
  });
});

describe('propose, propagate, link, classify, coverage', () => {
  let humanLane: string;

  it("proposes the drawn lines from the frame's stored image, replacing earlier proposals", async () => {
    const first = await call('POST', `/api/frames/${frames[0]}/lanes/propose`, ctx.token.annotator, {});
    expect([first.status, first.body.detail]).toEqual([200, undefined]);
    expect(first.body).toMatchObject({
      frame_id: frames[0],
      detector: 'ridge-hough-1',
      replaced: 0,
      count: 3,
    });
    const lanes = first.body.items as Lane[];
    lanes.forEach((lane, i) => {
      expect(offBy(lane, road(0), LANES_X[i]!)).toBeLessThan(2.5);
      expect(lane).toMatchObject({ source: 'proposed', lane_type: 'unknown', lane_group_id: null });
      expect(lane.conf).toBeGreaterThan(0.5);
    });
    expect(lanes.map((l) => [l.attrs.markings, l.attrs.colour])).toEqual([
      [1, 'white'],
      [1, 'white'],
      [2, 'yellow'],
    ]);

    // A person draws the solid line; proposing again leaves that one out and replaces the rest.
    const drawn = await call('POST', `/api/frames/${frames[0]}/lanes`, ctx.token.annotator, {
      points: lanes[0]!.points.map(([x, y]) => [x + 1, y]),
    });
    humanLane = drawn.body.lane_id;
    const again = await call('POST', `/api/frames/${frames[0]}/lanes/propose`, ctx.token.annotator, {});
    expect(again.body).toMatchObject({ replaced: 3, left_out_existing: 1, count: 2 });
    const list = await call('GET', `/api/frames/${frames[0]}/lanes`, ctx.token.annotator);
    expect(list.body.items.map((l: Lane) => l.source).sort()).toEqual(['human', 'proposed', 'proposed']);
    expect(
      await ctx.api.deps.db.auditLog.count({ where: { action: 'lanes.proposed', subjectId: frames[0] } }),
    ).toBe(2);
  });

  it('refuses to propose without a stored image, on a missing frame, or with a malformed body', async () => {
    const noImage = await call('POST', `/api/frames/${frames[2]}/lanes/propose`, ctx.token.annotator, {});
    expect(noImage.status).toBe(422);
    expect(noImage.body.detail).toMatch(/no stored image/);
    expect((await call('POST', `/api/frames/${MISSING}/lanes/propose`, ctx.token.annotator, {})).status).toBe(
      404,
    );
    const bad = await call('POST', `/api/frames/${frames[0]}/lanes/propose`, ctx.token.annotator, {
      roi_top: 2,
    });
    expect([bad.status, bad.body.errors[0].field]).toEqual([422, 'body.roi_top']);
  });

  it('propagates to the next frame onto its moved markings, in the same lane groups', async () => {
    const res = await call('POST', `/api/frames/${frames[0]}/lanes/propagate`, ctx.token.annotator, {});
    expect([res.status, res.body.detail]).toEqual([200, undefined]);
    expect(res.body).toMatchObject({
      from_frame_id: frames[0],
      to_frame_id: frames[1],
      image_stored: true,
      refined: 3,
      copied: 0,
      count: 3,
    });
    const sources = (await call('GET', `/api/frames/${frames[0]}/lanes`, ctx.token.annotator)).body
      .items as Lane[];
    expect(sources.every((l) => l.lane_group_id !== null && l.version === 2)).toBe(true);
    const carried = (res.body.items as Lane[]).sort((a, b) => bottomX(a) - bottomX(b));
    carried.forEach((lane, i) => {
      expect(lane.source).toBe('propagated');
      expect(offBy(lane, road(6), LANES_X[i]! + 6)).toBeLessThan(2.5);
      expect(lane.attrs.propagation).toMatchObject({ refined: true, copied_because: null });
      const from = sources.find((s) => s.lane_id === lane.attrs.propagation.from_lane_id)!;
      expect(lane.lane_group_id).toBe(from.lane_group_id);
    });
    // Again: the propagated lanes of those groups are replaced, not doubled.
    const again = await call('POST', `/api/frames/${frames[0]}/lanes/propagate`, ctx.token.annotator, {
      lane_ids: [humanLane],
    });
    expect(again.body).toMatchObject({ replaced: 1, count: 1 });
    expect(await ctx.api.deps.db.lane.count({ where: { frameId: frames[1] } })).toBe(3);

    const notHere = await call('POST', `/api/frames/${frames[1]}/lanes/propagate`, ctx.token.annotator, {
      lane_ids: [humanLane],
    });
    expect([notHere.status, notHere.body.errors[0].field]).toEqual([422, 'body.lane_ids']);
    const noLanes = await call('POST', `/api/frames/${frames[2]}/lanes/propagate`, ctx.token.annotator, {});
    expect([noLanes.status, noLanes.body.detail]).toEqual([422, expect.stringMatching(/no lanes/)]);
  });

  it('links lanes across frames: propagated groups kept, fresh proposals joined to them', async () => {
    const kept = await call('POST', `/api/sessions/${sessionId}/lanes/link`, ctx.token.reviewer, {});
    expect([kept.status, kept.body.detail]).toEqual([200, undefined]);
    expect(kept.body).toMatchObject({
      lanes: 6,
      groups: 3,
      linked_pairs: 3,
      changed: 0,
      frames_with_lanes: 2,
    });

    // The next frame's lanes are proposed afresh (no groups) and linked to the first frame's.
    for (const l of (await call('GET', `/api/frames/${frames[1]}/lanes`, ctx.token.annotator)).body.items)
      expect((await call('DELETE', `/api/lanes/${l.lane_id}`, ctx.token.reviewer)).status).toBe(200);
    const proposed = await call('POST', `/api/frames/${frames[1]}/lanes/propose`, ctx.token.annotator, {});
    expect(proposed.body.items.every((l: Lane) => l.lane_group_id === null)).toBe(true);
    expect(
      (await call('POST', `/api/sessions/${sessionId}/lanes/link`, ctx.token.annotator, {})).status,
    ).toBe(403);
    const linked = await call('POST', `/api/sessions/${sessionId}/lanes/link`, ctx.token.reviewer, {});
    expect(linked.body).toMatchObject({ lanes: 6, groups: 3, linked_pairs: 3, changed: 3 });
    const byX = async (frame: string) =>
      ((await call('GET', `/api/frames/${frame}/lanes`, ctx.token.annotator)).body.items as Lane[]).sort(
        (a, b) => bottomX(a) - bottomX(b),
      );
    const [a, b] = [await byX(frames[0]!), await byX(frames[1]!)];
    expect(b.map((l) => l.lane_group_id)).toEqual(a.map((l) => l.lane_group_id));
    expect(new Set(a.map((l) => l.lane_group_id)).size).toBe(3);
    // A limit under the 6 px the road moved links nothing across the frames.
    const tight = await call('POST', `/api/sessions/${sessionId}/lanes/link`, ctx.token.reviewer, {
      max_distance_px: 2,
    });
    expect(tight.body).toMatchObject({ linked_pairs: 0, groups: 6, changed: 3 });
    await call('POST', `/api/sessions/${sessionId}/lanes/link`, ctx.token.reviewer, {});
    expect((await call('POST', `/api/sessions/${MISSING}/lanes/link`, ctx.token.reviewer, {})).status).toBe(
      404,
    );
  });

  it("classifies solid, dashed and double lines from the frames' pixels, keeping a person's type", async () => {
    // A person's solid lane where the road has no paint, near the left side of the frame.
    const edge = await call('POST', `/api/frames/${frames[1]}/lanes`, ctx.token.annotator, {
      points: [
        [60, 130],
        [8, 239],
      ],
      lane_type: 'solid',
    });
    expect(
      (await call('POST', `/api/sessions/${sessionId}/lanes/classify`, ctx.token.annotator, {})).status,
    ).toBe(403);
    const res = await call('POST', `/api/sessions/${sessionId}/lanes/classify`, ctx.token.reviewer, {});
    expect([res.status, res.body.detail]).toEqual([200, undefined]);
    expect(res.body).toMatchObject({
      lanes: 7,
      classified: 6,
      kept_human: 1,
      frames_without_image: [],
      by_type: { solid: 2, dashed: 2, double_solid: 2, road_edge: 0, unknown: 0 },
    });
    for (const frame of frames.slice(0, 2)) {
      const lanes = (
        (await call('GET', `/api/frames/${frame}/lanes`, ctx.token.annotator)).body.items as Lane[]
      )
        .filter((l) => l.lane_id !== edge.body.lane_id)
        .sort((a, b) => bottomX(a) - bottomX(b));
      expect(lanes.map((l) => [l.lane_type, l.attrs.colour])).toEqual([
        ['solid', 'white'],
        ['dashed', 'white'],
        ['double_solid', 'yellow'],
      ]);
      expect(lanes[1]!.attrs.classify.strands[0].duty).toBeGreaterThan(0.35);
      expect(lanes[1]!.attrs.classify.strands[0].duty).toBeLessThan(0.65);
    }
    const overwrite = await call('POST', `/api/sessions/${sessionId}/lanes/classify`, ctx.token.reviewer, {
      overwrite: true,
    });
    expect(overwrite.body).toMatchObject({ classified: 7, kept_human: 0, by_type: { road_edge: 1 } });
    const edgeNow = await ctx.api.deps.db.lane.findUniqueOrThrow({ where: { id: edge.body.lane_id } });
    expect(edgeNow.laneType).toBe('road_edge');
    expect(
      (await call('POST', `/api/sessions/${MISSING}/lanes/classify`, ctx.token.reviewer, {})).status,
    ).toBe(404);
  });

  it('counts lanes per type and source, and the frames without lanes', async () => {
    const res = await call('GET', '/api/lanes/type-coverage', ctx.token.annotator);
    expect([res.status, res.body.detail]).toEqual([200, undefined]);
    expect(res.body).toEqual({
      session_id: null,
      lanes: 7,
      by_type: {
        solid: 2,
        dashed: 2,
        double_solid: 2,
        solid_dashed: 0,
        road_edge: 1,
        botts_dots: 0,
        unknown: 0,
      },
      by_source: { human: 2, proposed: 5, propagated: 0 },
      frames: 3,
      frames_with_lanes: 2,
      frames_without_lanes: 1,
    });
    const per = await call(
      'GET',
      `/api/lanes/type-coverage?session_id=${sessionId}&by_session=true`,
      ctx.token.annotator,
    );
    expect(per.body.sessions).toEqual([
      expect.objectContaining({ session_id: sessionId, lanes: 7, frames: 3, frames_without_lanes: 1 }),
    ]);
    expect(
      (await call('GET', `/api/lanes/type-coverage?session_id=${MISSING}`, ctx.token.annotator)).status,
    ).toBe(404);
    const bad = await call('GET', '/api/lanes/type-coverage?by_session=maybe', ctx.token.annotator);
    expect([bad.status, bad.body.errors[0].field]).toEqual([422, 'query.by_session']);
  });

  it('copies lanes to a next frame without a stored image, and refuses past the last frame', async () => {
    const res = await call('POST', `/api/frames/${frames[1]}/lanes/propagate`, ctx.token.annotator, {});
    expect(res.body).toMatchObject({ to_frame_id: frames[2], image_stored: false, refined: 0, copied: 4 });
    const reasons = (res.body.items as Lane[]).map((l) => l.attrs.propagation.copied_because).sort();
    expect(reasons).toEqual(['no_image', 'no_image', 'no_image', 'road_edge']);
    const last = await call('POST', `/api/frames/${frames[2]}/lanes/propagate`, ctx.token.annotator, {});
    expect([last.status, last.body.detail]).toEqual([422, expect.stringMatching(/last frame/)]);
  });
});
