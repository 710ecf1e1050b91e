import { Context } from '@temporalio/activity';
import {
  findTarget,
  latencyDrift,
  latencyStats,
  latencyWindows,
  paretoFront,
  throughputFps,
  type Precision,
  type TimedSample,
} from '../../core/edgeforge';
import { RefusedError } from '../../core/errors';
import type { Prisma } from '../../generated/prisma/client';
import type { ActivityDeps } from '../deps';
import { findArtifact } from '../edge/records';
import { findModel, readModelArtifact } from '../models/artifacts';
import { loadGoldFrames, scoreOnGold, type GoldFrames } from './accuracy';
import {
  artifactOut,
  buildVariant,
  frameImage,
  readArtifact,
  requireForgeable,
  storeArtifact,
} from './artifacts';
import {
  appendResult,
  findForgeRun,
  forgeRunOut,
  paramsOf,
  patchResult,
  resultOf,
  type ForgeKind,
  type TimingParams,
} from './runs';
import { environmentOf, openRunner, rssMb, timeRuns } from './runtime';
import { readCpuTemperature } from './thermal';
import { refusedAs } from '../refusal';

export * from './runs';
export { artifactOut } from './artifacts';

/** What a forge workflow does, decided from its run row when it starts. */
export interface ForgePlan {
  kind: ForgeKind;
  /** export: the precisions to build; then, when `measure`, each artifact is timed. */
  precisions: Precision[];
  measure: boolean;
  /** measure: the artifact to time. */
  artifactId: string | null;
  /** cooptimize: the grid, one activity per point. */
  points: Array<{ prune: number; precision: Precision }>;
}

export interface CooptPoint {
  prune: number;
  precision: Precision;
  latency_ms: number;
  latency: ReturnType<typeof latencyStats>;
  map50: number;
  size_bytes: number;
  zeroed: number;
}

/** Domain refusals cannot be cured by a retry: they fail the workflow with their message. */
const refusing = <T>(work: () => Promise<T>): Promise<T> => work().catch(refusedAs('EdgeForgeRefused'));

const beat = (): void => Context.current().heartbeat();

/**
 * Edge-forge activities of the `cpu` queue (docs/edgeforge.md): the steps of workflow
 * `edgeforge-<kind>-…`. Models run on this host's CPU through onnxruntime, which is what the
 * forge compiles for and measures.
 */
