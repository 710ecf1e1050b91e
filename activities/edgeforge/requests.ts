import os from 'node:os';
import {
  compileAvailability,
  findTarget,
  measureAvailability,
  TARGETS,
  type EdgeTarget,
  type Precision,
} from '../../core/edgeforge';
import { InputError, NotFoundError, RefusedError } from '../../core/errors';
import type { EdgeArtifact, EdgeForgeRun } from '../../generated/prisma/client';
import type { Actor } from '../annotations/objects';
import type { Db } from '../db';
import { findGold } from '../quality/gold';
import { findModel } from '../models/artifacts';
import { findArtifact } from '../edge/records';
import { requireForgeable } from './artifacts';
import { queueForgeRun, type ExportParams, type ForgeParams, type TimingParams } from './runs';
import { hostFacts } from './runtime';

/**
 * What the forge's routes ask before a workflow starts (docs/edgeforge.md): the model, target,
 * gold set and frame a run names must exist and fit, and the target must be one this installation
 * can compile for (and, to time it, one this host is), or the request is refused by name.
 */

export interface TimingIn {
  warmup: number;
  runs: number;
  threads?: number | undefined;
  frame_id?: string | undefined;
}

/** A target by id: unknown → 422 listing the known ones. */
export function targetById(id: string, field = 'target'): EdgeTarget {
  const target = findTarget(id);
  if (!target)
    throw new InputError(`unknown edge target ${id}; targets: ${TARGETS.map((t) => t.id).join(', ')}`, [
      { field: `body.${field}`, message: 'unknown target' },
    ]);
  return target;
}

/** Refuses by name a target this installation cannot compile for. */
export function compilableTarget(id: string): EdgeTarget {
  const target = targetById(id);
  const can = compileAvailability(target, hostFacts());
  if (!can.available)
    throw new RefusedError(`cannot compile for ${target.id}: ${can.reason}`, {
      reason: 'toolchain_absent',
      target: target.id,
    });
  return target;
}

/** Refuses by name a target whose artifacts cannot be timed on this host. */
function measurableTarget(id: string): EdgeTarget {
  const target = targetById(id);
  const can = measureAvailability(target, hostFacts());
  if (!can.available)
    throw new RefusedError(`cannot measure ${target.id} here: ${can.reason}`, {
      reason: 'not_measurable_here',
      target: target.id,
    });
  return target;
}

function precisionsFor(target: EdgeTarget, asked: readonly Precision[]): Precision[] {
  const unsupported = asked.filter((p) => !target.precisions.includes(p));
  if (unsupported.length)
    throw new InputError(
      `target ${target.id} takes precisions ${target.precisions.join(', ')}, not ${unsupported.join(', ')}`,
      [{ field: 'body.precisions', message: `unsupported for ${target.id}` }],
    );
  return [...new Set(asked)];
}

/** The gold set named, or the newest sealed one when none is named (422 when none is sealed). */
async function goldFor(db: Db, goldId: string | undefined): Promise<string> {
  if (goldId) return (await findGold(db, goldId)).id;
  const newest = await db.goldSet.findFirst({
    where: { sealedAt: { not: null }, contentHash: { not: null } },
    orderBy: [{ sealedAt: 'desc' }, { id: 'desc' }],
    select: { id: true },
  });
  if (!newest)
    throw new RefusedError(
      'no sealed gold set to check accuracy on: seal one (POST /api/quality/gold/seal) or name gold_id',
    );
  return newest.id;
}

/** The frame timed: the one named (404 when unknown), else the gold set's first frame. */
async function timingFrame(db: Db, frameId: string | undefined, goldId: string | null): Promise<string> {
  if (frameId) {
    if (!(await db.frame.findUnique({ where: { id: frameId }, select: { id: true } })))
      throw new NotFoundError(`no frame ${frameId}`);
    return frameId;
  }
  const gold = goldId
    ? await db.goldSet.findUnique({ where: { id: goldId }, select: { frameIds: true } })
    : null;
  const first = gold?.frameIds[0];
  if (!first)
    throw new RefusedError(
      'name frame_id: a model is timed on a real frame, and no gold set of this artifact names one',
    );
  return first;
}

/** Threads of a timing: as asked, else one per CPU of this host (recorded either way). */
const threadsOf = (t: { threads?: number | undefined }): number => t.threads ?? os.availableParallelism();

