import { randomUUID } from 'node:crypto';
import { createRolloutSteps, queueRollout } from '../activities/edge/rollouts';
import { ANCESTOR_LIMIT } from '../activities/flywheel/lineage';
import { currentChampion, sha256Hex } from '../activities/models/artifacts';
import { createTrainingJob, registerTrainedModel } from '../activities/training/jobs';
import { trainedModelVersion } from '../core/training-jobs/config';
import type { FrameRow } from '../core/export/parquet-tables';
import type { DatasetCommit, EdgeArtifact, Model, Promotion, TrainingJob } from '../generated/prisma/client';
import { useApiForFile } from '../testkit/api';
import { createCommitFixture } from '../testkit/commits';
import { createSessionFixture } from '../testkit/session-fixtures';

/**
 * GET /api/flywheel/lineage/{deployment_id} on the real PostgreSQL and MinIO
 * (docs/flywheel-lineage.md). The chain is built through the real code where that costs seconds:
 * the shipped detector registered as the champion on first ask, a dataset commit with real Parquet
 * tables, training job rows and the registration of what each trained (registerTrainedModel), the
 * devices through the fleet routes, rollouts recorded and their first stage assigned by the rollout
 * activities, running artifacts through telemetry. Not run for real, since each would need minutes
 * of GPU work: the training itself (the model files are stand-in bytes), the edge compile (artifact
 * rows as test/edge-rollout.int.test.ts makes them), the promotion gate's decisions and a campaign's
 * iterations (rows written directly).
 */

const ctx = useApiForFile();
const read = (id: string, token = ctx.token.annotator) =>
  ctx.api.call('GET', `/api/flywheel/lineage/${id}`, { token });

const run = randomUUID().slice(0, 8);
const GENERATIONS = ANCESTOR_LIMIT + 2;
const FRAMES = [3, 2];

let commit: DatasetCommit;
let sessionIds: string[];
let builtin: Model;
/** generations[i] was fine-tuned from generations[i - 1]; generations[0] from the shipped detector. */
const generations: Array<{ job: TrainingJob; model: Model }> = [];
const deployed = () => generations.at(-1)!;
const rollouts = {} as Record<'deep' | 'shallow' | 'shipped' | 'unknown' | 'orphan', string>;
const artifacts = {} as Record<keyof typeof rollouts, EdgeArtifact>;
const devices: Record<string, string> = {};
const promotions = {} as Record<'challenger' | 'champion' | 'other', Promotion>;
let campaignId: string;
let flywheelRunId: string;

function frame(sessionId: string, index: number): FrameRow {
  return {
    frame_id: randomUUID(),
    session_id: sessionId,
    frame_index: index,
    timestamp_ms: index * 333,
    split: 'train',
    width: 640,
    height: 360,
    image: null,
    lighting: 'day',
    context: '{}',
    pii_audited: true,
    pii_faces: 0,
    pii_plates: 0,
    objects: 1,
  };
}

async function train(parent: Model, i: number) {
  const deps = ctx.api.deps;
  const job = await createTrainingJob(
    deps,
    {
      name: `gen ${i} ${run}`,
      dataset_commit_id: commit.commitId,
      task: 'detection',
      trainer: 'head-finetune',
      compute_target: 'local',
      config: { epochs: 1, learning_rate: 0.01, batch_size: 8, heads: ['cls'], anchor_l2: 0, seed: i },
    },
    parent,
    null,
  );
  const bytes = Buffer.from(`weights of generation ${i} ${run}`);
  const done = await registerTrainedModel(deps, {
    jobId: job.id,
    artifact: { key: `test/${job.id}/model.onnx`, sha256: sha256Hex(bytes), sizeBytes: bytes.length },
    metrics: { map50: 0.5 + i / 100 },
  });
  const model = await deps.db.model.findUniqueOrThrow({
    where: { modelVersion: trainedModelVersion(job.id) },
  });
  return { job: done, model };
}

/** An artifact of `modelVersion` for `target`, its file in the models bucket (a rollout checks it is there). */
async function storeArtifact(modelVersion: string, target: string): Promise<EdgeArtifact> {
  const { db, storage } = ctx.api.deps;
  const bytes = Buffer.from(`edge build of ${modelVersion} for ${target}`);
  const key = `edge/test-${randomUUID()}/model.onnx`;
  await storage.client.putObject(storage.bucket('models'), key, bytes, bytes.length);
  return db.edgeArtifact.create({
    data: {
      modelVersion,
      target,
      precision: 'int8',
      key,
      sha256: sha256Hex(bytes),
      sizeBytes: bytes.length,
      accuracy: { gold_id: randomUUID(), map50_source: 0.61, map50: 0.6, loss: 0.01 },
    },
  });
}

