import { randomUUID } from 'node:crypto';
import path from 'node:path';
import pino from 'pino';
import { readObject } from '../activities/inspector/frame-objects';
import { iou } from '../core/geometry';
import type { PiiRegion } from '../core/pii/regions';
import type { Frame } from '../generated/prisma/client';
import { startIngestStack, type IngestStack } from '../testkit/media/harness';
import { recordHistoryIfAsked, replayRecordedHistory } from '../testkit/temporal';
import { piiScenes, type PiiScene } from '../testkit/media/pii-scenes';
import { createVehicleSession } from '../testkit/media/vehicles';
import type { WorkerProcess } from '../runtime/worker-process';
import { startGpuWorkerProcess } from '../workers-gpu/process';

/**
 * The PII re-checks on the real stack (docs/pii-recheck.md), on street scenes of real photographs
 * whose faces and plates are known: the crop-and-upscale re-check of a frame (plan and apply) and of
 * the corpus (on the GPU slot), the backfill of frames never examined, the cleanup sweep — each a
 * revertible run that only ever adds redaction — and their reverts.
 *
 * The stack has buckets of its own: the cleanup sweep removes every blob no row of its database
 * names, and other suites' blobs live in the shared buckets.
 */
const SUFFIX = randomUUID().slice(0, 8);
const RECHECK_HISTORY = path.join(__dirname, 'histories/pii-recheck.json');
const SWEEP_HISTORY = path.join(__dirname, 'histories/cleanup-sweep.json');
let stack: IngestStack;
let gpu: { process: WorkerProcess; running: Promise<void> };
let scenes: PiiScene[];
let frames: Frame[];

const call = (method: string, path: string, token: string, body?: unknown) =>
  stack.api.call(method, path, { token, ...(body === undefined ? {} : { body }) });
const regionsOf = async (frameId: string) =>
  ((await stack.api.deps.db.piiAudit.findUnique({ where: { frameId } }))?.regions ?? null) as
    PiiRegion[] | null;
const redactedBytes = async (f: Frame) => {
  const row = await stack.api.deps.db.frame.findUniqueOrThrow({ where: { id: f.id } });
  return readObject(stack.api.deps.storage, {
    bucket: stack.api.deps.storage.bucket('redacted'),
    key: row.redactedUri!,
  });
};
const finished = async (workflowId: string) => stack.env.client.workflow.getHandle(workflowId).result();

/** A recorded region far from every face and plate: it must survive every run exactly. */
const KEPT: PiiRegion = { kind: 'plate', bbox: [5, 5, 60, 25], score: 0.7 };

beforeAll(async () => {
  stack = await startIngestStack({
    env: {
      APP_STORAGE__BUCKETS__FRAMES: `frames-recheck-${SUFFIX}`,
      APP_STORAGE__BUCKETS__REDACTED: `redacted-recheck-${SUFFIX}`,
      APP_REANALYZE__ORPHAN_MIN_AGE_HOURS: '0',
    },
  });
  const process = await startGpuWorkerProcess(stack.config, pino({ level: 'silent' }));
  gpu = { process, running: process.run() };
  scenes = await piiScenes(3);
  const { db, storage } = stack.api.deps;
  const made = await createVehicleSession(stack.api.deps, scenes);
  frames = made.frames;
  const classes = new Map(
    (await db.ontologyClass.findMany({ where: { name: { in: ['bus', 'motorcycle', 'person'] } } })).map(
      (c) => [c.name, c.id],
    ),
  );
  for (const [i, scene] of scenes.entries())
    await db.annoObject.createMany({
      data: scene.objects.map((o) => ({
        frameId: frames[i]!.id,
        classId: classes.get(o.className)!,
        bbox: [...o.box],
        source: 'human',
        state: 'accepted',
      })),
    });
  // Frames 0 and 1 were "examined" by a pass that found only KEPT: their redacted copy is the
  // original. Frame 2 was never examined.
  for (const f of frames.slice(0, 2)) {
    const key = `test/${f.id}.jpg`;
    const original = scenes[frames.indexOf(f)]!.jpeg;
    await storage.client.putObject(storage.bucket('redacted'), key, original, original.length);
    await db.frame.update({ where: { id: f.id }, data: { redactedUri: key } });
    await db.piiAudit.create({
      data: { frameId: f.id, nFaces: 0, nPlates: 1, regions: [{ ...KEPT, bbox: [...KEPT.bbox] }] },
    });
  }
}, 180_000);

