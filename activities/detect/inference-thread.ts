import { Worker } from 'node:worker_threads';
import type * as ort from 'onnxruntime-node';

/**
 * onnxruntime-node runs a model synchronously on the calling thread (its `run` is a promise around
 * a blocking call): on the main thread every inference would stall the frame reads, decodes and
 * commits that are meant to overlap it, and two frames "in flight" would still take turns on one
 * core. So sessions live on threads of their own. Plain JavaScript, so that it starts the same
 * under node, tsx and jest; tensors travel as transferred buffers, not copies. A thread holds any
 * number of named sessions; its requests queue and run one at a time, so a caller can hand over
 * the next input while the model still works on this one; each answer carries the run's own time.
 */
const INFERENCE_THREAD = `
const { parentPort, workerData } = require('node:worker_threads');
const ort = require(workerData.ort);
const sessions = new Map();
let queue = Promise.resolve();
const handle = async (m) => {
  try {
    if (m.op === 'open') {
      const session = await ort.InferenceSession.create(m.bytes, m.options);
      sessions.set(m.name, session);
      parentPort.postMessage({ id: m.id, inputNames: session.inputNames, outputNames: session.outputNames });
    } else if (m.op === 'run') {
      const session = sessions.get(m.name);
      const feeds = {};
      for (const [k, t] of Object.entries(m.feeds)) feeds[k] = new ort.Tensor('float32', t.data, t.dims);
      const started = performance.now();
      const out = await session.run(feeds);
      const ms = performance.now() - started;
      const outputs = {};
      const buffers = [];
      for (const k of m.outputs ?? session.outputNames) {
        outputs[k] = { data: out[k].data, dims: out[k].dims };
        buffers.push(out[k].data.buffer);
      }
      parentPort.postMessage({ id: m.id, outputs, ms }, buffers);
    } else if (m.op === 'release') {
      for (const s of sessions.values()) await s.release();
      sessions.clear();
      parentPort.postMessage({ id: m.id });
    }
  } catch (err) {
    parentPort.postMessage({ id: m.id, error: String((err && err.message) || err) });
  }
};
parentPort.on('message', (m) => { queue = queue.then(() => handle(m)); });`;

/** A float32 tensor crossing threads. */
export interface ThreadTensor {
  data: Float32Array;
  dims: readonly number[];
}

interface ThreadAnswer {
  id: number;
  error?: string;
  outputs?: Record<string, ThreadTensor>;
  inputNames?: string[];
  outputNames?: string[];
  /** A run's duration on the thread (ms). */
  ms?: number;
}

export interface InferenceThread {
  /** Opens a session under `name` from a model file's bytes; its tensor names. */
  open(
    name: string,
    bytes: Uint8Array,
    options: ort.InferenceSession.SessionOptions,
  ): Promise<{ inputNames: string[]; outputNames: string[] }>;
  /**
   * Runs session `name` on `feeds`, whose buffers move to the thread (an input runs once); the
   * outputs named (all when none are), and the run's time on the thread.
   */
  run(
    name: string,
    feeds: Record<string, ThreadTensor>,
    outputs?: readonly string[],
  ): Promise<{ outputs: Record<string, ThreadTensor>; ms: number }>;
  /** Requests sent and not yet answered. */
  pending(): number;
  alive(): boolean;
  release(): Promise<void>;
  terminate(): Promise<void>;
}

/**
 * An inference thread, started at once so that loading onnxruntime there overlaps the caller's
 * own model checks. `label` names it in its errors. Requests are matched to answers by id.
 */
export function startInferenceThread(label: string): InferenceThread {
  const thread = new Worker(INFERENCE_THREAD, {
    eval: true,
    workerData: { ort: require.resolve('onnxruntime-node') },
  });
  const waiting = new Map<number, { resolve: (a: ThreadAnswer) => void; reject: (e: Error) => void }>();
  let lastId = 0;
  let exited = false;
  // The thread keeps the process alive only while an answer is awaited: a model its owner never
  // releases (the API's lazily loaded classifier, the PII pass's resident models) must not stop
  // the process from exiting.
  thread.unref();
  const settled = (): void => {
    if (waiting.size === 0) thread.unref();
  };
  const failAll = (err: Error) => {
    for (const w of waiting.values()) w.reject(err);
    waiting.clear();
    settled();
  };
  thread.on('message', (a: ThreadAnswer) => {
    const w = waiting.get(a.id);
    waiting.delete(a.id);
    settled();
    if (a.error !== undefined) w?.reject(new Error(`${label} inference: ${a.error}`));
    else w?.resolve(a);
  });
  thread.on('error', failAll);
  thread.on('exit', (code) => {
    exited = true;
    failAll(new Error(`${label} inference thread exited (${code})`));
  });
  const ask = (message: Record<string, unknown>, transfer: ArrayBuffer[] = []) =>
    new Promise<ThreadAnswer>((resolve, reject) => {
      if (exited) return reject(new Error(`${label} inference thread has exited; load the model again`));
      const id = ++lastId;
      waiting.set(id, { resolve, reject });
      thread.ref();
      thread.postMessage({ ...message, id }, transfer);
    });
  return {
    async open(name, bytes, options) {
      const a = await ask({ op: 'open', name, bytes, options });
      return { inputNames: a.inputNames!, outputNames: a.outputNames! };
    },
    async run(name, feeds, outputs) {
      const transfer = Object.values(feeds).map((t) => t.data.buffer as ArrayBuffer);
      const a = await ask({ op: 'run', name, feeds, outputs }, transfer);
      return { outputs: a.outputs!, ms: a.ms! };
    },
    pending: () => waiting.size,
    alive: (): boolean => !exited,
    async release(): Promise<void> {
      await ask({ op: 'release' }).finally(() => thread.terminate());
    },
    terminate: async (): Promise<void> => void (await thread.terminate()),
  };
}
