import fs from 'node:fs';
import path from 'node:path';
import pino from 'pino';
import sharp from 'sharp';
import { modelArtifactKey, sha256Hex, storeModelArtifact } from '../activities/models/artifacts';
import type { WorkerProcess } from '../runtime/worker-process';
import { startGpuWorkerProcess } from '../workers-gpu/process';
import { startIngestStack, type IngestStack } from '../testkit/media/harness';
import { COCO_MOTORCYCLE, withoutCocoClass } from '../testkit/models';
import { createVehicleSession, vehicleFrames } from '../testkit/media/vehicles';
import { recordHistoryIfAsked, replayRecordedHistory, scheduledActivities } from '../testkit/temporal';

/**
 * The model registry and the champion/challenger gate on the real stack (docs/promotion.md):
 * models derived from the shipped YOLOX-Nano by editing its ONNX graph, registered from the models
 * bucket; the gate run as a Temporal workflow whose inference runs take the GPU slot, evaluated on
 * a sealed gold set of real photographs (a bus and a motorcycle whose boxes are known by
 * construction, two of six frames darkened to night exposure), refusing by rule, promoting, and
 * reverted; the champion sweep over new gold.
 *
 * The models: the shipped detector (the first champion); `no-moto` — its class-score biases for
 * COCO's motorcycle pushed down by 12, so it never finds a motorcycle (a safety class, l1
 * two_wheeler); `copy` — the shipped file byte for byte under another version.
 */
const HISTORY = path.join(__dirname, 'histories/promotion.json');
const SWEEP_HISTORY = path.join(__dirname, 'histories/promotion-sweep.json');
const NO_MOTO = 'yolox-nano-no-motorcycle@1';
const COPY = 'yolox-nano-copy@1';

let stack: IngestStack;
let gpu: { process: WorkerProcess; running: Promise<void> };
let sessionId: string;
let frameIds: string[];
let goldId: string;
let shipped: Buffer;
let noMotoBytes: Uint8Array;
let builtinVersion: string;

const api = (method: string, url: string, token: string, body?: unknown) =>
  stack.api.call(method, url, { token, ...(body === undefined ? {} : { body }) });
const db = () => stack.api.deps.db;

interface Outcome {
  promotion_id: string;
  outcome: string;
  rule: string | null;
  reasons: Array<{ rule: string; reason: string }>;
}

/** Starts the gate and waits for its decision. */
async function gate(body: Record<string, unknown>): Promise<{ outcome: Outcome; workflowId: string }> {
  const res = await api('POST', '/api/govern/promote', stack.admin, body);
  expect(res.status).toBe(202);
  const workflowId = (res.body as { workflow_id: string }).workflow_id;
  const outcome = (await stack.env.client.workflow.getHandle(workflowId).result()) as Outcome;
  return { outcome, workflowId };
}

const report = async (id: string) =>
  (await db().promotion.findUniqueOrThrow({ where: { id } })).report as {
    runs: { challenger: { runId: string; reused: boolean }; champion: { runId: string; reused: boolean } };
    significance: { difference: number; lower_bound: number; better: boolean; frames: number };
    safety: {
      passed: boolean;
      failing: Array<{ class_name: string; under: string[] }>;
      unmeasured: string[];
    };
    harness: Array<{ within: boolean }>;
    slices: Array<{ name: string; frames: number; delta: { map: number | null } }>;
  };