export function createEdgeForgeActivities(deps: ActivityDeps) {
  const { db, storage, config } = deps;
  const store = { db, storage };
  const nmsIou = config.autolabel.nmsIou;

  const targetOf = (id: string) => {
    const target = findTarget(id);
    if (!target) throw new RefusedError(`unknown edge target ${id}`);
    return target;
  };

  const sourceModel = async (modelVersion: string) => {
    const model = await findModel(db, modelVersion);
    requireForgeable(model);
    return { model, bytes: await readModelArtifact({ db, storage, config }, model) };
  };

  const score = async (bytes: Uint8Array, what: string, gold: GoldFrames, provider: string) => {
    const runner = await openRunner(bytes, { provider, what });
    try {
      return await scoreOnGold(runner, gold, { nmsIou, beat });
    } finally {
      await runner.release();
    }
  };

  /** Times a model on the run's real frame; memory is what the process grew by while loading and running it. */
  const timed = async (bytes: Uint8Array, what: string, timing: TimingParams, provider: string) => {
    const image = await frameImage(store, timing.frame_id);
    const rssBefore = rssMb();
    const runner = await openRunner(bytes, { provider, threads: timing.threads, what });
    try {
      const input = await runner.prepare(image);
      const samples = await timeRuns(runner, input.data, { warmup: timing.warmup, runs: timing.runs, beat });
      const rssAfter = rssMb();
      const grown = rssAfter - rssBefore;
      return {
        stats: latencyStats(samples),
        // A garbage collection meanwhile can shrink the process: then nothing was measured.
        memoryMb: grown > 0 ? grown : null,
        rss: { before_mb: rssBefore, after_mb: rssAfter },
      };
    } finally {
      await runner.release();
    }
  };

  return {
    /** Marks the run running and says what its workflow is to do. */
    async startForgeRun(input: { runId: string }): Promise<ForgePlan> {
      return refusing(async () => {
        const run = await findForgeRun(db, input.runId);
        await patchResult(db, run.id, { status: 'running', started_at: new Date().toISOString() });
        const kind = run.kind as ForgeKind;
        const plan: ForgePlan = {
          kind,
          precisions: [],
          measure: false,
          artifactId: run.artifactId,
          points: [],
        };
        if (kind === 'export') {
          const p = paramsOf(run, 'export');
          return { ...plan, precisions: p.precisions, measure: p.measure_skipped === null };
        }
        if (kind === 'cooptimize') {
          const p = paramsOf(run, 'cooptimize');
          const points = p.prune_grid.flatMap((prune) =>
            p.precisions.map((precision) => ({ prune, precision })),
          );
          return { ...plan, points };
        }
        return plan;
      });
    },

    /** export: the source model's mAP@0.5 on the gold set, the figure every variant is checked against. */
    async forgeSourceAccuracy(input: { runId: string }): Promise<number> {
      return refusing(async () => {
        const p = paramsOf(await findForgeRun(db, input.runId), 'export');
        const { model, bytes } = await sourceModel(p.model_version);
        const gold = await loadGoldFrames(store, p.gold_id);
        const s = await score(
          bytes,
          `model ${model.modelVersion}`,
          gold,
          targetOf(p.target).execution_provider,
        );
        await patchResult(db, input.runId, {
          source: { model_version: model.modelVersion, sha256: model.sha256, size_bytes: bytes.length, ...s },
        });
        return s.map50;
      });
    },

    /** export: one precision of the model compiled for the target, checked on the gold set and stored. */
    async forgeBuildVariant(input: { runId: string; precision: Precision }): Promise<string> {
      return refusing(async () => {
        const run = await findForgeRun(db, input.runId);
        const p = paramsOf(run, 'export');
        const built = (resultOf(run).artifacts ?? []) as Array<{ id: string; precision: string }>;
        // A retried attempt finds the build its first attempt stored.
        const done = built.find((a) => a.precision === input.precision);
        if (done) return done.id;
        const source = resultOf(run).source as { map50: number };
        const target = targetOf(p.target);
        const { model, bytes } = await sourceModel(p.model_version);
        const variant = await buildVariant(bytes, target, input.precision);
        const gold = await loadGoldFrames(store, p.gold_id);
        const what = `the ${input.precision} build of ${model.modelVersion}`;
        const s = await score(variant.bytes, what, gold, target.execution_provider);
        const artifact = await storeArtifact(store, {
          modelVersion: model.modelVersion,
          target: target.id,
          precision: input.precision,
          variant,
          accuracy: {
            gold_id: gold.goldId,
            metric: 'mAP@0.5',
            map50_source: source.map50,
            map50: s.map50,
            loss: source.map50 - s.map50,
            per_class: s.per_class,
            quantize: variant.quantize as Prisma.InputJsonObject | null,
            run_id: run.id,
          },
          createdBy: run.createdBy,
        });
        await appendResult(db, run.id, 'artifacts', artifactOut(artifact, storage.bucket('models')));
        return artifact.id;
      });
    },

    /** Times an artifact on this host and stores the figures as a `measured` benchmark. */
    async forgeMeasure(input: { runId: string; artifactId: string }): Promise<string> {
      return refusing(async () => {
        const run = await findForgeRun(db, input.runId);
        const timing = run.params as unknown as TimingParams;
        // A retried attempt finds the benchmark its first attempt stored.
        const done = await db.edgeBenchmark.findFirst({
          where: { artifactId: input.artifactId, environment: { path: ['run_id'], equals: run.id } },
        });
        if (done) return done.id;
        const artifact = await findArtifact(db, input.artifactId);
        const target = targetOf(artifact.target);
        const bytes = await readArtifact(storage, artifact);
        const m = await timed(bytes, `edge artifact ${artifact.id}`, timing, target.execution_provider);
        const { runs, ...figures } = m.stats;
        const bench = await db.edgeBenchmark.create({
          data: {
            artifactId: artifact.id,
            modelVersion: artifact.modelVersion,
            target: artifact.target,
            source: 'measured',
            latencyMs: figures,
            throughputFps: throughputFps(figures.mean),
            memoryMb: m.memoryMb,
            environment: environmentOf({
              run_id: run.id,
              execution_provider: target.execution_provider,
              threads: timing.threads,
              warmup: timing.warmup,
              runs,
              frame_id: timing.frame_id,
              process_rss_mb: m.rss,
            }),
            artifactUri: `s3://${storage.bucket('models')}/${artifact.key}`,
            createdBy: run.createdBy,
          },
        });
        await appendResult(db, run.id, 'benchmarks', bench.id);
        return bench.id;
      });
    },

    /** cooptimize: one grid point built, its mAP@0.5 on the gold set and its latency measured. */
    async forgeCooptPoint(input: {
      runId: string;
      prune: number;
      precision: Precision;
    }): Promise<CooptPoint> {
      return refusing(async () => {
        const run = await findForgeRun(db, input.runId);
        const p = paramsOf(run, 'cooptimize');
        const done = ((resultOf(run).points ?? []) as CooptPoint[]).find(
          (pt) => pt.prune === input.prune && pt.precision === input.precision,
        );
        if (done) return done;
        const target = targetOf(p.target);
        const { model, bytes } = await sourceModel(p.model_version);
        const variant = await buildVariant(bytes, target, input.precision, input.prune);
        const what = `${model.modelVersion} pruned ${input.prune} at ${input.precision}`;
        const gold = await loadGoldFrames(store, p.gold_id);
        const s = await score(variant.bytes, what, gold, target.execution_provider);
        const m = await timed(variant.bytes, what, p, target.execution_provider);
        const point: CooptPoint = {
          prune: input.prune,
          precision: input.precision,
          latency_ms: m.stats.p50,
          latency: m.stats,
          map50: s.map50,
          size_bytes: variant.bytes.length,
          zeroed: variant.prune?.zeroed ?? 0,
        };
        await appendResult(db, run.id, 'points', point);
        return point;
      });
    },

    /** thermal: the artifact run back to back for the duration, latency per window and the CPU temperature. */
    async forgeThermal(input: { runId: string }): Promise<void> {
      return refusing(async () => {
        const run = await findForgeRun(db, input.runId);
        const p = paramsOf(run, 'thermal');
        const artifact = await findArtifact(db, p.artifact_id);
        const target = targetOf(artifact.target);
        const bytes = await readArtifact(storage, artifact);
        const image = await frameImage(store, p.frame_id);
        const runner = await openRunner(bytes, {
          provider: target.execution_provider,
          threads: p.threads,
          what: `edge artifact ${artifact.id}`,
        });
        try {
          const { data } = await runner.prepare(image);
          await runner.run(data);
          const before = await readCpuTemperature();
          const samples: TimedSample[] = [];
          const durationMs = p.duration_s * 1000;
          const start = performance.now();
          for (let at = 0; at < durationMs; at = performance.now() - start) {
            samples.push({ at, ms: (await runner.run(data)).ms });
            beat();
          }
          const after = await readCpuTemperature();
          const windows = latencyWindows(samples, durationMs, p.windows);
          await patchResult(db, run.id, {
            overall: latencyStats(samples.map((s) => s.ms)),
            windows,
            drift: latencyDrift(windows),
            temperature: {
              start_c: before.celsius,
              end_c: after.celsius,
              change_c:
                before.celsius !== null && after.celsius !== null ? after.celsius - before.celsius : null,
              zone: after.zone,
              reason: after.reason,
            },
            environment: environmentOf({ execution_provider: target.execution_provider, threads: p.threads }),
          });
        } finally {
          await runner.release();
        }
      });
    },

    /** Completes the run; a cooptimize run gets its Pareto front and its comparison with the stated base. */
    async finishForgeRun(input: { runId: string }) {
      return refusing(async () => {
        const run = await findForgeRun(db, input.runId);
        const patch: Record<string, unknown> = { status: 'completed', finished_at: new Date().toISOString() };
        if (run.kind === 'cooptimize') {
          const p = paramsOf(run, 'cooptimize');
          const points = (resultOf(run).points ?? []) as CooptPoint[];
          const base = points.find((pt) => pt.prune === 0 && pt.precision === 'fp32') ?? null;
          const compared = points.map((pt) => ({
            ...pt,
            vs_stated_base: { latency_ms: pt.latency_ms - p.base_latency_ms, map50: pt.map50 - p.base_map50 },
          }));
          patch.points = compared;
          patch.front = paretoFront(compared);
          patch.base = {
            stated: { latency_ms: p.base_latency_ms, map50: p.base_map50 },
            measured: base ? { latency_ms: base.latency_ms, map50: base.map50 } : null,
          };
        }
        return forgeRunOut(await patchResult(db, run.id, patch));
      });
    },

    async failForgeRun(input: { runId: string; error: string }): Promise<void> {
      await patchResult(db, input.runId, {
        status: 'failed',
        error: input.error,
        finished_at: new Date().toISOString(),
      });
    },
  };
}
