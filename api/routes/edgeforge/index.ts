import type { Response } from 'express';
import { z } from 'zod';
import type { Actor } from '../../../activities/annotations/objects';
import { recordAudit } from '../../../activities/audit';
import { discardForgeRun, forgeRunOut, forgeWorkflowId, type ForgeKind } from '../../../activities/edgeforge';
import {
  auditBenchmarks,
  capabilities,
  deployments,
  gateArtifact,
  listBenchmarks,
  matchingArtifact,
  storeReported,
} from '../../../activities/edgeforge/reads';
import {
  queueCooptimize,
  queueExport,
  queueMeasure,
  queueThermal,
} from '../../../activities/edgeforge/requests';
import { currentChampion } from '../../../activities/models/artifacts';
import { InputError } from '../../../core/errors';
import type { EdgeForgeRun } from '../../../generated/prisma/client';
import { edgeForgeWorkflow } from '../../../workflows/edgeforge';
import type { AppDeps } from '../../deps';
import { actorOf } from '../../http/actor';
import { RouteGroup } from '../../http/route-group';
import { startWorkflow } from '../../http/start-workflow';
import {
  AuditQuery,
  BenchIn,
  BenchQuery,
  BenchmarksQuery,
  CooptIn,
  DeploymentsQuery,
  EdgeExportIn,
  GateIn,
  ThermalIn,
} from './validators';

const DEFAULT_PRUNE_GRID = [0, 0.25, 0.5];

/** Refusals every forge job can meet before its workflow starts. */
const FORGE_STATUSES = {
  404: 'no such model version, artifact, gold set or frame',
  409: 'the gold set is not sealed; an export of this model for this target is already running',
  422: 'unknown target; a target this installation cannot compile for or this host cannot measure (named, with what is missing); a precision the target does not take; no sealed gold set; a model the YOLOX decoder cannot read',
  503: 'the workflow service or the model file does not answer',
};

/**
 * The `edge forge` group (docs/edgeforge.md): compile a registered model for an edge target,
 * measure and audit latency, the targets this installation serves, the accuracy/latency trade-off,
 * sustained runs, the per-target gate and what runs where. Reads need `annotator`; compiling,
 * measuring and judging need `reviewer`.
 */