beforeAll(async () => {
  stack = await startIngestStack();
  const process = await startGpuWorkerProcess(stack.config, pino({ level: 'silent' }));
  gpu = { process, running: process.run() };
  shipped = fs.readFileSync(path.resolve(stack.config.models.dir, stack.config.models.closedSetDetector));
  builtinVersion = `${stack.config.models.closedSetDetector}@${sha256Hex(shipped).slice(0, 12)}`;

  // Six frames; the last two at night exposure, where the shipped model sees the motorcycle less surely.
  const frames = await vehicleFrames(6, { width: 640, step: 0.03 });
  for (const f of frames.slice(4))
    f.jpeg = await sharp(f.jpeg).modulate({ brightness: 0.3 }).jpeg({ quality: 90 }).toBuffer();
  const made = await createVehicleSession(stack.api.deps, frames);
  sessionId = made.session.id;
  frameIds = made.frames.map((f) => f.id);
  for (const [i, f] of frames.entries()) {
    // The exposure ingest would measure (Rec. 601 luma of the decoded frame): lighting derives from it.
    const stats = await sharp(f.jpeg).stats();
    const [r, g, b] = stats.channels.map((c) => c.mean);
    await db().frame.update({
      where: { id: frameIds[i]! },
      data: { context: { exposure: { mean_luma: 0.299 * r! + 0.587 * g! + 0.114 * b! } } },
    });
    for (const cls of ['bus', 'motorcycle'] as const) {
      const res = await api('POST', `/api/frames/${frameIds[i]}/objects`, stack.reviewer, {
        class_name: cls,
        bbox: f.truth[cls],
      });
      expect(res.status).toBe(201);
    }
  }
  const seal = await api('POST', '/api/quality/gold/seal', stack.reviewer, {
    name: 'street',
    frame_ids: frameIds,
  });
  expect(seal.status).toBe(201);
  goldId = (seal.body as { id: string }).id;

  noMotoBytes = withoutCocoClass(shipped, COCO_MOTORCYCLE);
  await storeModelArtifact(stack.api.deps, NO_MOTO, noMotoBytes);
  await storeModelArtifact(stack.api.deps, COPY, shipped);
}, 180_000);

afterAll(async () => {
  if (gpu?.process.worker.getState() === 'RUNNING') gpu.process.worker.shutdown();
  await gpu?.running.catch(() => undefined);
  await stack?.close();
});

describe('the registry', () => {
  it('registers an ONNX file of the models bucket that fits the YOLOX decoder, with its hash', async () => {
    const res = await api('POST', '/api/govern/registry/register', stack.reviewer, {
      model_version: NO_MOTO,
      name: 'no motorcycles',
      parent_version: null,
      notes: 'motorcycle class bias −12',
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      model_version: NO_MOTO,
      state: 'candidate',
      origin: 'registered',
      format: 'yolox',
      sha256: sha256Hex(noMotoBytes),
      size_bytes: noMotoBytes.length,
      artifact_uri: modelArtifactKey(NO_MOTO),
    });
    const copy = await api('POST', '/api/govern/registry/register', stack.reviewer, {
      model_version: COPY,
      key: modelArtifactKey(COPY),
    });
    expect(copy.status).toBe(201);
    expect((copy.body as { sha256: string }).sha256).toBe(sha256Hex(shipped));
    const audit = await db().auditLog.findMany({ where: { action: 'model.register' } });
    expect(audit.map((a) => (a.detail as { model_version: string }).model_version).sort()).toEqual(
      [COPY, NO_MOTO].sort(),
    );
  });

  it('refuses a duplicate version, a missing file, a file that is not ONNX or does not fit the decoder', async () => {
    const dup = await api('POST', '/api/govern/registry/register', stack.reviewer, { model_version: COPY });
    expect(dup.status).toBe(409);
    const missing = await api('POST', '/api/govern/registry/register', stack.reviewer, {
      model_version: 'absent@1',
    });
    expect(missing.status).toBe(404);
    expect((missing.body as { detail: string }).detail).toContain(modelArtifactKey('absent@1'));
    await storeModelArtifact(stack.api.deps, 'not-onnx@1', Buffer.from('this is not a model'));
    const junk = await api('POST', '/api/govern/registry/register', stack.reviewer, {
      model_version: 'not-onnx@1',
    });
    expect(junk.status).toBe(422);
    expect((junk.body as { detail: string }).detail).toMatch(/does not open with onnxruntime/);
    // A real ONNX model of another family: the face detector's outputs are not YOLOX's head.
    await storeModelArtifact(
      stack.api.deps,
      'yunet@1',
      fs.readFileSync(path.resolve(stack.config.models.dir, stack.config.models.faceDetector)),
    );
    const yunet = await api('POST', '/api/govern/registry/register', stack.reviewer, {
      model_version: 'yunet@1',
    });
    expect(yunet.status).toBe(422);
    expect((yunet.body as { detail: string }).detail).toMatch(/does not fit the YOLOX decoder/);
    const annotator = await api('POST', '/api/govern/registry/register', stack.annotator, {
      model_version: 'x@1',
    });
    expect(annotator.status).toBe(403);
    expect(
      await db().model.count({ where: { modelVersion: { in: ['not-onnx@1', 'yunet@1', 'absent@1'] } } }),
    ).toBe(0);
  });

  it('lists every version with state and lineage; the shipped detector is the first champion', async () => {
    const registry = await api('GET', '/api/govern/registry', stack.annotator);
    expect(registry.status).toBe(200);
    const body = registry.body as {
      champion: { model_version: string; origin: string; sha256: string };
      candidates: Array<{ model_version: string }>;
    };
    expect(body.champion).toMatchObject({
      model_version: builtinVersion,
      origin: 'builtin',
      sha256: sha256Hex(shipped),
    });
    expect(body.candidates.map((c) => c.model_version).sort()).toEqual([COPY, NO_MOTO].sort());
    const models = await api('GET', '/api/models?state=candidate', stack.annotator);
    expect(models.status).toBe(200);
    const items = (
      models.body as { items: Array<{ model_version: string; lineage: object; evaluations: unknown[] }> }
    ).items;
    expect(items.map((m) => m.model_version).sort()).toEqual([COPY, NO_MOTO].sort());
    expect(items[0]).toMatchObject({
      lineage: { parent_version: null, dataset_commit_id: null, training_job_id: null },
      evaluations: [],
    });
  });
});