async function registerDevice(name: string, target: string): Promise<string> {
  const res = await ctx.api.call('POST', '/api/edge/devices', {
    token: ctx.token.annotator,
    body: { name, target },
  });
  expect(res.status).toBe(201);
  devices[name] = res.body.id;
  return res.body.id;
}

/** A rollout of the artifact to every device of its target, its first (and only) stage assigned. */
async function rollOut(artifact: EdgeArtifact): Promise<string> {
  const { db, storage } = ctx.api.deps;
  const rollout = await queueRollout(
    { db, storage },
    {
      artifact_id: artifact.id,
      stages: [100],
      max_p90_ms: 200,
      max_error_rate: 0.05,
      min_frames: 10,
      min_devices_reporting: null,
      advance: 'operator',
      stage_seconds: 60,
      selector: {},
    },
    (await db.user.findFirstOrThrow()).id,
  );
  await createRolloutSteps(db).startRolloutStage({ rolloutId: rollout.id, stage: 0 });
  return rollout.id;
}

async function report(deviceId: string, artifactId: string, sha256: string) {
  const res = await ctx.api.call('POST', '/api/edge/telemetry', {
    token: ctx.token.annotator,
    body: {
      device_id: deviceId,
      artifact_id: artifactId,
      model_sha256: sha256,
      status: 'ok',
      frames: 20,
      latency_ms: { p50: 10, p90: 14, p99: 20, mean: 11 },
    },
  });
  expect(res.status).toBe(201);
}

beforeAll(async () => {
  const deps = ctx.api.deps;
  const { db } = deps;
  builtin = await currentChampion(deps);
  sessionIds = [];
  const frames: FrameRow[] = [];
  for (const n of FRAMES) {
    const { session } = await createSessionFixture(deps, { frames: n, storeImages: false });
    sessionIds.push(session.id);
    frames.push(...Array.from({ length: n }, (_, i) => frame(session.id, i)));
  }
  commit = await createCommitFixture(deps, {
    name: `lineage-${run}`,
    frames,
    objects: frames.map((f) => ({
      object_id: randomUUID(),
      class_name: 'car',
      frame_id: f.frame_id,
      session_id: f.session_id,
    })),
    sessionIds,
  });
  let parent = builtin;
  for (let i = 1; i <= GENERATIONS; i++) {
    const g = await train(parent, i);
    generations.push(g);
    parent = g.model;
  }

  artifacts.deep = await storeArtifact(deployed().model.modelVersion, `deep-${run}`);
  artifacts.shallow = await storeArtifact(generations[0]!.model.modelVersion, `shallow-${run}`);
  artifacts.shipped = await storeArtifact(builtin.modelVersion, `shipped-${run}`);
  artifacts.unknown = await storeArtifact(`imported-detector@${run}`, `unknown-${run}`);
  // No route registers a model whose parent is not registered; rows from before the registry checked can.
  const orphan = await db.model.create({
    data: {
      modelVersion: `legacy@${run}`,
      name: 'legacy detector',
      origin: 'external',
      parentVersion: `lost@${run}`,
    },
  });
  artifacts.orphan = await storeArtifact(orphan.modelVersion, `orphan-${run}`);
  for (const n of [0, 1, 2]) await registerDevice(`cam-${n}-${run}`, `deep-${run}`);
  for (const k of ['shallow', 'shipped', 'unknown', 'orphan'] as const)
    await registerDevice(`${k}-${run}`, `${k}-${run}`);
  // A device of another target, running nothing of these: never in an answer.
  await registerDevice(`elsewhere-${run}`, `elsewhere-${run}`);
  for (const k of Object.keys(artifacts) as Array<keyof typeof artifacts>)
    rollouts[k] = await rollOut(artifacts[k]);
  // cam-0 runs the artifact, cam-1 reports a file of other bytes, cam-2 has not reported yet.
  await report(devices[`cam-0-${run}`]!, artifacts.deep.id, artifacts.deep.sha256);
  await report(devices[`cam-1-${run}`]!, artifacts.deep.id, sha256Hex(Buffer.from('tampered')));

  const previous = generations.at(-2)!.model.modelVersion;
  const decision = (challenger: string, champion: string, outcome: string, rule: string | null) =>
    db.promotion.create({
      data: {
        challengerVersion: challenger,
        championVersion: champion,
        outcome,
        rule,
        reasons: rule ? [`${rule}: the challenger did not beat the champion`] : [],
      },
    });
  promotions.challenger = await decision(deployed().model.modelVersion, previous, 'promoted', null);
  promotions.champion = await decision(
    generations[3]!.model.modelVersion,
    deployed().model.modelVersion,
    'refused',
    'not_better',
  );
  promotions.other = await decision(
    generations[2]!.model.modelVersion,
    builtin.modelVersion,
    'refused',
    'not_better',
  );

  const iteration = (n: number, g: { job: TrainingJob; model: Model }) => ({
    iteration: n,
    batch_id: randomUUID(),
    frames: 40,
    export_job_id: commit.jobId,
    commit_id: commit.commitId,
    training_job_id: g.job.id,
    model_version: g.model.modelVersion,
    run_id: randomUUID(),
    measured: { recall: 0.5 + n / 10 },
    parent_version: g.model.parentVersion,
    parent_run_id: randomUUID(),
    parent_measured: { recall: 0.5 },
    value: 0.5 + n / 10,
    best_value: 0.5 + n / 10,
    stop: null,
    finished_at: new Date().toISOString(),
  });
  const campaign = (name: string, iterations: object[]) =>
    db.campaign.create({
      data: { name, className: 'car', classId: 1, goldId: randomUUID(), iterations },
    });
  campaignId = (await campaign(`cars ${run}`, [iteration(1, generations.at(-2)!), iteration(2, deployed())]))
    .id;
  await campaign(`bikes ${run}`, [iteration(1, generations[0]!)]);
  // A flywheel run whose train stage made the deployed model, and one that made an older generation.
  const flywheel = (g: ReturnType<typeof deployed>) =>
    db.flywheelRun.create({
      data: {
        kind: 'training_cycle',
        status: 'completed',
        stage: 'gate',
        workflowId: `training-cycle-${randomUUID()}`,
        outputs: {
          commit_id: commit.commitId,
          training_job_id: g.job.id,
          model_version: g.model.modelVersion,
        },
      },
    });
  flywheelRunId = (await flywheel(deployed())).id;
  await flywheel(generations[0]!);
}, 120_000);

