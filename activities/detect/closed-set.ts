import { createHash } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import * as ort from 'onnxruntime-node';
import type { AppConfig } from '../../core/config';
import { mapCocoDetections, COCO_CLASSES, COCO_TO_ONTOLOGY } from '../../core/detect/coco-ontology';
import {
  cutByTile,
  keepMerged,
  planSlices,
  tileToFrame,
  type SlicePlan,
  type SlicingMode,
  type Tile,
} from '../../core/detect/tiling';
import {
  decodeYolox,
  letterbox,
  yoloxAnchorCount,
  yoloxInput,
  type ClassBox,
  type Letterbox,
} from '../../core/detect/yolox';
import { RefusedError, UnavailableError } from '../../core/errors';
import { fuseDetections, type PathRun } from '../../core/fusion';
import type { Box } from '../../core/geometry';
import { cropFrame, type FrameImage } from './frame-image';
import { availableProviders, openModel } from './inference-runtime';
import { startInferenceThread, type InferenceThread } from './inference-thread';

/**
 * The closed-set path: the configured YOLOX model (yolox_nano.onnx by default) through
 * onnxruntime-node on the configured device. The model must have YOLOX's tensors — one square
 * float32 input 1×3×S×S and a raw head 1×A×(5 + 80) with A the anchor points of S — or it is
 * refused by name: another detector's output would decode into nonsense.
 */
export interface ClosedSetDetector {
  /** File name and short hash, recorded in provenance. */
  model: string;
  /**
   * The frame letterboxed into the model's input, and its tiles when it is sliced (`slicing`
   * overrides the configured mode): the part that can run ahead, while the model works on the frame before.
   */
  prepare(frame: FrameImage, slicing?: SlicingMode): Promise<ClosedSetInput>;
  /** The model on a prepared input: boxes in frame pixels. */
  infer(input: ClosedSetInput): Promise<ClosedSetResult>;
  /** prepare, then infer. */
  detect(frame: FrameImage, slicing?: SlicingMode): Promise<ClosedSetResult>;
  /** False once the inference thread has exited (crashed or released): such a detector cannot run again. */
  alive(): boolean;
  release(): Promise<void>;
}

export interface ClosedSetInput {
  letterbox: Letterbox;
  /** Planar BGR, 1×3×S×S. */
  data: Float32Array;
  /** The slicing decision; null where the detector has no slicing configured (a crop classifier). */
  slicing: SlicePlan | null;
  tiles: TileInput[];
}

interface TileInput {
  tile: Tile;
  letterbox: Letterbox;
  data: Float32Array;
}

export interface ClosedSetResult {
  run: PathRun;
  /**
   * For each detection of `run`, in order: the model's score for every ontology class it can name
   * (the best of the COCO classes that map to it), for the prediction plane's label-error detection.
   */
  classScores: Array<Record<string, number>>;
  dropped: Record<string, number>;
  /** The model's own runs (whole frame and tiles), timed on the inference thread: not the wait in its queue, not the decode of its output. */
  inferenceMs: number;
  /** Whether the frame was sliced, its tile plan and why (docs/small-objects.md). */
  slicing: SlicePlan | null;
}

type DetectConfig = Pick<AppConfig, 'models' | 'autolabel'> & Partial<Pick<AppConfig, 'detect'>>;

/** A tile detection this close to an inner tile edge (input px) was cut by it. */
const CUT_MARGIN_PX = 2;

/** COCO-80 scores → ontology class names, keeping the best COCO class behind each name. */
function ontologyScores(scores: Float32Array): Record<string, number> {
  const out: Record<string, number> = {};
  COCO_CLASSES.forEach((coco, i) => {
    const name = COCO_TO_ONTOLOGY[coco];
    if (name && !(out[name]! >= scores[i]!)) out[name] = scores[i]!;
  });
  return out;
}

const dims = (meta: ort.InferenceSession.ValueMetadata): Array<number | string> =>
  meta.isTensor ? meta.shape.map((d) => (typeof d === 'number' ? d : String(d))) : [];

/**
 * Threads the model runs on: the configured count; else, on a host of two CPUs or fewer, one —
 * the other core reads, decodes and letterboxes the next frames meanwhile, which on such a host
 * labels sessions as fast as two model threads and leaves the model's time its own (docs/autolabel.md,
 * Benchmark); else onnxruntime's default (undefined: one per physical core).
 */
export function closedSetThreads(models: Pick<AppConfig['models'], 'closedSetThreads'>): number | undefined {
  if (models.closedSetThreads > 0) return models.closedSetThreads;
  return os.availableParallelism() <= 2 ? 1 : undefined;
}

/**
 * Whether an opened model has YOLOX's tensors — one square float32 input 1×3×S×S (S a multiple of
 * 32) and a raw head 1×A×(5 + 80) with A the anchor points of S: its input, output and size, or
 * what does not fit.
 */