describe('the gate', () => {
  it('refuses a challenger under a safety floor, naming the rule, after running both models on the GPU slot', async () => {
    const res = await api('POST', '/api/govern/promote', stack.admin, {
      challenger_version: NO_MOTO,
      gold_id: goldId,
    });
    expect(res.status).toBe(202);
    const started = res.body as { workflow_id: string; champion_version: string };
    expect(started).toMatchObject({ workflow_id: `promotion-${NO_MOTO}`, champion_version: builtinVersion });
    expect(res.headers.get('location')).toBe(
      `/api/govern/registry?task=detection&model_version=${encodeURIComponent(NO_MOTO)}`,
    );
    // The same challenger cannot be judged twice at once.
    const twice = await api('POST', '/api/govern/promote', stack.admin, {
      challenger_version: NO_MOTO,
      gold_id: goldId,
    });
    expect(twice.status).toBe(409);
    const handle = stack.env.client.workflow.getHandle(started.workflow_id);
    const outcome = (await handle.result()) as Outcome;
    expect(outcome).toMatchObject({ outcome: 'refused', rule: 'safety_floor' });
    expect(outcome.reasons.map((r) => r.rule)).toEqual(['safety_floor', 'not_better']);
    expect(outcome.reasons[0]!.reason).toMatch(/safety class motorcycle: .*recall 0\.0000 \(0\/6/);
    const r = await report(outcome.promotion_id);
    expect(r.runs.challenger.reused).toBe(false);
    expect(r.runs.champion.reused).toBe(false);
    expect(r.safety.failing.map((c) => c.class_name)).toEqual(['motorcycle']);
    // Persons are in the photograph but not in the gold set: a safety class that cannot be judged is named.
    expect(r.safety.unmeasured).toContain('person');
    expect(r.significance).toMatchObject({ frames: 6, better: false });
    expect(r.significance.difference).toBeLessThan(0);
    expect(r.harness.every((h) => h.within)).toBe(true);
    expect(r.slices.map((s) => [s.name, s.frames])).toEqual([
      ['all', 6],
      ['lighting=dark', 2],
      ['lighting=normal', 4],
    ]);
    const runs = await db().inferenceRun.findMany({
      where: { scope: { path: ['gold_id'], equals: goldId } },
    });
    expect(runs.map((x) => [x.modelVersion, x.status]).sort()).toEqual(
      [
        [builtinVersion, 'completed'],
        [NO_MOTO, 'completed'],
      ].sort(),
    );
    const models = await db().model.findMany({ where: { modelVersion: { in: [NO_MOTO, builtinVersion] } } });
    expect(Object.fromEntries(models.map((m) => [m.modelVersion, m.state]))).toEqual({
      [NO_MOTO]: 'candidate',
      [builtinVersion]: 'champion',
    });
    const audit = await db().auditLog.findFirstOrThrow({
      where: { action: 'model.promotion_refused', subjectId: outcome.promotion_id },
    });
    expect(audit.detail).toMatchObject({ rule: 'safety_floor', challenger_version: NO_MOTO });
    const history = await handle.fetchHistory();
    expect(scheduledActivities(history)).toEqual(['planPromotion', 'decidePromotion']);
    await recordHistoryIfAsked(HISTORY, () => handle.fetchHistory());
    await expect(
      replayRecordedHistory(HISTORY, require.resolve('../workflows'), 'recorded'),
    ).resolves.toBeUndefined();
  }, 180_000);

  let copyRun: string;

  it('runs a registered model on the GPU slot and registers the run as its evidence on the gold set', async () => {
    const res = await api('POST', '/api/inference-runs', stack.reviewer, {
      mode: 'gpu',
      session_id: sessionId,
      model_version: COPY,
    });
    expect(res.status).toBe(202);
    const started = res.body as { id: string; workflow_id: string; model_version: string };
    expect(started.model_version).toBe(COPY);
    await stack.env.client.workflow.getHandle(started.workflow_id).result();
    copyRun = started.id;
    expect(await db().inferenceRun.findUniqueOrThrow({ where: { id: copyRun } })).toMatchObject({
      status: 'completed',
      modelVersion: COPY,
      framesDone: 6,
    });
    const reg = await api('POST', '/api/govern/registry/register_run', stack.reviewer, {
      run_id: copyRun,
      gold_id: goldId,
    });
    expect(reg.status).toBe(201);
    const body = reg.body as {
      model: { model_version: string };
      operation_id: string;
      evaluation: { frames: number; gold: number; map: number; parity: { within: boolean } };
      safety: { passed: boolean; classes: Array<{ class_name: string; recall: number }> };
    };
    expect(body.model.model_version).toBe(COPY);
    expect(body.evaluation).toMatchObject({ frames: 6, gold: 12, parity: { within: true } });
    expect(body.evaluation.map).toBeGreaterThan(0.3);
    expect(body.safety.passed).toBe(true);
    expect(body.safety.classes.map((c) => c.class_name)).toEqual(['motorcycle']);
    expect(await db().auditLog.count({ where: { action: 'model.register_run' } })).toBe(1);
    const unknownModel = await api('POST', '/api/inference-runs', stack.reviewer, {
      mode: 'gpu',
      session_id: sessionId,
      model_version: 'never-registered@1',
    });
    expect(unknownModel.status).toBe(404);
  }, 180_000);

  it('refuses a challenger that does not beat the champion, reusing both runs', async () => {
    const { outcome } = await gate({ challenger_version: COPY, gold_id: goldId });
    expect(outcome).toMatchObject({ outcome: 'refused', rule: 'not_better' });
    expect(outcome.reasons).toHaveLength(1);
    expect(outcome.reasons[0]!.reason).toMatch(/does not beat .*difference 0\.0000/);
    const r = await report(outcome.promotion_id);
    // The champion's run from the first gate, the challenger's registered run: nothing ran again.
    expect(r.runs.champion.reused).toBe(true);
    expect(r.runs.challenger).toMatchObject({ reused: true, runId: copyRun });
    expect(r.safety.passed).toBe(true);
    // Byte-identical models give identical predictions: nothing to resample.
    expect(r.significance).toMatchObject({ difference: 0, lower_bound: 0, better: false });
    expect(r.slices.every((s) => s.delta.map === 0)).toBe(true);
    expect(
      await db().inferenceRun.count({
        where: { modelVersion: builtinVersion, scope: { path: ['gold_id'], equals: goldId } },
      }),
    ).toBe(1);
  }, 180_000);

  it('refuses a reconstructed run by its rule, and a named run of another model', async () => {
    const rebuilt = await api('POST', '/api/inference-runs', stack.reviewer, {
      mode: 'reconstruct',
      session_id: sessionId,
      model_version: COPY,
    });
    expect(rebuilt.status).toBe(201);
    const runId = (rebuilt.body as { id: string }).id;
    const { outcome } = await gate({ challenger_version: COPY, gold_id: goldId, challenger_run_id: runId });
    expect(outcome).toMatchObject({ outcome: 'refused', rule: 'reconstructed_run' });
    expect(outcome.reasons[0]!.reason).toContain(runId);
    const other = await api('POST', '/api/govern/promote', stack.admin, {
      challenger_version: NO_MOTO,
      gold_id: goldId,
      challenger_run_id: runId,
    });
    expect(other.status).toBe(422);
    const unknown = await api('POST', '/api/govern/promote', stack.admin, {
      challenger_version: 'never-registered@1',
      gold_id: goldId,
    });
    expect(unknown.status).toBe(404);
    const champion = await api('POST', '/api/govern/promote', stack.admin, {
      challenger_version: builtinVersion,
      gold_id: goldId,
    });
    expect(champion.status).toBe(409);
    const reviewer = await api('POST', '/api/govern/promote', stack.reviewer, {
      challenger_version: COPY,
      gold_id: goldId,
    });
    expect(reviewer.status).toBe(403);
    const neither = await api('POST', '/api/govern/promote', stack.admin, { gold_id: goldId });
    expect(neither.status).toBe(422);
  }, 180_000);

  describe('against a degraded champion', () => {
    let promotionId: string;

    beforeAll(async () => {
      // A deployment whose champion is the degraded model (set directly: the gate could never have promoted it).
      await db().model.update({
        where: { modelVersion: builtinVersion },
        data: { state: 'retired', retiredAt: new Date() },
      });
      await db().model.update({ where: { modelVersion: NO_MOTO }, data: { state: 'champion' } });
    });

    it('promotes a challenger that beats it significantly: challenger champion, champion retired, audited', async () => {
      const { outcome } = await gate({ challenger_version: COPY, gold_id: goldId });
      expect(outcome).toMatchObject({ outcome: 'promoted', rule: null, reasons: [] });
      promotionId = outcome.promotion_id;
      const r = await report(promotionId);
      // Both runs already existed on this gold set: the gate ran nothing new.
      expect(r.runs.challenger.reused && r.runs.champion.reused).toBe(true);
      expect(r.significance.better).toBe(true);
      expect(r.significance.lower_bound).toBeGreaterThan(0);
      const normal = r.slices.find((s) => s.name === 'lighting=normal')!;
      expect(normal.delta.map).toBeGreaterThan(0);
      const models = await db().model.findMany({ where: { modelVersion: { in: [NO_MOTO, COPY] } } });
      const byVersion = Object.fromEntries(models.map((m) => [m.modelVersion, m]));
      expect(byVersion[COPY]).toMatchObject({ state: 'champion', retiredAt: null });
      expect(byVersion[COPY]!.promotedAt).toBeInstanceOf(Date);
      expect(byVersion[NO_MOTO]!.state).toBe('retired');
      expect(byVersion[NO_MOTO]!.retiredAt).toBeInstanceOf(Date);
      expect(await db().auditLog.count({ where: { action: 'model.promote', subjectId: promotionId } })).toBe(
        1,
      );
      const registry = await api(
        'GET',
        `/api/govern/registry?model_version=${encodeURIComponent(COPY)}`,
        stack.annotator,
      );
      const body = registry.body as {
        champion: { model_version: string };
        promotions: Array<{ outcome: string; rule: string | null }>;
      };
      expect(body.champion.model_version).toBe(COPY);
      expect(body.promotions.map((p) => [p.outcome, p.rule])).toEqual([
        ['promoted', null],
        ['refused', 'reconstructed_run'],
        ['refused', 'not_better'],
      ]);
      // The gate's evaluations are the quality plane's: each model's latest shows on the registry.
      const listed = await api('GET', '/api/models', stack.annotator);
      const copy = (
        listed.body as {
          items: Array<{ model_version: string; evaluations: Array<{ gold_id: string; map: number }> }>;
        }
      ).items.find((m) => m.model_version === COPY)!;
      expect(copy.evaluations).toHaveLength(1);
      expect(copy.evaluations[0]!.gold_id).toBe(goldId);
      expect(copy.evaluations[0]!.map).toBeGreaterThan(0);
    }, 180_000);

    it('reverts the promotion, restoring the champion it replaced, once', async () => {
      const res = await api('POST', '/api/govern/promote', stack.admin, { revert: promotionId });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        outcome: 'reverted',
        reverts_id: promotionId,
        challenger_version: COPY,
        champion_version: NO_MOTO,
        champion: { model_version: NO_MOTO, state: 'champion' },
      });
      const models = await db().model.findMany({ where: { modelVersion: { in: [NO_MOTO, COPY] } } });
      expect(Object.fromEntries(models.map((m) => [m.modelVersion, m.state]))).toEqual({
        [NO_MOTO]: 'champion',
        [COPY]: 'candidate',
      });
      expect(
        (await db().promotion.findUniqueOrThrow({ where: { id: promotionId } })).revertedAt,
      ).toBeInstanceOf(Date);
      expect(await db().auditLog.count({ where: { action: 'model.promotion_revert' } })).toBe(1);
      const again = await api('POST', '/api/govern/promote', stack.admin, { revert: promotionId });
      expect(again.status).toBe(409);
      const refused = await db().promotion.findFirstOrThrow({ where: { outcome: 'refused' } });
      const notAPromotion = await api('POST', '/api/govern/promote', stack.admin, { revert: refused.id });
      expect(notAPromotion.status).toBe(409);
      const mixed = await api('POST', '/api/govern/promote', stack.admin, {
        revert: promotionId,
        gold_id: goldId,
      });
      expect(mixed.status).toBe(422);
    });
  });
});