afterAll(async () => {
  if (gpu?.process.worker.getState() === 'RUNNING') gpu.process.worker.shutdown();
  await gpu?.running.catch(() => undefined);
  await stack?.close();
});

describe('the PII re-check of one frame', () => {
  it('plans: searches every annotated person and vehicle enlarged, finds the faces the pass missed, and keeps what is recorded', async () => {
    const res = await call('POST', `/api/agent/frames/${frames[0]!.id}/reanalyze/plan`, stack.reviewer);
    expect([res.status, res.body.detail]).toEqual([200, undefined]);
    expect(res.body.searched).toHaveLength(scenes[0]!.objects.length);
    expect(res.body.recorded).toEqual([KEPT]);
    const faces = res.body.added.filter((r: PiiRegion) => r.kind === 'face');
    // Most known faces of the scene are among what it would add.
    const known = scenes[0]!.faces;
    const hit = known.filter((k) => faces.some((f: PiiRegion) => iou(f.bbox, k.box) > 0.2)).length;
    expect(hit / known.length).toBeGreaterThanOrEqual(0.8);
    // A plan writes nothing.
    expect(await regionsOf(frames[0]!.id)).toEqual([KEPT]);
  });

  it('applies as a revertible run that only adds: the recorded region stays exactly, the copy is pixelated, and the revert restores both', async () => {
    const before = await redactedBytes(frames[0]!);
    const res = await call('POST', `/api/agent/frames/${frames[0]!.id}/reanalyze`, stack.reviewer);
    expect([res.status, res.body.detail]).toEqual([200, undefined]);
    expect(res.body.status).toBe('completed');
    expect(res.body.added.length).toBeGreaterThan(0);
    const after = (await regionsOf(frames[0]!.id))!;
    expect(after[0]).toEqual(KEPT);
    expect(after.length).toBe(1 + res.body.added.length);
    expect((await redactedBytes(frames[0]!)).equals(before)).toBe(false);
    const { db } = stack.api.deps;
    expect(await db.piiAudit.findUniqueOrThrow({ where: { frameId: frames[0]!.id } })).toMatchObject({
      nFaces: after.filter((r) => r.kind === 'face').length,
    });
    const run = await call('GET', `/api/agent/runs/${res.body.run_id}`, stack.reviewer);
    expect(run.body).toMatchObject({ kind: 'pii-recheck', status: 'completed' });
    expect(run.body.changes.frames_changed).toBe(1);

    const revert = await call('POST', `/api/agent/runs/${res.body.run_id}/revert`, stack.admin);
    expect(revert.status).toBe(202);
    await finished(`agent-run-revert-${res.body.run_id}`);
    expect(await regionsOf(frames[0]!.id)).toEqual([KEPT]);
    expect((await redactedBytes(frames[0]!)).equals(before)).toBe(true);
  });

  it('refuses an unknown frame, an annotator and no token', async () => {
    expect((await call('POST', `/api/agent/frames/${randomUUID()}/reanalyze`, stack.reviewer)).status).toBe(
      404,
    );
    expect(
      (await call('POST', `/api/agent/frames/${randomUUID()}/reanalyze/plan`, stack.reviewer)).status,
    ).toBe(404);
    expect((await call('POST', `/api/agent/frames/not-a-uuid/reanalyze`, stack.reviewer)).status).toBe(422);
    expect((await call('POST', `/api/agent/frames/${frames[0]!.id}/reanalyze`, stack.annotator)).status).toBe(
      403,
    );
    expect(
      (await stack.api.call('POST', `/api/agent/frames/${frames[0]!.id}/reanalyze/plan`, {})).status,
    ).toBe(401);
  });
});

