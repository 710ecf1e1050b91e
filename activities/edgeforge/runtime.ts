import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import * as ort from 'onnxruntime-node';
import { COCO_CLASSES } from '../../core/detect/coco-ontology';
import { letterbox, yoloxAnchorCount, yoloxInput, type Letterbox } from '../../core/detect/yolox';
import { TARGET_TOOLS, type HostFacts } from '../../core/edgeforge';
import { UnavailableError } from '../../core/errors';
import { availableProviders } from '../detect/inference-runtime';
import type { FrameImage } from '../detect/frame-image';

/**
 * The edge forge's use of onnxruntime on this host (docs/edgeforge.md): what the installation
 * offers, graph optimisation saved to a file, and a YOLOX-shaped model run on real frames, timed.
 */

/** The graph optimisation level saved into every artifact: the highest that stays portable across CPUs. */
export const SAVED_OPTIMIZATION = 'extended';

const onPath = (tool: string): boolean =>
  (process.env.PATH ?? '').split(path.delimiter).some((dir) => {
    try {
      fs.accessSync(path.join(dir, tool), fs.constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });

export function hostFacts(): HostFacts {
  return {
    arch: process.arch,
    platform: process.platform,
    providers: availableProviders(),
    tools: TARGET_TOOLS.filter(onPath),
  };
}

/** Where a measurement ran, stored with every measured benchmark. */
export function environmentOf(extra: Record<string, unknown>) {
  const cpus = os.cpus();
  return {
    host: os.hostname(),
    cpu: cpus[0]?.model ?? null,
    cpus: cpus.length,
    arch: process.arch,
    platform: process.platform,
    onnxruntime: ort.env.versions.node ?? ort.env.versions.common,
    node: process.version,
    load_avg: os.loadavg(),
    ...extra,
  };
}

/**
 * Runs onnxruntime's graph optimisation at the saved level and returns the optimised model file,
 * written by onnxruntime itself (SessionOptions.optimizedModelFilePath).
 */
export async function optimizeGraph(bytes: Uint8Array, provider: string): Promise<Buffer> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'edgeforge-'));
  const file = path.join(dir, 'optimized.onnx');
  try {
    const session = await ort.InferenceSession.create(bytes, {
      executionProviders: [provider],
      graphOptimizationLevel: SAVED_OPTIMIZATION,
      optimizedModelFilePath: file,
    });
    await session.release();
    if (!fs.existsSync(file))
      throw new UnavailableError(
        `onnxruntime ${ort.env.versions.common} did not write the optimised model to ${file}`,
      );
    return fs.readFileSync(file);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** A YOLOX-shaped model (input 1×3×S×S, raw head 1×A×85) in an onnxruntime session. */
export interface ModelRunner {
  inputSize: number;
  prepare(frame: FrameImage): Promise<{ letterbox: Letterbox; data: Float32Array }>;
  /** One run; `ms` is the wall time of the session's run as its caller waits for it. */
  run(data: Float32Array): Promise<{ head: Float32Array; ms: number }>;
  release(): Promise<void>;
}

const shapeOf = (meta: ort.InferenceSession.ValueMetadata | undefined) =>
  meta?.isTensor ? meta.shape.map((d) => (typeof d === 'number' ? d : String(d))) : null;

export async function openRunner(
  bytes: Uint8Array,
  opts: { provider: string; threads?: number | undefined; what: string },
): Promise<ModelRunner> {
  const session = await ort.InferenceSession.create(bytes, {
    executionProviders: [opts.provider],
    ...(opts.threads ? { intraOpNumThreads: opts.threads } : {}),
  }).catch((err: unknown) => {
    throw new UnavailableError(`${opts.what} does not load in onnxruntime: ${(err as Error).message}`);
  });
  const input = session.inputMetadata[0];
  const output = session.outputMetadata[0];
  const inDims = shapeOf(input);
  const outDims = shapeOf(output);
  const size = inDims?.[2];
  const fits =
    typeof size === 'number' &&
    inDims?.[0] === 1 &&
    inDims[1] === 3 &&
    inDims[3] === size &&
    outDims?.[1] === yoloxAnchorCount(size) &&
    outDims[2] === 5 + COCO_CLASSES.length;
  if (!fits || !input || !output) {
    await session.release();
    throw new UnavailableError(
      `${opts.what} does not fit the YOLOX decoder the forge checks accuracy with: input ${JSON.stringify(inDims)}, output ${JSON.stringify(outDims)}; expected 1×3×S×S and 1×A×85`,
    );
  }
  const dims = [1, 3, size, size];
  return {
    inputSize: size,
    async prepare(frame) {
      const lb = letterbox(frame.width, frame.height, size);
      return { letterbox: lb, data: yoloxInput(await frame.scaled(lb.scaledWidth, lb.scaledHeight), lb) };
    },
    async run(data) {
      const feeds = { [input.name]: new ort.Tensor('float32', data, dims) };
      const started = performance.now();
      const out = await session.run(feeds);
      const ms = performance.now() - started;
      return { head: out[output.name]!.data as Float32Array, ms };
    },
    release: () => session.release(),
  };
}

/** Resident memory of this process, in MB. */
export const rssMb = (): number => process.memoryUsage().rss / (1024 * 1024);

/** Warm-up runs (untimed), then `runs` timed runs on the same input; `beat` is called between runs. */
export async function timeRuns(
  runner: ModelRunner,
  data: Float32Array,
  opts: { warmup: number; runs: number; beat: () => void },
): Promise<number[]> {
  for (let i = 0; i < opts.warmup; i++) await runner.run(data);
  const samples: number[] = [];
  for (let i = 0; i < opts.runs; i++) {
    samples.push((await runner.run(data)).ms);
    opts.beat();
  }
  return samples;
}