export function yoloxFit(
  session: ort.InferenceSession,
):
  | { input: ort.InferenceSession.ValueMetadata; output: ort.InferenceSession.ValueMetadata; size: number }
  | { misfit: string } {
  const input = session.inputMetadata[0];
  const output = session.outputMetadata[0];
  const [n, c, h, w] = input ? dims(input) : [];
  const size = typeof h === 'number' ? h : NaN;
  const outDims = output ? dims(output) : [];
  const fits =
    n === 1 &&
    c === 3 &&
    h === w &&
    size > 0 &&
    size % 32 === 0 &&
    outDims.length === 3 &&
    outDims[1] === yoloxAnchorCount(size) &&
    outDims[2] === 5 + COCO_CLASSES.length;
  if (!fits || !input || !output)
    return {
      misfit: `input ${JSON.stringify(input ? dims(input) : null)}, output ${JSON.stringify(outDims)}; expected 1×3×S×S and 1×A×85`,
    };
  return { input, output, size };
}

/**
 * An ONNX file's bytes opened on the configured device (a registered model's file): refuses by name
 * a device whose provider is absent (UnavailableError) and bytes onnxruntime cannot open (RefusedError).
 */
export async function openModelBytes(
  models: Pick<AppConfig['models'], 'device'>,
  bytes: Uint8Array,
  what: string,
): Promise<ort.InferenceSession> {
  const providers = availableProviders();
  if (models.device === 'cuda' && !providers.includes('cuda'))
    throw new UnavailableError(
      `${what} needs the CUDA execution provider, which this onnxruntime-node install does not have (providers: ${providers.join(', ')})`,
    );
  try {
    return await ort.InferenceSession.create(bytes, { executionProviders: [models.device] });
  } catch (err) {
    throw new RefusedError(`${what} does not open with onnxruntime: ${(err as Error).message}`);
  }
}

/** A registered model's file to run instead of the configured one: its bytes and its model version. */
export interface DetectorSource {
  bytes: Buffer;
  modelVersion: string;
}

export async function loadClosedSetDetector(
  config: DetectConfig,
  source?: DetectorSource,
): Promise<ClosedSetDetector> {
  const thread = startInferenceThread('closed-set');
  try {
    return await openDetector(config, thread, source);
  } catch (err) {
    await thread.terminate();
    throw err;
  }
}

/** The configured detector file, or the source given, with the version its predictions carry. */
async function openSource(config: DetectConfig, source: DetectorSource | undefined) {
  if (source) {
    const what = `model ${source.modelVersion}`;
    const session = await openModelBytes(config.models, source.bytes, what);
    return { session, bytes: source.bytes, what, model: () => source.modelVersion };
  }
  const { session, file, bytes } = await openModel(config.models, 'closedSetDetector');
  return {
    session,
    bytes,
    what: `model closedSetDetector (${file})`,
    model: () => `${path.basename(file)}@${createHash('sha256').update(bytes).digest('hex').slice(0, 12)}`,
  };
}

/** The detector's session on its inference thread. */
const MODEL = 'closed-set';