describe('POST /api/agent/reanalyze/all', () => {
  it('re-checks the session on the GPU slot, adding only, once: a second run finds nothing new; both revert', async () => {
    const body = { session_ids: [frames[0]!.sessionId] };
    const res = await call('POST', '/api/agent/reanalyze/all', stack.admin, body);
    expect([res.status, res.body.detail]).toEqual([202, undefined]);
    expect(res.headers.get('location')).toBe(`/api/agent/runs/${res.body.run_id}`);
    expect(res.body.workflow_id).toBe('pii-recheck-all');
    await finished('pii-recheck-all');
    await recordHistoryIfAsked(RECHECK_HISTORY, () =>
      stack.env.client.workflow.getHandle('pii-recheck-all').fetchHistory(),
    );
    const run = await call('GET', `/api/agent/runs/${res.body.run_id}`, stack.reviewer);
    expect(run.body.status).toBe('completed');
    // Frames 0 and 1 hold faces the pass missed; frame 2 (never examined) is searched too.
    expect(run.body.changes).toMatchObject({ frames_checked: 3, frames_failed: 0 });
    expect(run.body.changes.frames_changed).toBeGreaterThanOrEqual(2);
    for (const f of frames.slice(0, 2)) expect((await regionsOf(f.id))![0]).toEqual(KEPT);

    const again = await call('POST', '/api/agent/reanalyze/all', stack.admin, body);
    expect(again.status).toBe(202);
    await finished('pii-recheck-all');
    const second = await call('GET', `/api/agent/runs/${again.body.run_id}`, stack.reviewer);
    expect(second.body.changes).toMatchObject({ frames_checked: 3, frames_changed: 0 });

    for (const id of [again.body.run_id, res.body.run_id]) {
      expect((await call('POST', `/api/agent/runs/${id}/revert`, stack.admin)).status).toBe(202);
      await finished(`agent-run-revert-${id}`);
    }
    for (const f of frames.slice(0, 2)) expect(await regionsOf(f.id)).toEqual([KEPT]);
    expect(await regionsOf(frames[2]!.id)).toBeNull();
  });

  it('refuses an unknown session and a malformed body', async () => {
    const unknown = await call('POST', '/api/agent/reanalyze/all', stack.admin, {
      session_ids: [randomUUID()],
    });
    expect(unknown.status).toBe(422);
    expect((await call('POST', '/api/agent/reanalyze/all', stack.admin, { limit: 0 })).status).toBe(422);
    expect((await call('POST', '/api/agent/reanalyze/all', stack.reviewer, {})).status).toBe(403);
    expect(
      await stack.api.deps.db.agentRun.count({ where: { kind: 'pii-recheck', status: 'running' } }),
    ).toBe(0);
  });
});

