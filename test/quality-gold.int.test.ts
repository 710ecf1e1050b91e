import path from 'node:path';
import pino from 'pino';
import type { WorkerProcess } from '../runtime/worker-process';
import { startGpuWorkerProcess } from '../workers-gpu/process';
import { startIngestStack, type IngestStack } from '../testkit/media/harness';
import { createVehicleSession, vehicleFrames, type VehicleFrame } from '../testkit/media/vehicles';
import { recordHistoryIfAsked, replayRecordedHistory } from '../testkit/temporal';

/**
 * The prediction plane and gold sets on the real stack (docs/quality.md): a GPU inference run of
 * yolox_nano through the one-slot gpu worker, an imported external model's run and a run
 * reconstructed from history; a gold set sealed from human-verified frames, frozen against later
 * edits, measured against each run with bootstrap intervals, and split by provenance.
 */
const HISTORY = path.join(__dirname, 'histories/inference-run.json');
let stack: IngestStack;
let gpu: { process: WorkerProcess; running: Promise<void> };
let frames: VehicleFrame[];
let frameIds: string[];
let sessionId: string;
const classId: Record<string, number> = {};
/** Gold objects by frame: the bus and the motorcycle, each where the photograph put it. */
const human: string[] = [];
let confirmedId: string;

const api = (method: string, path: string, token: string, body?: unknown) =>
  stack.api.call(method, path, { token, ...(body === undefined ? {} : { body }) });

beforeAll(async () => {
  stack = await startIngestStack();
  const process = await startGpuWorkerProcess(stack.config, pino({ level: 'silent' }));
  gpu = { process, running: process.run() };
  for (const c of await stack.api.deps.db.ontologyClass.findMany()) classId[c.name] = c.id;
  frames = await vehicleFrames(4, { width: 640 });
  const made = await createVehicleSession(stack.api.deps, frames);
  sessionId = made.session.id;
  frameIds = made.frames.map((f) => f.id);
  // Frames 0–2: the bus and motorcycle drawn by a person (accepted). On frame 0 the motorcycle is a
  // machine proposal a reviewer confirmed, so the gold set has one confirmed detection.
  for (const [i, f] of frames.slice(0, 3).entries()) {
    for (const cls of ['bus', 'motorcycle'] as const) {
      if (i === 0 && cls === 'motorcycle') continue;
      const res = await api('POST', `/api/frames/${frameIds[i]}/objects`, stack.reviewer, {
        class_name: cls,
        bbox: f.truth[cls],
      });
      expect(res.status).toBe(201);
      human.push((res.body as { id: string }).id);
    }
  }
  const machine = await stack.api.deps.db.annoObject.create({
    data: {
      frameId: frameIds[0]!,
      bbox: frames[0]!.truth.motorcycle.map((v, k) => v + (k < 2 ? -6 : 6)),
      classId: classId.bicycle!,
      conf: 0.61,
      source: 'fused',
      state: 'review',
    },
  });
  const reviewed = await api('POST', `/api/objects/${machine.id}/review`, stack.reviewer, {
    action: 'edit',
    class_name: 'motorcycle',
    bbox: frames[0]!.truth.motorcycle,
    state: 'accepted',
  });
  expect(reviewed.status).toBe(200);
  confirmedId = machine.id;
  // Frame 3 still has an unreviewed machine proposal: it is not human-verified.
  await stack.api.deps.db.annoObject.create({
    data: {
      frameId: frameIds[3]!,
      bbox: frames[3]!.truth.bus,
      classId: classId.bus!,
      conf: 0.9,
      source: 'fused',
      state: 'review',
    },
  });
}, 120_000);

afterAll(async () => {
  if (gpu?.process.worker.getState() === 'RUNNING') gpu.process.worker.shutdown();
  await gpu?.running.catch(() => undefined);
  await stack?.close();
});

