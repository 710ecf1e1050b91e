import { readOnnx, writeOnnx } from '../../core/onnx/graph';
import { quantizeConvWeights, type QuantizeReport } from '../../core/onnx/quantize';
import { pruneConvWeights, type EdgeTarget, type Precision, type PruneReport } from '../../core/edgeforge';
import { NotFoundError, RefusedError } from '../../core/errors';
import type { EdgeArtifact, Model, Prisma } from '../../generated/prisma/client';
import type { Db } from '../db';
import { decodeFrame, type FrameImage } from '../detect/frame-image';
import { objectLocation, readObject } from '../inspector/frame-objects';
import { sha256Hex } from '../models/artifacts';
import type { ObjectStore } from '../storage/object-store';
import { optimizeGraph, SAVED_OPTIMIZATION } from './runtime';

/**
 * Compiled edge artifacts (docs/edgeforge.md): a source model's graph optimised by onnxruntime
 * and saved, then optionally pruned and stored at a reduced weight precision; files in the models
 * bucket under `edge/`, each row with its SHA-256, size and accuracy check.
 */

export const artifactOut = (a: EdgeArtifact, bucket: string) => ({
  id: a.id,
  model_version: a.modelVersion,
  target: a.target,
  precision: a.precision,
  optimization: a.optimization,
  uri: `s3://${bucket}/${a.key}`,
  sha256: a.sha256,
  size_bytes: a.sizeBytes,
  accuracy: a.accuracy,
  created_at: a.createdAt.toISOString(),
});

/** The models the forge can check: the YOLOX family, whose head the platform's decoder reads. */
export function requireForgeable(model: Model): void {
  if (model.origin === 'builtin' || model.format === 'yolox') return;
  throw new RefusedError(
    `model ${model.modelVersion} has format ${model.format ?? 'unknown'}; the forge checks accuracy with the YOLOX decoder and compiles only models of format yolox`,
  );
}

export interface Variant {
  bytes: Uint8Array;
  optimization: string;
  quantize: QuantizeReport | null;
  prune: PruneReport | null;
}

/** The source graph optimised for the target, then pruned and reduced to `precision` as asked. */
export async function buildVariant(
  source: Uint8Array,
  target: EdgeTarget,
  precision: Precision,
  prune = 0,
): Promise<Variant> {
  const optimized = await optimizeGraph(source, target.execution_provider);
  if (precision === 'fp32' && prune === 0)
    return { bytes: optimized, optimization: SAVED_OPTIMIZATION, quantize: null, prune: null };
  const model = readOnnx(optimized);
  const pruned = prune > 0 ? pruneConvWeights(model, prune) : null;
  const quantize = precision === 'fp32' ? null : quantizeConvWeights(model, precision);
  return { bytes: writeOnnx(model), optimization: SAVED_OPTIMIZATION, quantize, prune: pruned };
}

const artifactKey = (modelVersion: string, target: string, precision: string, sha256: string) =>
  `edge/${encodeURIComponent(modelVersion)}/${target}/${precision}-${sha256.slice(0, 16)}.onnx`;

/**
 * Stores a compiled file and its row. The same file compiled again (the build is deterministic)
 * keeps its row, whose accuracy becomes the newest check.
 */
export async function storeArtifact(
  deps: { db: Db; storage: ObjectStore },
  input: {
    modelVersion: string;
    target: string;
    precision: Precision;
    variant: Variant;
    accuracy: Prisma.InputJsonObject;
    createdBy: string | null;
  },
): Promise<EdgeArtifact> {
  const body = Buffer.from(input.variant.bytes);
  const sha256 = sha256Hex(body);
  const key = artifactKey(input.modelVersion, input.target, input.precision, sha256);
  await deps.storage.client.putObject(deps.storage.bucket('models'), key, body, body.length, {
    'Content-Type': 'application/octet-stream',
  });
  const same = await deps.db.edgeArtifact.findFirst({
    where: { modelVersion: input.modelVersion, target: input.target, precision: input.precision, sha256 },
  });
  const { accuracy } = input;
  if (same) return deps.db.edgeArtifact.update({ where: { id: same.id }, data: { accuracy } });
  return deps.db.edgeArtifact.create({
    data: {
      modelVersion: input.modelVersion,
      target: input.target,
      precision: input.precision,
      optimization: input.variant.optimization,
      key,
      sha256,
      sizeBytes: body.length,
      accuracy,
      createdBy: input.createdBy,
    },
  });
}

/** An artifact's file, checked against its SHA-256. */
export async function readArtifact(storage: ObjectStore, artifact: EdgeArtifact): Promise<Buffer> {
  const bytes = await readObject(storage, { bucket: storage.bucket('models'), key: artifact.key });
  if (sha256Hex(bytes) !== artifact.sha256)
    throw new RefusedError(
      `edge artifact ${artifact.id}: the file ${artifact.key} does not match its SHA-256 ${artifact.sha256}`,
    );
  return bytes;
}

/** A frame's pixels, for timing a model on a real frame. */
export async function frameImage(
  deps: { db: Db; storage: ObjectStore },
  frameId: string,
): Promise<FrameImage> {
  const frame = await deps.db.frame.findUnique({ where: { id: frameId }, select: { uri: true } });
  if (!frame) throw new NotFoundError(`no frame ${frameId}`);
  return decodeFrame(await readObject(deps.storage, objectLocation(deps.storage, frame.uri, 'frames')));
}