async function timing(db: Db, t: TimingIn, goldId: string | null): Promise<TimingParams> {
  return {
    warmup: t.warmup,
    runs: t.runs,
    threads: threadsOf(t),
    frame_id: await timingFrame(db, t.frame_id, goldId),
  };
}

/** What export and cooptimize params share. */
type ModelParams = Pick<
  ExportParams,
  'model_version' | 'target' | 'gold_id' | 'precisions' | keyof TimingParams
>;

async function forgeableModel(db: Db, modelVersion: string) {
  const model = await findModel(db, modelVersion);
  requireForgeable(model);
  return model;
}

/** The gold set an artifact's accuracy was checked on, if any. */
const artifactGold = (a: EdgeArtifact): string | null =>
  ((a.accuracy ?? {}) as { gold_id?: string }).gold_id ?? null;

interface ModelRunIn extends TimingIn {
  model_version: string;
  gold_id?: string | undefined;
  precisions: Precision[];
}

/** Queues a run over a model version (export, cooptimize): the model, its target's precisions, the gold set. */
async function queueModelRun<K extends 'export' | 'cooptimize'>(
  db: Db,
  kind: K,
  target: EdgeTarget,
  input: ModelRunIn,
  extra: Omit<ForgeParams[K], keyof ModelParams>,
  actor: Actor,
): Promise<EdgeForgeRun> {
  const model = await forgeableModel(db, input.model_version);
  const goldId = await goldFor(db, input.gold_id);
  const common: ModelParams = {
    model_version: model.modelVersion,
    target: target.id,
    gold_id: goldId,
    precisions: precisionsFor(target, input.precisions),
    ...(await timing(db, input, goldId)),
  };
  return queueForgeRun(db, {
    kind,
    target: target.id,
    modelVersion: model.modelVersion,
    artifactId: null,
    params: { ...common, ...extra } as ForgeParams[K],
    createdBy: actor.userId,
  });
}

/** Queues a run over a stored artifact (measure, thermal) whose target can be timed here. */
async function queueArtifactRun<K extends 'measure' | 'thermal'>(
  db: Db,
  kind: K,
  input: { artifact_id: string; frame_id?: string | undefined },
  params: (artifact: EdgeArtifact, frameId: string) => ForgeParams[K],
  actor: Actor,
): Promise<EdgeForgeRun> {
  const artifact = await findArtifact(db, input.artifact_id);
  measurableTarget(artifact.target);
  const frameId = await timingFrame(db, input.frame_id, artifactGold(artifact));
  return queueForgeRun(db, {
    kind,
    target: artifact.target,
    modelVersion: artifact.modelVersion,
    artifactId: artifact.id,
    params: params(artifact, frameId),
    createdBy: actor.userId,
  });
}

export async function queueExport(db: Db, input: ModelRunIn & { target: string }, actor: Actor) {
  const target = compilableTarget(input.target);
  const measure = measureAvailability(target, hostFacts());
  return queueModelRun(db, 'export', target, input, { measure_skipped: measure.reason }, actor);
}

export async function queueCooptimize(
  db: Db,
  input: ModelRunIn & { target: string; base_latency_ms: number; base_map50: number; prune_grid: number[] },
  actor: Actor,
) {
  const target = measurableTarget(input.target);
  return queueModelRun(
    db,
    'cooptimize',
    target,
    input,
    {
      prune_grid: [...new Set(input.prune_grid)].sort((a, b) => a - b),
      base_latency_ms: input.base_latency_ms,
      base_map50: input.base_map50,
    },
    actor,
  );
}

/** A measurement of a stored artifact on this host. */
export async function queueMeasure(db: Db, input: TimingIn & { artifact_id: string }, actor: Actor) {
  return queueArtifactRun(
    db,
    'measure',
    input,
    (a, frameId) => ({
      artifact_id: a.id,
      warmup: input.warmup,
      runs: input.runs,
      threads: threadsOf(input),
      frame_id: frameId,
    }),
    actor,
  );
}

export async function queueThermal(
  db: Db,
  input: {
    artifact_id: string;
    duration_s: number;
    windows: number;
    threads?: number | undefined;
    frame_id?: string | undefined;
  },
  actor: Actor,
) {
  return queueArtifactRun(
    db,
    'thermal',
    input,
    (a, frameId) => ({
      artifact_id: a.id,
      duration_s: input.duration_s,
      windows: input.windows,
      threads: threadsOf(input),
      frame_id: frameId,
    }),
    actor,
  );
}
