import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import * as ort from 'onnxruntime-node';
import type { AppConfig } from '../../core/config';
import { UnavailableError } from '../../core/errors';

/** Models the platform knows by role; the file names come from config `models`. */
export const MODEL_ROLES = [
  'closedSetDetector',
  'faceDetector',
  'roadSegmentation',
  'vocSegmentation',
  'signClassifier',
] as const;
export type ModelRole = (typeof MODEL_ROLES)[number];

export interface TensorInfo {
  name: string;
  type: string;
  /** Dimensions; strings for symbolic (dynamic) ones. */
  shape: Array<number | string>;
}

export interface ModelCheck {
  role: ModelRole;
  file: string;
  sha256: string;
  device: 'cpu' | 'cuda';
  providers: string[];
  inputs: TensorInfo[];
  outputs: TensorInfo[];
  load_ms: number;
  /** One inference on a zero tensor of the input's shape (dynamic dims set to 320). */
  run_ms: number;
}

const tensorInfo = (meta: ort.InferenceSession.ValueMetadata): TensorInfo =>
  meta.isTensor
    ? {
        name: meta.name,
        type: meta.type,
        shape: meta.shape.map((d) => (typeof d === 'number' && d >= 0 ? d : String(d))),
      }
    : { name: meta.name, type: 'non-tensor', shape: [] };

/** The CUDA provider ships only where onnxruntime's GPU binaries were installed. */
export function availableProviders(): string[] {
  return ort
    .listSupportedBackends()
    .filter((b) => b.bundled)
    .map((b) => b.name);
}

/**
 * Opens one configured model on the configured device. Refuses by name when the model file is
 * missing or the device's provider is absent; never pretends.
 */
export async function openModel(
  models: AppConfig['models'],
  role: ModelRole,
  options: ort.InferenceSession.SessionOptions = {},
): Promise<{
  session: ort.InferenceSession;
  file: string;
  bytes: Buffer;
  providers: string[];
  loadMs: number;
}> {
  const file = path.resolve(models.dir, models[role]);
  const bytes = await fs.readFile(file).catch(() => {
    throw new UnavailableError(
      `model ${role} is not there: ${file} does not exist (set APP_MODELS__DIR or APP_MODELS__${role.replace(/[A-Z]/g, (c) => `_${c}`).toUpperCase()})`,
    );
  });
  const providers = availableProviders();
  if (models.device === 'cuda' && !providers.includes('cuda')) {
    throw new UnavailableError(
      `model ${role} needs the CUDA execution provider, which this onnxruntime-node install does not have (providers: ${providers.join(', ')})`,
    );
  }
  const started = performance.now();
  const session = await ort.InferenceSession.create(bytes, {
    ...options,
    executionProviders: [models.device],
  });
  return { session, file, bytes, providers, loadMs: performance.now() - started };
}

/** Loads one configured model on the configured device and runs it once (refusing as openModel does). */
export async function checkModel(models: AppConfig['models'], role: ModelRole): Promise<ModelCheck> {
  const { session, file, bytes, providers, loadMs } = await openModel(models, role);
  try {
    const inputs = session.inputMetadata.map(tensorInfo);
    const feeds: Record<string, ort.Tensor> = {};
    for (const input of inputs) {
      if (input.type !== 'float32')
        throw new UnavailableError(
          `model ${role}: input ${input.name} is ${input.type}; only float32 inputs are supported`,
        );
      const dims = input.shape.map((d) => (typeof d === 'number' ? d : 320));
      feeds[input.name] = new ort.Tensor('float32', new Float32Array(dims.reduce((a, b) => a * b, 1)), dims);
    }
    const runStarted = performance.now();
    await session.run(feeds);
    return {
      role,
      file,
      sha256: createHash('sha256').update(bytes).digest('hex'),
      device: models.device,
      providers,
      inputs,
      outputs: session.outputMetadata.map(tensorInfo),
      load_ms: Math.round(loadMs),
      run_ms: Math.round(performance.now() - runStarted),
    };
  } finally {
    await session.release();
  }
}
