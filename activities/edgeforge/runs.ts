import type { Precision } from '../../core/edgeforge';
import { NotFoundError } from '../../core/errors';
import type { EdgeForgeRun, Prisma } from '../../generated/prisma/client';
import type { Db } from '../db';

/**
 * Edge-forge runs (docs/edgeforge.md): every long forge job — export, measure, cooptimize,
 * thermal — is an `edge_forge_runs` row that its workflow moves through queued → running →
 * completed | failed, with the figures it measured in `result`; the gate's verdicts are rows too.
 */

export const FORGE_KINDS = ['export', 'measure', 'cooptimize', 'thermal'] as const;
export type ForgeKind = (typeof FORGE_KINDS)[number];

/** How a model is timed: untimed warm-up runs, timed runs, intra-op threads, the real frame it sees. */
export interface TimingParams {
  warmup: number;
  runs: number;
  threads: number;
  frame_id: string;
}

export interface ExportParams extends TimingParams {
  model_version: string;
  target: string;
  gold_id: string;
  precisions: Precision[];
  /** Why the artifacts are not timed here (their target is not this host), or null when they are. */
  measure_skipped: string | null;
}

export interface MeasureParams extends TimingParams {
  artifact_id: string;
}

export interface CooptParams extends TimingParams {
  model_version: string;
  target: string;
  gold_id: string;
  prune_grid: number[];
  precisions: Precision[];
  base_latency_ms: number;
  base_map50: number;
}

export interface ThermalParams {
  artifact_id: string;
  duration_s: number;
  windows: number;
  threads: number;
  frame_id: string;
}

export interface ForgeParams {
  export: ExportParams;
  measure: MeasureParams;
  cooptimize: CooptParams;
  thermal: ThermalParams;
}

export type ForgeStatus = 'queued' | 'running' | 'completed' | 'failed';

/** The workflow of a run: an export is one per model version and target at a time, the others one per run. */
export function forgeWorkflowId(
  kind: ForgeKind,
  run: { id: string; target: string; modelVersion: string | null },
) {
  return kind === 'export'
    ? `edgeforge-export-${run.target}-${run.modelVersion}`
    : `edgeforge-${kind}-${run.id}`;
}

export const forgeRunOut = (r: EdgeForgeRun) => {
  const { status, error, ...result } = r.result as Record<string, unknown> & {
    status?: string;
    error?: string;
  };
  return {
    id: r.id,
    kind: r.kind,
    model_version: r.modelVersion,
    artifact_id: r.artifactId,
    target: r.target,
    status: status ?? null,
    error: error ?? null,
    passed: r.passed,
    params: r.params,
    result,
    created_at: r.createdAt.toISOString(),
  };
};

export async function findForgeRun(db: Db, id: string): Promise<EdgeForgeRun> {
  const run = await db.edgeForgeRun.findUnique({ where: { id } });
  if (!run) throw new NotFoundError(`no edge-forge run ${id}`);
  return run;
}

export async function queueForgeRun<K extends ForgeKind>(
  db: Db,
  input: {
    kind: K;
    target: string;
    modelVersion: string | null;
    artifactId: string | null;
    params: ForgeParams[K];
    createdBy: string;
  },
): Promise<EdgeForgeRun> {
  return db.edgeForgeRun.create({
    data: {
      kind: input.kind,
      target: input.target,
      modelVersion: input.modelVersion,
      artifactId: input.artifactId,
      params: input.params as unknown as Prisma.InputJsonObject,
      result: { status: 'queued' },
      createdBy: input.createdBy,
    },
  });
}

/** A run whose workflow never started leaves no trace. */
export async function discardForgeRun(db: Db, id: string): Promise<void> {
  await db.edgeForgeRun.deleteMany({ where: { id } });
}

export const paramsOf = <K extends ForgeKind>(run: EdgeForgeRun, kind: K): ForgeParams[K] => {
  if (run.kind !== kind) throw new Error(`edge-forge run ${run.id} is a ${run.kind} run, not ${kind}`);
  return run.params as unknown as ForgeParams[K];
};

export const resultOf = (run: EdgeForgeRun) => run.result as Record<string, unknown>;

/**
 * Merges `patch` into a run's result. A run's steps are its workflow's activities, one at a time,
 * so nothing else writes the row meanwhile.
 */
export async function patchResult(db: Db, id: string, patch: Record<string, unknown>): Promise<EdgeForgeRun> {
  const run = await findForgeRun(db, id);
  return db.edgeForgeRun.update({
    where: { id },
    data: { result: { ...resultOf(run), ...patch } as Prisma.InputJsonObject },
  });
}

/** Appends to a list of a run's result. */
export async function appendResult(db: Db, id: string, list: string, item: unknown): Promise<EdgeForgeRun> {
  const run = await findForgeRun(db, id);
  const current = resultOf(run)[list];
  return patchResult(db, id, { [list]: [...(Array.isArray(current) ? current : []), item] });
}
