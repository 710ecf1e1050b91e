import path from 'node:path';
import fs from 'node:fs';
import pino from 'pino';
import { createMaskStore } from '../activities/annotations/masks';
import type { Box } from '../core/geometry';
import { insideRings, isSegmentable, maskIou } from '../core/segmentation';
import type { WorkerProcess } from '../runtime/worker-process';
import { startGpuWorkerProcess } from '../workers-gpu/process';
import { startIngestStack, type IngestStack } from '../testkit/media/harness';
import { createVehicleSession, vehicleFrames, type VehicleFrame } from '../testkit/media/vehicles';

/**
 * Masks from deeplab_v3_voc.onnx on the real stack (docs/masks.md), measured against outlines of
 * the bus and the motorcycle traced by hand on the source photographs (test/fixtures/masks/).
 */
const TRUTH = JSON.parse(
  fs.readFileSync(path.join(__dirname, 'fixtures/masks/vehicles.json'), 'utf8'),
) as Record<'bus' | 'motorcycle', { photo_box: Box; rings: number[][] }>;

/** Mask IoU each class's mask must reach against the hand-traced outline (measured 0.69 for the bus, whose traced outline includes the parts pedestrians hide). */
const IOU_FLOOR = { bus: 0.6, motorcycle: 0.6 };

/** The hand-traced rings in a frame's pixels: the placement that maps the photo's box onto the frame's truth box. */
function truthRings(frame: VehicleFrame, cls: 'bus' | 'motorcycle'): number[][] {
  const { photo_box: pb, rings } = TRUTH[cls];
  const box = frame.truth[cls];
  const s = (box[2] - box[0]) / (pb[2] - pb[0]);
  return rings.map((r) => r.map((v, i) => (i % 2 ? box[1] + (v - pb[1]) * s : box[0] + (v - pb[0]) * s)));
}

let stack: IngestStack;
let frames: VehicleFrame[];
let frameIds: string[];
let sessionId: string;

beforeAll(async () => {
  stack = await startIngestStack();
  frames = await vehicleFrames(1, { width: 1280 });
  const created = await createVehicleSession(stack.api.deps, frames);
  sessionId = created.session.id;
  frameIds = created.frames.map((f) => f.id);
});

afterAll(async () => {
  await stack?.close();
});

const segment = (body: Record<string, unknown>) =>
  stack.api.call('POST', '/api/segment', {
    token: stack.annotator,
    body: { frame_id: frameIds[0], ...body },
  });

describe('POST /api/segment', () => {
  it.each(['bus', 'motorcycle'] as const)(
    'masks the %s of a box prompt close to the hand-traced outline',
    async (cls) => {
      const f = frames[0]!;
      const res = await segment({ class_name: cls, box: f.truth[cls] });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ class_name: cls, model: 'deeplab_v3_voc.onnx', box: f.truth[cls] });
      const iou = maskIou(res.body.polygons, truthRings(f, cls));
      expect(iou).toBeGreaterThanOrEqual(IOU_FLOOR[cls]);
      expect(res.body.coverage).toBeGreaterThan(0.4);
      expect(res.body.quality_flags).toEqual([]);
      // Kept inside the box.
      for (const r of res.body.polygons as number[][])
        r.forEach((v, i) => {
          const [lo, hi] = i % 2 ? [f.truth[cls][1], f.truth[cls][3]] : [f.truth[cls][0], f.truth[cls][2]];
          expect(v).toBeGreaterThanOrEqual(lo - 1);
          expect(v).toBeLessThanOrEqual(hi + 1);
        });
    },
  );

  it('masks the object under a point prompt, keeping only the ring that holds the point', async () => {
    const f = frames[0]!;
    // On the motorcycle's tank, in the photograph at (420, 200).
    const point = placePoint(f, [420, 200]);
    const res = await segment({ class_name: 'motorcycle', point });
    expect(res.status).toBe(200);
    expect(res.body.polygons.length).toBeGreaterThan(0);
    for (const r of res.body.polygons as number[][])
      expect(insideRings([r], point[0]!, point[1]!)).toBe(true);
    expect(maskIou(res.body.polygons, truthRings(f, 'motorcycle'))).toBeGreaterThanOrEqual(
      IOU_FLOOR.motorcycle,
    );
  });

  it('refuses by name a class the model does not know, and a body with both prompts', async () => {
    const res = await segment({ class_name: 'traffic_sign', box: [10, 10, 100, 100] });
    expect(res.status).toBe(422);
    expect(res.body.detail).toMatch(/knows no class "traffic_sign"/);
    const both = await segment({ class_name: 'bus', box: [10, 10, 100, 100], point: [20, 20] });
    expect(both.status).toBe(422);
    const missing = await stack.api.call('POST', '/api/segment', {
      token: stack.annotator,
      body: { frame_id: '00000000-0000-4000-8000-000000000000', class_name: 'bus', point: [5, 5] },
    });
    expect(missing.status).toBe(404);
  });
});

function placePoint(f: VehicleFrame, p: [number, number]): number[] {
  const { photo_box: pb } = TRUTH.motorcycle;
  const box = f.truth.motorcycle;
  const s = (box[2] - box[0]) / (pb[2] - pb[0]);
  return [box[0] + (p[0] - pb[0]) * s, box[1] + (p[1] - pb[1]) * s];
}

describe('auto-label masks', () => {
  let gpu: { process: WorkerProcess; running: Promise<void> };

  beforeAll(async () => {
    const process = await startGpuWorkerProcess(stack.config, pino({ level: 'silent' }));
    gpu = { process, running: process.run() };
  });

  afterAll(async () => {
    if (gpu?.process.worker.getState() === 'RUNNING') gpu.process.worker.shutdown();
    await gpu?.running.catch(() => undefined);
  });

  it('stores a mask with provenance path segmentation for the classes it knows, and none for the rest', async () => {
    const res = await stack.api.call('POST', '/api/autolabel/start', {
      token: stack.reviewer,
      body: { session_id: sessionId },
    });
    expect(res.status).toBe(202);
    await stack.env.client.workflow.getHandle(res.body.workflow_id).result();
    const objects = await stack.api.deps.db.annoObject.findMany({
      where: { frame: { sessionId } },
      include: { class: true, provenance: true },
    });
    const masks = createMaskStore(stack.api.deps.storage);
    const f = frames[0]!;
    let checked = 0;
    for (const o of objects) {
      const p = o.provenance[0]!;
      const trace = p.reasonerTrace as {
        segmentation?: { status: string; winner: string; coverage: number };
      };
      if (!isSegmentable(o.class.name)) {
        expect(p.paths).not.toContain('segmentation');
        expect(o.maskUri).toBeNull();
        continue;
      }
      expect(p.paths).toContain('segmentation');
      expect(trace.segmentation).toMatchObject({ status: 'ran', winner: 'segmentation' });
      const cls = o.class.name;
      if ((cls === 'bus' || cls === 'motorcycle') && o.maskUri) {
        const doc = await masks.read(o.maskUri);
        expect(maskIou(doc.polygons, truthRings(f, cls))).toBeGreaterThanOrEqual(IOU_FLOOR[cls] - 0.1);
        checked++;
      }
    }
    expect(checked).toBe(2);
  });
});