async function openDetector(
  config: DetectConfig,
  thread: InferenceThread,
  source: DetectorSource | undefined,
): Promise<ClosedSetDetector> {
  const { session, bytes, what, model: modelOf } = await openSource(config, source);
  const fit = yoloxFit(session);
  // The session opened here proves the file, the device and the tensors; the one that runs is the thread's.
  await session.release();
  if ('misfit' in fit) throw new UnavailableError(`${what} does not fit the YOLOX decoder: ${fit.misfit}`);
  const { input, output, size } = fit;
  const threads = closedSetThreads(config.models);
  const opening = thread.open(MODEL, bytes, {
    executionProviders: [config.models.device],
    ...(threads ? { intraOpNumThreads: threads } : {}),
  });
  opening.catch(() => undefined); // awaited below, after hashing the file meanwhile
  const model = modelOf();
  await opening;
  const rule = config.detect;
  const scaledInput = async (image: FrameImage) => {
    const lb = letterbox(image.width, image.height, size);
    return { letterbox: lb, data: yoloxInput(await image.scaled(lb.scaledWidth, lb.scaledHeight), lb) };
  };
  const prepare = async (frame: FrameImage, mode?: SlicingMode): Promise<ClosedSetInput> => {
    const slicing = rule ? planSlices(frame.width, frame.height, size, mode ?? rule.slicing, rule) : null;
    // Only the scaled frame is decoded unless tiles are cut: then the full-resolution pixels too.
    const [whole, tiles] = await Promise.all([
      scaledInput(frame),
      Promise.all(
        (slicing?.tiles ?? []).map(async (tile) => {
          const { crop } = await cropFrame(
            frame,
            [tile.x, tile.y, tile.x + tile.width, tile.y + tile.height],
            0,
          );
          return { tile, ...(await scaledInput(crop)) };
        }),
      ),
    ]);
    return { ...whole, slicing, tiles };
  };
  const decode = (head: Float32Array, lb: Letterbox) =>
    decodeYolox(head, lb, COCO_CLASSES.length, {
      minScore: config.autolabel.minScore,
      nmsIou: config.autolabel.nmsIou,
    });
  // The input buffers move to the inference thread: an input runs once. Tiles queue behind the whole frame.
  const run = async (data: Float32Array) => {
    const { outputs, ms } = await thread.run(MODEL, { [input.name]: { data, dims: [1, 3, size, size] } }, [
      output.name,
    ]);
    return { head: outputs[output.name]!.data, ms };
  };
  const infer = async ({ letterbox: lb, data, slicing, tiles }: ClosedSetInput): Promise<ClosedSetResult> => {
    const [whole, ...tileRuns] = await Promise.all([run(data), ...tiles.map((t) => run(t.data))]);
    const inferenceMs = [whole!, ...tileRuns].reduce((sum, r) => sum + r.ms, 0);
    const boxes =
      tiles.length && slicing
        ? mergeViews(
            decode(whole!.head, lb),
            tiles.map((t, i) => tileBoxes(decode(tileRuns[i]!.head, t.letterbox), t, lb)),
            config.autolabel.nmsIou,
          ).filter((b) => keepMerged(b, slicing))
        : decode(whole!.head, lb);
    const { mapped, dropped } = mapCocoDetections(boxes);
    const detections = mapped.map((d) => ({
      box: d.box,
      className: d.className,
      score: d.score,
      label: d.cocoClass,
    }));
    const classScores = mapped.map((d) => ontologyScores(d.classScores));
    return {
      run: { path: 'closed_set', status: 'ran', detections, model },
      classScores,
      dropped,
      inferenceMs,
      slicing,
    };
  };
  return {
    model,
    prepare,
    infer,
    detect: async (frame, slicing) => infer(await prepare(frame, slicing)),
    alive: thread.alive,
    release: () => thread.release(),
  };
}

/** A tile's detections in frame pixels, less those an inner tile edge cut (a neighbour or the whole frame sees them whole). */
function tileBoxes(boxes: ClassBox[], t: TileInput, frame: Letterbox): ClassBox[] {
  const margin = CUT_MARGIN_PX / t.letterbox.scale;
  return boxes
    .map((b) => ({ ...b, box: tileToFrame(b.box, t.tile) }))
    .filter((b) => !cutByTile(b.box, t.tile, frame, margin));
}

/**
 * The whole frame's detections and its tiles' merged by weighted box fusion, the views of one
 * frame treated as runs of one path: same-class boxes of different views that overlap by the
 * model's own NMS IoU are one object, with the score-weighted box and the best view's score and
 * class scores; each says whether the whole frame saw it.
 */
function mergeViews(
  whole: ClassBox[],
  tiles: ClassBox[][],
  iouThreshold: number,
): Array<ClassBox & { whole: boolean }> {
  const byBox = new Map<Box, ClassBox>();
  const fromWhole = new Set<Box>(whole.map((b) => b.box));
  const runs: PathRun[] = [whole, ...tiles].map((view) => ({
    path: 'closed_set',
    status: 'ran',
    detections: view.map((b) => {
      byBox.set(b.box, b);
      return { box: b.box, score: b.score, className: COCO_CLASSES[b.classIndex]! };
    }),
  }));
  return fuseDetections(runs, { iouThreshold, acrossViews: true }).map((o) => {
    const best = o.members.reduce((a, m) => (m.score > a.score ? m : a));
    return {
      ...byBox.get(best.box)!,
      box: o.box,
      score: o.conf,
      whole: o.members.some((m) => fromWhole.has(m.box)),
    };
  });
}

/**
 * A closed-set detector that loads on first use and stays loaded for the life of the process:
 * the gpu worker keeps its model between sessions (a session then starts without loading it), the
 * API's box classifier between requests. A model that is missing or does not fit refuses by name
 * and the next call tries again; a detector whose inference thread died is loaded afresh.
 */
export interface ResidentClosedSetDetector {
  acquire(): Promise<ClosedSetDetector>;
  close(): Promise<void>;
}

export function residentClosedSetDetector(config: DetectConfig): ResidentClosedSetDetector {
  let loading: Promise<ClosedSetDetector> | undefined;
  const load = (): Promise<ClosedSetDetector> => (loading = loadClosedSetDetector(config));
  return {
    async acquire() {
      const current = loading;
      if (!current) return load();
      const detector = await current.catch(() => undefined);
      if (detector?.alive()) return detector;
      // Only the first caller to find it failed or dead loads again; the others wait on that load.
      return loading === current ? load() : loading!;
    },
    async close() {
      const detector = await loading?.catch(() => undefined);
      loading = undefined;
      if (detector?.alive()) await detector.release();
    },
  };
}