describe('the champion sweep', () => {
  it('evaluates the champion on gold sealed since, and flags the safety floor it breaks there', async () => {
    const seal = await api('POST', '/api/quality/gold/seal', stack.reviewer, {
      name: 'street, first half',
      frame_ids: frameIds.slice(0, 3),
    });
    expect(seal.status).toBe(201);
    const newGold = (seal.body as { id: string }).id;
    const res = await api('POST', '/api/activelearn/champion-sweep', stack.reviewer, {});
    expect(res.status).toBe(202);
    const body = res.body as { workflow_id: string; champion_version: string; due_gold_ids: string[] };
    // The champion (the degraded model, restored by the revert) was evaluated on the first gold set by the gate.
    expect(body).toMatchObject({
      workflow_id: 'champion-sweep-detection',
      champion_version: NO_MOTO,
      due_gold_ids: [newGold],
    });
    const handle = stack.env.client.workflow.getHandle(body.workflow_id);
    const done = (await handle.result()) as {
      operation_id: string;
      result: {
        evaluated: Array<{ gold_id: string; run_reused: boolean; safety: { passed: boolean } }>;
        alerts: string[];
      };
    };
    expect(done.result.evaluated.map((e) => [e.gold_id, e.run_reused, e.safety.passed])).toEqual([
      [newGold, false, false],
    ]);
    expect(done.result.alerts).toEqual([
      expect.stringMatching(new RegExp(`on gold set ${newGold}: safety class motorcycle under its floor`)),
    ]);
    await recordHistoryIfAsked(SWEEP_HISTORY, () => handle.fetchHistory());
    await expect(
      replayRecordedHistory(SWEEP_HISTORY, require.resolve('../workflows'), 'recorded'),
    ).resolves.toBeUndefined();
    const latest = await api(
      'GET',
      `/api/eval/operations/champion_sweep/latest?subject_id=${encodeURIComponent(NO_MOTO)}`,
      stack.annotator,
    );
    expect(latest.status).toBe(200);
    expect((latest.body as { id: string }).id).toBe(done.operation_id);
    // Nothing is due any more.
    const again = await api('POST', '/api/activelearn/champion-sweep', stack.reviewer, {});
    expect(again.status).toBe(202);
    expect((again.body as { due_gold_ids: string[] }).due_gold_ids).toEqual([]);
    const empty = (await stack.env.client.workflow.getHandle(body.workflow_id).result()) as {
      result: { evaluated: unknown[] };
    };
    expect(empty.result.evaluated).toEqual([]);
  }, 180_000);
});