describe('POST /api/autolabel/pii-backfill and the cleanup sweep', () => {
  it('backfills the frame never examined with the ingest pass, adding only, revertibly', async () => {
    const res = await call('POST', '/api/autolabel/pii-backfill', stack.admin, {
      session_ids: [frames[0]!.sessionId],
    });
    expect([res.status, res.body.detail]).toEqual([202, undefined]);
    await finished('pii-backfill');
    const run = await call('GET', `/api/agent/runs/${res.body.run_id}`, stack.reviewer);
    expect(run.body).toMatchObject({ kind: 'pii-backfill', status: 'completed' });
    // Only frame 2 lacked an audit.
    expect(run.body.changes).toMatchObject({ frames_checked: 1, frames_changed: 1 });
    const audit = await stack.api.deps.db.piiAudit.findUniqueOrThrow({ where: { frameId: frames[2]!.id } });
    expect(audit.examined).toBe(true);
    expect(audit.nFaces).toBeGreaterThan(0);
    expect((await redactedBytes(frames[2]!)).length).toBeGreaterThan(0);
    expect((await call('POST', `/api/agent/runs/${res.body.run_id}/revert`, stack.admin)).status).toBe(202);
    await finished(`agent-run-revert-${res.body.run_id}`);
    expect(await regionsOf(frames[2]!.id)).toBeNull();
  });

  it('sweeps: backfills up to pii_limit frames and removes the blobs no row names, keeping every named one', async () => {
    const { storage, db } = stack.api.deps;
    const orphan = `orphans/${randomUUID()}.jpg`;
    await storage.client.putObject(storage.bucket('frames'), orphan, Buffer.from('left behind'));
    const res = await call('POST', '/api/agent/cleanup-sweep', stack.admin, { pii_limit: 1 });
    expect([res.status, res.body.detail]).toEqual([202, undefined]);
    expect(res.body.params).toEqual({ do_pii: true, pii_limit: 1 });
    await finished('cleanup-sweep');
    await recordHistoryIfAsked(SWEEP_HISTORY, () =>
      stack.env.client.workflow.getHandle('cleanup-sweep').fetchHistory(),
    );
    const sweep = await db.governanceRun.findUniqueOrThrow({ where: { id: res.body.sweep_id } });
    expect(sweep.status).toBe('completed');
    const result = sweep.result as { orphans: Array<{ bucket: string; removed: number }> };
    expect(result.orphans.find((o) => o.bucket === storage.bucket('frames'))!.removed).toBe(1);
    await expect(storage.client.statObject(storage.bucket('frames'), orphan)).rejects.toThrow();
    for (const f of frames) {
      const key = f.uri.replace(/^s3:\/\/[^/]+\//, '');
      await expect(storage.client.statObject(storage.bucket('frames'), key)).resolves.toBeDefined();
    }
    const pii = await call('GET', `/api/agent/runs/${res.body.pii_run_id}`, stack.reviewer);
    expect(pii.body).toMatchObject({ kind: 'pii-backfill', status: 'completed' });
    expect(pii.body.changes.frames_checked).toBe(1);
    expect((await call('POST', '/api/agent/cleanup-sweep', stack.admin, { pii_limit: 0 })).status).toBe(422);
    expect((await call('POST', '/api/agent/cleanup-sweep', stack.reviewer, {})).status).toBe(403);
  });
});

describe('erasure after a re-check', () => {
  it('erases the redacted copy a run kept for its revert too, and proves the session gone', async () => {
    const { db, storage } = stack.api.deps;
    const res = await call('POST', `/api/agent/frames/${frames[1]!.id}/reanalyze`, stack.reviewer);
    expect(res.status).toBe(200);
    const undo = await db.agentRunFrame.findUniqueOrThrow({
      where: { runId_frameId: { runId: res.body.run_id, frameId: frames[1]!.id } },
    });
    const keptKey = (undo.replaced as { kept_key: string }).kept_key;
    await expect(storage.client.statObject(storage.bucket('redacted'), keptKey)).resolves.toBeDefined();
    const erase = await call('POST', '/api/govern/erase', stack.admin, { session_id: frames[1]!.sessionId });
    expect([erase.status, erase.body.detail]).toEqual([202, undefined]);
    await finished(erase.body.workflow_id);
    const erasure = await db.erasure.findFirstOrThrow({ where: { sessionId: frames[1]!.sessionId } });
    expect(erasure.status).toBe('completed');
    await expect(storage.client.statObject(storage.bucket('redacted'), keptKey)).rejects.toThrow();
  });
});

describe('recorded histories', () => {
  it('replay the PII re-check and the cleanup sweep against the current workflow code', async () => {
    await replayRecordedHistory(RECHECK_HISTORY, require.resolve('../workflows'), 'pii-recheck-all');
    await replayRecordedHistory(SWEEP_HISTORY, require.resolve('../workflows'), 'cleanup-sweep');
  });
});