export function createEdgeForgeRoutes(deps: AppDeps): RouteGroup {
  const { db, storage } = deps;

  /** Starts a queued run's workflow (202, Location: the run beside its benchmarks); a refused start leaves no run. */
  const start = async (res: Response, kind: ForgeKind, run: EdgeForgeRun, actor: Actor) => {
    let started: Awaited<ReturnType<typeof startWorkflow>>;
    try {
      started = await startWorkflow(deps, res, {
        workflow: edgeForgeWorkflow,
        workflowId: forgeWorkflowId(kind, run),
        args: [{ runId: run.id }],
        location: `/api/edgeforge/benchmarks?run_id=${run.id}`,
        what:
          kind === 'export'
            ? `the export of ${run.modelVersion} for ${run.target}`
            : `edge-forge ${kind} ${run.id}`,
      });
    } catch (err) {
      await discardForgeRun(db, run.id);
      throw err;
    }
    await recordAudit(db, {
      actorId: actor.userId,
      action: `edgeforge.${kind}.started`,
      subjectType: 'edge_forge_run',
      subjectId: run.id,
      detail: { target: run.target, model_version: run.modelVersion, artifact_id: run.artifactId },
      requestId: actor.requestId,
    });
    const { run_id: workflowRunId, ...workflow } = started;
    return { run: forgeRunOut(run), ...workflow, workflow_run_id: workflowRunId };
  };

  return new RouteGroup('edge forge')
    .post(
      '/api/edgeforge/export/{model_version}',
      {
        summary:
          "Compile a registered model for an edge target (workflow edgeforge-export-<target>-<model_version>): onnxruntime's graph optimisation saved to a file (fp32), and reduced-precision builds (int8 or fp16 Conv weights), each stored in the models bucket with its SHA-256 and size and its mAP@0.5 loss against the source model measured on a sealed gold set; then each build timed when the target is this host. 202, Location: the run and its benchmarks",
        access: 'reviewer',
        params: z.object({ model_version: z.string().min(1).max(200) }),
        body: { name: 'EdgeExportIn', schema: EdgeExportIn },
        successStatus: 202,
        statuses: FORGE_STATUSES,
      },
      async ({ params, body, principal, req, res }) => {
        const actor = actorOf(principal, req);
        const run = await queueExport(db, { ...body, model_version: params.model_version }, actor);
        return start(res, 'export', run, actor);
      },
    )
    .post(
      '/api/edgeforge/benchmark',
      {
        summary:
          'Store the latency a device reports as a `reported` benchmark (201); with ?measure=true, also time artifact_id here with onnxruntime — warm-up, timed runs on a real frame, p50/p90/p99/mean, throughput, memory, the host recorded — as a `measured` benchmark (workflow edgeforge-measure-<run_id>; 202, Location: the run and its benchmark)',
        access: 'reviewer',
        body: { name: 'BenchIn', schema: BenchIn },
        query: BenchQuery,
        successStatus: 201,
        alsoSucceeds: { 202: 'measuring: the workflow started (and the reported figures, if any, stored)' },
        statuses: FORGE_STATUSES,
      },
      async ({ body, query, principal, req, res }) => {
        const actor = actorOf(principal, req);
        const figures = Object.keys(body.latency_ms).length > 0;
        if (!query.measure && !figures)
          throw new InputError('a reported benchmark needs at least one latency figure', [
            { field: 'body.latency_ms', message: 'empty' },
          ]);
        if (!query.measure) return storeReported(db, storage, body, actor);
        if (!body.artifact_id)
          throw new InputError('measuring needs the artifact to time', [
            { field: 'body.artifact_id', message: 'required with measure=true' },
          ]);
        await matchingArtifact(db, body.artifact_id, body);
        const run = await queueMeasure(db, { ...body, artifact_id: body.artifact_id }, actor);
        const reported = figures ? await storeReported(db, storage, body, actor) : null;
        return { reported, ...(await start(res, 'measure', run, actor)) };
      },
    )
    .get(
      '/api/edgeforge/benchmarks',
      {
        summary:
          'Benchmarks, newest first: filter by model_version, target, source (measured|reported), artifact_id, or run_id (then the edge-forge run itself is shown too: its status, params and result); paged by next_cursor',
        access: 'annotator',
        query: BenchmarksQuery,
        statuses: { 404: 'no such edge-forge run' },
      },
      async ({ query }) => listBenchmarks(db, query),
    )
    .get(
      '/api/edgeforge/benchmarks/audit',
      {
        summary:
          'Reported latencies checked against the measured ones: a claim faster than the fastest measurement of the same artifact (else the same model version and target) by more than `tolerance` is not_reproduced; one with nothing measured to check against is unverified',
        access: 'annotator',
        query: AuditQuery,
      },
      async ({ query }) => auditBenchmarks(db, query),
    )
    .get(
      '/api/edgeforge/capabilities',
      {
        summary:
          'The edge targets: runtime, execution provider, precisions, default budgets, and whether this installation can compile for each and time it here, with the reason when not',
        access: 'annotator',
      },
      () => capabilities(),
    )
    .post(
      '/api/edgeforge/cooptimize',
      {
        summary:
          'The accuracy/latency trade-off over a grid of prune fractions (Conv weights zeroed by magnitude) × precisions, every point built, its mAP@0.5 on a sealed gold set and its latency measured on this host, with the Pareto front and the comparison with the stated base (workflow edgeforge-cooptimize-<run_id>); 202, Location: the run',
        access: 'reviewer',
        body: { name: 'CooptIn', schema: CooptIn },
        successStatus: 202,
        statuses: FORGE_STATUSES,
      },
      async ({ body, principal, req, res }) => {
        const actor = actorOf(principal, req);
        const modelVersion = body.model_version ?? (await currentChampion(deps)).modelVersion;
        const run = await queueCooptimize(
          db,
          { ...body, model_version: modelVersion, prune_grid: body.prune_grid ?? DEFAULT_PRUNE_GRID },
          actor,
        );
        return start(res, 'cooptimize', run, actor);
      },
    )
    .post(
      '/api/edgeforge/thermal',
      {
        summary: `A sustained run of an artifact on this host for duration_s (at most 60 s; workflow edgeforge-thermal-<run_id>): latency per time window, the drift from the first window to the last, and the CPU temperature from /sys/class/thermal at start and end (null with the reason where no zone is readable); 202, Location: the run`,
        access: 'reviewer',
        body: { name: 'ThermalIn', schema: ThermalIn },
        successStatus: 202,
        statuses: FORGE_STATUSES,
      },
      async ({ body, principal, req, res }) => {
        const actor = actorOf(principal, req);
        return start(res, 'thermal', await queueThermal(db, body, actor), actor);
      },
    )
    .post(
      '/api/edgeforge/gate',
      {
        summary:
          "An artifact against its target's budgets (the target's defaults, overridden by `budgets`): latency from its newest measured benchmark, memory, file size and mAP@0.5 loss on the gold set; pass/fail per budget with the figures (a figure never measured fails its budget). The verdict is recorded",
        access: 'reviewer',
        body: { name: 'GateIn', schema: GateIn },
        statuses: { 404: 'no such artifact', 422: 'the artifact names an unknown target' },
      },
      async ({ body, principal, req }) => gateArtifact(db, storage, body, actorOf(principal, req)),
    )
    .get(
      '/api/edgeforge/deployments',
      {
        summary:
          'What runs where: per edge artifact assigned to or running on a device or rolled out, the devices assigned it, those running it (with whether their file hash matches), and its rollouts; devices running an artifact the forge does not know',
        access: 'annotator',
        query: DeploymentsQuery,
      },
      async ({ query }) => deployments(db, storage, query),
    );
}
