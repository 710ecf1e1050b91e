import { createMaskStore } from '../activities/annotations/masks';
import { removeTestBlobs } from '../testkit/annotations';
import { useApiForFile } from '../testkit/api';
import { createSessionFixture } from '../testkit/session-fixtures';

/**
 * Mask/box consistency along a track on the real PostgreSQL and MinIO (docs/tracks.md "Mask/box
 * consistency"): a four-frame car track whose masks are stored as the annotation store stores
 * them; one mask shrinks to a corner of its box, one frame has no mask.
 */
const ctx = useApiForFile();
const MISSING = '00000000-0000-4000-8000-000000000000';
const square = (x: number, y: number, s: number) => [x, y, x + s, y, x + s, y + s, x, y + s];

let trackId: string;
let boxOnly: string;

beforeAll(async () => {
  const { db, storage } = ctx.api.deps;
  const { session, frames } = await createSessionFixture({ db, storage }, { frames: 4, storeImages: false });
  const car = (await db.ontologyClass.findFirstOrThrow({ where: { name: 'car' } })).id;
  trackId = (await db.track.create({ data: { sessionId: session.id, trackerVersion: 'bytetrack-ts-1' } })).id;
  boxOnly = (await db.track.create({ data: { sessionId: session.id, trackerVersion: 'bytetrack-ts-1' } })).id;
  const masks = createMaskStore(storage);
  // Frame i: a box of side 40 + 4i; masks fill it on frames 0 and 1, a quarter-side corner on 2, none on 3.
  for (const f of frames) {
    const side = 40 + 4 * f.index;
    const o = await db.annoObject.create({
      data: {
        frameId: f.id,
        classId: car,
        bbox: [10, 10, 10 + side, 10 + side],
        source: 'human',
        state: 'accepted',
        trackId,
      },
    });
    if (f.index < 3) {
      const uri = await masks.put({
        object_id: o.id,
        version: 1,
        polygons: [square(10, 10, f.index === 2 ? side / 4 : side)],
      });
      await db.annoObject.update({ where: { id: o.id }, data: { maskUri: uri } });
    }
    await db.annoObject.create({
      data: {
        frameId: f.id,
        classId: car,
        bbox: [200, 10, 240, 50],
        source: 'human',
        state: 'accepted',
        trackId: boxOnly,
      },
    });
  }
});

const get = (path: string, token = ctx.token.annotator) => ctx.api.call('GET', path, { token });

describe('GET /api/tracks/{track_id}/seg4d-consistency', () => {
  // Inside the describe: it runs before the file's database is dropped.
  afterAll(async () => {
    if (ctx.api) await removeTestBlobs(ctx.api.deps);
  });

  it('measures each masked frame against its box and the frame before, and flags what does not hold', async () => {
    const res = await get(`/api/tracks/${trackId}/seg4d-consistency`);
    expect([res.status, res.body.detail]).toEqual([200, undefined]);
    expect(res.body).toMatchObject({
      track_id: trackId,
      thresholds: { min_box_iou: 0.7, max_area_ratio: 2 },
      objects: 4,
      masked: 3,
      mask_coverage: 0.75,
      consistent: false,
      flag_counts: { mask_box_mismatch: 1, area_jump: 1, mask_missing: 1, empty_mask: 0 },
    });
    const frames = res.body.frames as Array<Record<string, unknown>>;
    expect(frames.map((f) => [f.frame_index, f.flags])).toEqual([
      [0, []],
      [1, []],
      [2, ['mask_box_mismatch', 'area_jump']],
      [3, ['mask_missing']],
    ]);
    expect(frames[1]).toMatchObject({ mask_area: 44 * 44, box_iou: 1, mask_box: [10, 10, 54, 54] });
    expect(frames[1]!.area_ratio).toBeCloseTo((44 * 44) / (40 * 40), 12);
    // A 12-px corner of a 48-px box: IoU 1/16.
    expect(frames[2]!.box_iou).toBeCloseTo(1 / 16, 12);
  });

  it('takes its thresholds from the query, and calls a track without masks consistent', async () => {
    const lenient = await get(`/api/tracks/${trackId}/seg4d-consistency?min_box_iou=0.05&max_area_ratio=20`);
    expect(lenient.body.flag_counts).toMatchObject({ mask_box_mismatch: 0, area_jump: 0, mask_missing: 1 });
    const boxes = await get(`/api/tracks/${boxOnly}/seg4d-consistency`);
    expect(boxes.body).toMatchObject({ objects: 4, masked: 0, consistent: true, mean_box_iou: null });
  });

  it('refuses a missing track, bad thresholds and a caller without a token', async () => {
    expect((await get(`/api/tracks/${MISSING}/seg4d-consistency`)).status).toBe(404);
    for (const q of ['min_box_iou=2', 'max_area_ratio=1', 'max_area_ratio=x', 'other=1']) {
      const res = await get(`/api/tracks/${trackId}/seg4d-consistency?${q}`);
      expect({ q, status: res.status }).toEqual({ q, status: 422 });
    }
    expect((await ctx.api.call('GET', `/api/tracks/${trackId}/seg4d-consistency`, {})).status).toBe(401);
  });
});