describe('GET /api/flywheel/lineage/{deployment_id}', () => {
  it('follows a rollout to its artifact, model, training job, dataset commit and sessions', async () => {
    const res = await read(rollouts.deep);
    expect(res.status).toBe(200);
    const { job, model } = deployed();
    const a = artifacts.deep;
    expect(res.body).toMatchObject({
      deployment_id: rollouts.deep,
      rollout: {
        id: rollouts.deep,
        artifact_id: a.id,
        status: 'running',
        gate_href: `/api/edge/artifacts/${a.id}/gate?rollout_id=${rollouts.deep}`,
      },
      artifact: {
        id: a.id,
        model_version: model.modelVersion,
        target: a.target,
        precision: 'int8',
        sha256: a.sha256,
        accuracy: { map50: 0.6, loss: 0.01 },
        field_href: `/api/edge/artifacts/${a.id}/field`,
      },
      model: {
        model_version: model.modelVersion,
        lineage: `/api/govern/lineage/model:${model.modelVersion}`,
        model: { state: 'candidate', origin: 'trained', training_job_id: job.id },
        parent_version: generations.at(-2)!.model.modelVersion,
        trained_on: commit.commitId,
      },
      trained_by: {
        job_id: job.id,
        status: 'completed',
        dataset_commit_id: commit.commitId,
        model_version: model.modelVersion,
        href: `/api/training/${job.id}`,
      },
      trained_on: {
        commit_id: commit.commitId,
        lineage: `/api/govern/lineage/commit:${commit.commitId}`,
        name: `lineage-${run}`,
        version: 1,
        href: `/api/datasets/${commit.commitId}`,
        came_from: { frames: FRAMES[0]! + FRAMES[1]! },
      },
      missing: {},
    });
    // The job the model's lineage names is the chain's next link, not repeated inside the model.
    expect(res.body.model).not.toHaveProperty('training_job');
    const sessions = res.body.trained_on.came_from.sessions as Array<{ session_id: string; frames: number }>;
    expect(sessions.map((s) => [s.session_id, s.frames]).sort()).toEqual(
      sessionIds.map((id, i) => [id, FRAMES[i]]).sort(),
    );
    // Every generation was trained on the same commit: the commit's lineage names their jobs.
    expect(res.body.trained_on.used_by.training_jobs).toHaveLength(GENERATIONS);
  });

  it('walks the ancestors parent first and says when it stopped at the limit', async () => {
    const { body } = await read(rollouts.deep);
    const expected = generations
      .slice(0, -1)
      .reverse()
      .slice(0, ANCESTOR_LIMIT)
      .map((g) => g.model.modelVersion);
    expect(body.ancestors.map((m: { model_version: string }) => m.model_version)).toEqual(expected);
    expect(body.ancestors[0]).toMatchObject({
      registered: true,
      origin: 'trained',
      training_job_id: generations.at(-2)!.job.id,
      lineage: `/api/govern/lineage/model:${expected[0]}`,
    });
    expect([body.ancestors_truncated, body.ancestors_end]).toEqual([true, 'limit']);

    const shallow = (await read(rollouts.shallow)).body;
    expect(shallow.ancestors.map((m: { model_version: string }) => m.model_version)).toEqual([
      builtin.modelVersion,
    ]);
    expect(shallow.ancestors[0]).toMatchObject({ origin: 'builtin', parent_version: null });
    expect([shallow.ancestors_truncated, shallow.ancestors_end]).toEqual([false, 'root']);

    const orphan = (await read(rollouts.orphan)).body;
    expect(orphan.ancestors).toEqual([
      { model_version: `lost@${run}`, registered: false, lineage: `/api/govern/lineage/model:lost@${run}` },
    ]);
    expect([orphan.ancestors_truncated, orphan.ancestors_end]).toEqual([false, 'unregistered']);
    expect(orphan.missing.trained_by).toMatch(/origin external: it was not trained here/);
  });

  it("lists the gate's decisions about the model and the campaign iterations that produced it", async () => {
    const { body } = await read(rollouts.deep);
    expect(body.promotions.map((p: { id: string; role: string }) => [p.id, p.role])).toEqual([
      [promotions.champion.id, 'champion'],
      [promotions.challenger.id, 'challenger'],
    ]);
    expect(body.promotions[0]).toMatchObject({ outcome: 'refused', rule: 'not_better' });
    expect(body.promotions_truncated).toBe(false);
    expect(body.campaigns).toHaveLength(1);
    expect(body.campaigns[0]).toMatchObject({
      campaign_id: campaignId,
      href: `/api/campaigns/${campaignId}`,
      iterations: [
        {
          iteration: 2,
          model_version: deployed().model.modelVersion,
          training_job_id: deployed().job.id,
          commit_id: commit.commitId,
        },
      ],
    });
    expect(body.campaigns[0].iterations).toHaveLength(1);
    expect(body.flywheel_runs.map((r: { run_id: string }) => r.run_id)).toEqual([flywheelRunId]);
    expect(body.flywheel_runs[0].outputs).toMatchObject({ model_version: deployed().model.modelVersion });
  });

  it('shows the devices assigned and running the artifact, and whether what runs is its file', async () => {
    const { body } = await read(rollouts.deep);
    const seen = body.devices.map(
      (d: { name: string; assigned: boolean; running: boolean; sha256_matches: boolean | null }) => [
        d.name,
        d.assigned,
        d.running,
        d.sha256_matches,
      ],
    );
    expect(seen).toEqual([
      [`cam-0-${run}`, true, true, true],
      [`cam-1-${run}`, true, true, false],
      [`cam-2-${run}`, true, false, null],
    ]);
    expect(body.device_counts).toEqual({ assigned: 3, running: 2 });
    expect(body.devices_truncated).toBe(false);
  });

  it('answers for the shipped detector, which no training job produced', async () => {
    const res = await read(rollouts.shipped);
    expect(res.status).toBe(200);
    expect(res.body.model).toMatchObject({
      model_version: builtin.modelVersion,
      model: { origin: 'builtin', state: 'champion', training_job_id: null },
      trained_on: null,
    });
    expect(res.body.trained_by).toBeNull();
    expect(res.body.trained_on).toBeNull();
    expect(res.body.missing.trained_by).toMatch(/origin builtin: it was not trained here/);
    expect(res.body.missing.trained_on).toBe(res.body.missing.trained_by);
    expect(res.body.missing).not.toHaveProperty('model');
    expect([res.body.ancestors, res.body.ancestors_end]).toEqual([[], 'root']);
    // The decision it was the champion of, but not those of other models.
    expect(res.body.promotions.map((p: { id: string }) => p.id)).toEqual([promotions.other.id]);
    expect(res.body.devices.map((d: { name: string }) => d.name)).toEqual([`shipped-${run}`]);
  });

  it('answers for an artifact of a model version nothing else names, saying so', async () => {
    const res = await read(rollouts.unknown);
    expect(res.status).toBe(200);
    expect(res.body.artifact.model_version).toBe(`imported-detector@${run}`);
    expect([res.body.model, res.body.trained_by, res.body.trained_on]).toEqual([null, null, null]);
    expect(res.body.missing.model).toMatch(/^no model imported-detector@/);
    expect(res.body.missing.trained_by).toBe(res.body.missing.model);
    expect([res.body.ancestors, res.body.promotions, res.body.campaigns]).toEqual([[], [], []]);
  });

  it('404s an unknown deployment, refuses a malformed id and needs a token', async () => {
    const unknown = await read(randomUUID());
    expect(unknown.status).toBe(404);
    expect(unknown.body.detail).toMatch(/^no deployment /);
    const malformed = await read('rollout-1');
    expect(malformed.status).toBe(422);
    expect(malformed.body.errors).toEqual([{ field: 'path.deployment_id', message: 'must be a UUID' }]);
    expect((await ctx.api.call('GET', `/api/flywheel/lineage/${rollouts.deep}`)).status).toBe(401);
  });
});
