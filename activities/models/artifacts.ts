import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { AppConfig } from '../../core/config';
import { NotFoundError, RefusedError, UnavailableError } from '../../core/errors';
import type { Model } from '../../generated/prisma/client';
import type { Db } from '../db';
import type { ObjectStore } from '../storage/object-store';

/** A registered model by version (404 when none): the quality plane's lookup, for the model lifecycle too. */
export { findModel } from '../quality/models';

/**
 * Model files by model version (docs/training.md): the shipped detector is read from the models
 * folder, every other model from the models bucket, and each is checked against the SHA-256 the
 * registry holds before anything runs it. Training, the promotion gate, the edge forge and the
 * fleet all read models through here.
 */
export interface ArtifactDeps {
  db: Db;
  storage: ObjectStore;
  config: AppConfig;
}

export const sha256Hex = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex');

/** The models-bucket key of a model version's ONNX file. */
export const modelArtifactKey = (modelVersion: string): string =>
  `models/${encodeURIComponent(modelVersion)}/model.onnx`;

/** The shipped closed-set detector's version: its file name and the first 12 hex digits of its hash (as auto-label names it). */
export async function builtinDetector(
  config: AppConfig,
): Promise<{ modelVersion: string; file: string; bytes: Buffer }> {
  const file = path.resolve(config.models.dir, config.models.closedSetDetector);
  const bytes = await fs.readFile(file).catch(() => {
    throw new UnavailableError(
      `the shipped closed-set detector is not there: ${file} does not exist (set APP_MODELS__DIR or APP_MODELS__CLOSED_SET_DETECTOR)`,
    );
  });
  return { modelVersion: `${path.basename(file)}@${sha256Hex(bytes).slice(0, 12)}`, file, bytes };
}

/** Uploads a model file to the models bucket under its version; answers where it went and its hash. */
export async function storeModelArtifact(
  deps: Pick<ArtifactDeps, 'storage'>,
  modelVersion: string,
  bytes: Uint8Array,
): Promise<{ key: string; sha256: string; sizeBytes: number }> {
  const key = modelArtifactKey(modelVersion);
  const body = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  await deps.storage.client.putObject(deps.storage.bucket('models'), key, body, body.length, {
    'Content-Type': 'application/octet-stream',
  });
  return { key, sha256: sha256Hex(body), sizeBytes: body.length };
}

async function readObject(storage: ObjectStore, key: string): Promise<Buffer> {
  const chunks: Buffer[] = [];
  const stream = (await storage.client.getObject(storage.bucket('models'), key)) as AsyncIterable<Buffer>;
  for await (const c of stream) chunks.push(c);
  return Buffer.concat(chunks);
}

/**
 * A registered model's ONNX file. Refuses by name a model with no file (imported predictions
 * only), a file that is gone, and a file whose SHA-256 is not the one registered.
 */
export async function readModelArtifact(deps: ArtifactDeps, model: Model): Promise<Buffer> {
  if (model.origin === 'builtin') {
    const shipped = await builtinDetector(deps.config);
    if (shipped.modelVersion !== model.modelVersion)
      throw new UnavailableError(
        `model ${model.modelVersion} is a shipped model that this installation no longer has (it ships ${shipped.modelVersion})`,
      );
    return shipped.bytes;
  }
  if (!model.artifactUri)
    throw new UnavailableError(
      `model ${model.modelVersion} has no model file here (its predictions are imported)`,
    );
  const bytes = await readObject(deps.storage, model.artifactUri).catch((err: unknown) => {
    throw new UnavailableError(
      `model ${model.modelVersion}: its file ${model.artifactUri} cannot be read from the models bucket (${(err as Error).message})`,
    );
  });
  if (model.sha256 && sha256Hex(bytes) !== model.sha256)
    throw new RefusedError(
      `model ${model.modelVersion}: the file in the models bucket does not match its registered SHA-256 ${model.sha256}`,
    );
  return bytes;
}

/**
 * The champion of a task: the model the promotion gate last promoted. Before any promotion the
 * shipped closed-set detector is the detection champion, registered as such on first ask.
 */
export async function currentChampion(deps: ArtifactDeps, task = 'detection'): Promise<Model> {
  const champion = await deps.db.model.findFirst({ where: { task, state: 'champion' } });
  if (champion) return champion;
  if (task !== 'detection') throw new NotFoundError(`no champion for task ${task}`);
  const shipped = await builtinDetector(deps.config);
  const classes = await deps.db.ontologyClass.findMany({ where: { retiredAt: null }, select: { id: true } });
  return deps.db.model.upsert({
    where: { modelVersion: shipped.modelVersion },
    create: {
      modelVersion: shipped.modelVersion,
      name: 'closed-set detector',
      origin: 'builtin',
      classIds: classes.map((c) => c.id).sort((a, b) => a - b),
      state: 'champion',
      format: 'yolox',
      sha256: sha256Hex(shipped.bytes),
      sizeBytes: shipped.bytes.length,
    },
    update: {
      state: 'champion',
      format: 'yolox',
      sha256: sha256Hex(shipped.bytes),
      sizeBytes: shipped.bytes.length,
    },
  });
}