describe('gold sets', () => {
  let goldId: string;
  let hash: string;

  it('refuses frames that are not human-verified, and partial frames, naming them', async () => {
    const unverified = await api('POST', '/api/quality/gold/seal', stack.reviewer, {
      name: 'with frame 3',
      frame_ids: frameIds,
    });
    expect(unverified.status).toBe(422);
    expect(unverified.body).toMatchObject({ unverified: [{ frame_id: frameIds[3] }] });
    const partial = await api('POST', '/api/quality/gold/seal', stack.reviewer, {
      name: 'half a frame',
      object_ids: [human[0]],
    });
    expect(partial.status).toBe(422);
    expect((partial.body as { left_out: string[] }).left_out).toEqual([confirmedId]);
    const annotator = await api('POST', '/api/quality/gold/seal', stack.annotator, {
      name: 'x',
      frame_ids: [frameIds[0]],
    });
    expect(annotator.status).toBe(403);
    expect(await stack.api.deps.db.goldSet.count()).toBe(0);
  });

  it('seals the accepted objects of verified frames with a content hash', async () => {
    const res = await api('POST', '/api/quality/gold/seal', stack.reviewer, {
      name: 'vehicles',
      frame_ids: frameIds.slice(0, 3),
    });
    expect(res.status).toBe(201);
    const body = res.body as {
      id: string;
      objects: number;
      frames: number;
      content_hash: string;
      sealed: boolean;
    };
    expect(body).toMatchObject({ objects: 6, frames: 3, sealed: true });
    expect(body.content_hash).toMatch(/^[0-9a-f]{64}$/);
    goldId = body.id;
    hash = body.content_hash;
    // The whole session seals to the same content: its verified frames are frames 0–2.
    const bySession = await api('POST', '/api/quality/gold/seal', stack.reviewer, {
      name: 'session',
      session_id: sessionId,
    });
    expect(bySession.status).toBe(201);
    expect((bySession.body as { content_hash: string }).content_hash).toBe(hash);
  });

  it('stays frozen when the live objects change', async () => {
    const obj = await stack.api.deps.db.annoObject.findUniqueOrThrow({ where: { id: human[0]! } });
    const edit = await api('POST', `/api/objects/${obj.id}/review`, stack.reviewer, {
      action: 'edit',
      bbox: [10, 10, 100, 100],
      expected_version: obj.version,
    });
    expect(edit.status).toBe(200);
    const list = await api('GET', '/api/quality/gold-sets?verify=true', stack.annotator);
    expect(list.status).toBe(200);
    const mine = (
      list.body as { items: Array<{ id: string; content_hash: string; intact: boolean }> }
    ).items.find((g) => g.id === goldId)!;
    expect(mine).toMatchObject({ content_hash: hash, intact: true });
    const item = await stack.api.deps.db.goldItem.findUniqueOrThrow({
      where: { goldId_objectId: { goldId, objectId: human[0]! } },
    });
    expect(item.bbox.map((v, k) => v - frames[0]!.truth.bus[k]!).every((d) => Math.abs(d) < 1e-6)).toBe(true);
    // Tampering with a frozen item is what `intact` exists to show.
    await stack.api.deps.db.goldItem.update({
      where: { goldId_objectId: { goldId, objectId: human[0]! } },
      data: { bbox: [1, 1, 2, 2] },
    });
    const tampered = await api('GET', '/api/quality/gold-sets?verify=true', stack.annotator);
    expect(
      (tampered.body as { items: Array<{ id: string; intact: boolean }> }).items.find((g) => g.id === goldId)!
        .intact,
    ).toBe(false);
    await stack.api.deps.db.goldItem.update({
      where: { goldId_objectId: { goldId, objectId: human[0]! } },
      data: { bbox: frames[0]!.truth.bus },
    });
  });

  it('splits confirmed detections from boxes drawn from scratch', async () => {
    const res = await api('GET', `/api/explore/gold/${goldId}/provenance`, stack.annotator);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      objects: 6,
      confirmed: { objects: 1, relabelled: 1, object_ids: [confirmedId], by_class: { motorcycle: 1 } },
      drawn: { objects: 5, by_class: { bus: 3, motorcycle: 2 } },
    });
    const c = (res.body as { confirmed: { box_iou_mean: number } }).confirmed;
    expect(c.box_iou_mean).toBeGreaterThan(0.8);
    expect(c.box_iou_mean).toBeLessThan(1);
  });

  describe('measured against runs', () => {
    let gpuRun: string;

    it('runs the detector over the frames on the GPU slot', async () => {
      const res = await api('POST', '/api/inference-runs', stack.reviewer, {
        mode: 'gpu',
        session_id: sessionId,
      });
      expect(res.status).toBe(202);
      const body = res.body as { id: string; workflow_id: string; status_url: string };
      expect(res.headers.get('location')).toBe(`/api/eval/operations?subject_id=${body.id}`);
      await stack.env.client.workflow.getHandle(body.workflow_id).result();
      gpuRun = body.id;
      await recordHistoryIfAsked(HISTORY, () =>
        stack.env.client.workflow.getHandle(body.workflow_id).fetchHistory(),
      );
      await expect(
        replayRecordedHistory(HISTORY, require.resolve('../workflows'), 'recorded'),
      ).resolves.toBeUndefined();
      const run = await stack.api.deps.db.inferenceRun.findUniqueOrThrow({ where: { id: gpuRun } });
      expect(run).toMatchObject({ status: 'completed', origin: 'gpu', framesDone: 4, reconstructed: false });
      expect(run.modelVersion).toMatch(/^yolox_nano\.onnx@[0-9a-f]{12}$/);
      const preds = await stack.api.deps.db.prediction.findMany({ where: { runId: gpuRun } });
      expect(preds.length).toBe(run.nPredictions);
      const bus = preds.filter((p) => p.classId === classId.bus);
      expect(bus.length).toBeGreaterThanOrEqual(4);
      // Every prediction carries the model's view of the other classes.
      for (const p of bus) {
        const probs = p.probs as Record<string, number>;
        expect(probs[String(classId.bus)]).toBeCloseTo(p.conf!, 5);
        expect(Object.keys(probs).length).toBeGreaterThan(10);
      }
      expect(await stack.api.deps.db.gpuSlot.count()).toBe(0);
      const crop = await stack.api.call('GET', `/api/predictions/${bus[0]!.id}/crop?size=64`, {
        token: stack.annotator,
      });
      expect(crop.status).toBe(200);
      expect(crop.headers.get('content-type')).toBe('image/jpeg');
    }, 120_000);

    it('measures the GPU run with per-class figures and bootstrap intervals, recorded as an operation', async () => {
      const res = await api('POST', `/api/quality/gold/${goldId}/measure`, stack.annotator, {
        run_id: gpuRun,
        n_boot: 500,
      });
      expect(res.status).toBe(200);
      const m = res.body as {
        operation_id: string;
        classes: Array<{
          class_id: number;
          gold: number;
          recall: number;
          recall_ci: { lo: number; hi: number };
          ap: number;
        }>;
        map: number;
        n_boot: number;
        seed: number;
      };
      expect(m).toMatchObject({ n_boot: 500, seed: 12345 });
      const bus = m.classes.find((c) => c.class_id === classId.bus)!;
      expect(bus.gold).toBe(3);
      expect(bus.recall).toBe(1);
      expect(bus.ap).toBeGreaterThan(0.5);
      expect(bus.recall_ci.lo).toBeLessThanOrEqual(bus.recall);
      const again = await api('POST', `/api/quality/gold/${goldId}/measure`, stack.annotator, {
        run_id: gpuRun,
        n_boot: 500,
      });
      expect((again.body as { classes: unknown }).classes).toEqual(m.classes);
      const latest = await api(
        'GET',
        `/api/eval/operations/gold_measure/latest?subject_id=${gpuRun}`,
        stack.annotator,
      );
      expect(latest.status).toBe(200);
      expect(latest.body).toMatchObject({
        id: (again.body as { operation_id: string }).operation_id,
        op_type: 'gold_measure',
      });
      const list = await api('GET', `/api/eval/operations?subject_id=${goldId}&limit=1`, stack.annotator);
      expect((list.body as { items: unknown[]; next_cursor: string | null }).items).toHaveLength(1);
      expect((list.body as { next_cursor: string | null }).next_cursor).not.toBeNull();
    });

    it('imports an external model run and measures it', async () => {
      const model = await api('POST', '/api/models/external', stack.reviewer, {
        model_version: 'vendor-det@2.1',
        name: 'vendor detector',
        class_names: ['bus', 'motorcycle'],
      });
      expect(model.status).toBe(201);
      expect(
        (
          await api('POST', '/api/models/external', stack.reviewer, {
            model_version: 'vendor-det@2.1',
            name: 'again',
            class_names: ['bus'],
          })
        ).status,
      ).toBe(409);
      const perfect = frames.slice(0, 3).flatMap((f, i) =>
        (['bus', 'motorcycle'] as const).map((cls) => ({
          frame_id: frameIds[i],
          class_name: cls,
          conf: 0.9,
          bbox: f.truth[cls],
        })),
      );
      const runs = await stack.api.deps.db.inferenceRun.count();
      const outside = await api('POST', '/api/inference-runs', stack.reviewer, {
        mode: 'import',
        model_version: 'vendor-det@2.1',
        predictions: [
          ...perfect,
          { frame_id: frameIds[0], class_name: 'car', conf: 0.5, bbox: [0, 0, 10, 10] },
        ],
      });
      expect(outside.status).toBe(422);
      const unknownFrame = await api('POST', '/api/inference-runs', stack.reviewer, {
        mode: 'import',
        model_version: 'vendor-det@2.1',
        predictions: [
          ...perfect,
          {
            frame_id: '00000000-0000-4000-8000-000000000000',
            class_name: 'bus',
            conf: 0.5,
            bbox: [0, 0, 10, 10],
          },
        ],
      });
      expect(unknownFrame.status).toBe(404);
      expect(await stack.api.deps.db.inferenceRun.count()).toBe(runs);
      const imported = await api('POST', '/api/inference-runs', stack.reviewer, {
        mode: 'import',
        model_version: 'vendor-det@2.1',
        predictions: perfect,
      });
      expect(imported.status).toBe(201);
      expect(imported.body).toMatchObject({ origin: 'imported', n_predictions: 6, status: 'completed' });
      const m = await api('POST', `/api/quality/gold/${goldId}/measure`, stack.annotator, {
        run_id: (imported.body as { id: string }).id,
        n_boot: 200,
      });
      expect(m.status).toBe(200);
      expect(m.body).toMatchObject({ precision: 1, recall: 1, map: 1 });
    });

    it('rebuilds a run from history with null confidences, which AP evaluation refuses by name', async () => {
      const res = await api('POST', '/api/inference-runs', stack.reviewer, {
        mode: 'reconstruct',
        session_id: sessionId,
      });
      expect(res.status).toBe(201);
      const run = res.body as { id: string; reconstructed: boolean; n_predictions: number };
      expect(run.reconstructed).toBe(true);
      // The confirmed motorcycle (first proposed as a bicycle) and frame 3's open proposal.
      expect(run.n_predictions).toBe(2);
      const preds = await stack.api.deps.db.prediction.findMany({
        where: { runId: run.id },
        orderBy: { classId: 'asc' },
      });
      expect(preds.map((p) => [p.classId, p.conf])).toEqual(
        [
          [classId.bicycle, null],
          [classId.bus, null],
        ].sort((a, b) => a[0]! - b[0]!),
      );
      const m = await api('POST', `/api/quality/gold/${goldId}/measure`, stack.annotator, { run_id: run.id });
      expect(m.status).toBe(422);
      expect((m.body as { detail: string }).detail).toMatch(/reconstructed/);
    });
  });
});
