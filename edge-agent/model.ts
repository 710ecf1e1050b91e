import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import * as ort from 'onnxruntime-node';
import sharp from 'sharp';
import { decodeYolox, letterbox, yoloxAnchorCount, yoloxInput, type Letterbox } from '../core/detect/yolox';

/**
 * The model side of the edge agent: frames from a folder, an artifact verified against its
 * SHA-256, loaded with onnxruntime-node and run the way the platform's closed-set path runs it
 * (core/detect/yolox: letterbox, planar BGR input, grid decode and NMS).
 */

export const sha256Hex = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex');

/** One frame of the folder: its encoded bytes, size, and its pixels scaled per input size (decoded once). */
export interface Frame {
  file: string;
  width: number;
  height: number;
  bytes: Buffer;
  scaled: Map<number, { lb: Letterbox; rgb: Buffer }>;
}

export async function readFrames(dir: string): Promise<Frame[]> {
  const files = (await fs.readdir(dir)).filter((f) => /\.(jpe?g|png)$/i.test(f)).sort();
  if (files.length === 0) throw new Error(`no JPEG or PNG frames in ${dir}`);
  return Promise.all(
    files.map(async (file) => {
      const bytes = await fs.readFile(path.join(dir, file));
      const meta = await sharp(bytes).metadata();
      if (!meta.width || !meta.height) throw new Error(`frame ${file} has no size`);
      return { file, width: meta.width, height: meta.height, bytes, scaled: new Map() };
    }),
  );
}

/** The frame scaled into a model input of `size`: the camera's work, done once per frame and size and never timed. */
async function scaledFor(frame: Frame, size: number): Promise<{ lb: Letterbox; rgb: Buffer }> {
  const known = frame.scaled.get(size);
  if (known) return known;
  const lb = letterbox(frame.width, frame.height, size);
  const rgb = await sharp(frame.bytes)
    .removeAlpha()
    .toColourspace('srgb')
    .resize(lb.scaledWidth, lb.scaledHeight, { fit: 'fill' })
    .raw()
    .toBuffer();
  const entry = { lb, rgb };
  frame.scaled.set(size, entry);
  return entry;
}

export interface LoadedModel {
  artifactId: string;
  sha256: string;
  inputSize: number;
  /** Input tensor, inference and decode of one frame: its time in ms and the boxes it found. */
  run(frame: Frame): Promise<{ ms: number; boxes: number }>;
  release(): Promise<void>;
}

const shape = (m: ort.InferenceSession.ValueMetadata | undefined): Array<number | string> =>
  m?.isTensor ? [...m.shape] : [];

/**
 * Loads verified model bytes; refuses by name a model whose tensors are not YOLOX's (1×3×S×S in,
 * 1×A×(5 + classes) out), since its output would decode into nonsense. One warm-up run, not
 * counted, so the first measured frame does not carry the session's allocations.
 */
export async function loadModel(
  artifact: { artifactId: string; sha256: string },
  bytes: Buffer,
  opts: { threads: number; minScore: number; nmsIou: number; warmUp: Frame },
): Promise<LoadedModel> {
  const session = await ort.InferenceSession.create(bytes, {
    executionProviders: ['cpu'],
    intraOpNumThreads: opts.threads,
    interOpNumThreads: 1,
  });
  try {
    const [input, output] = [session.inputMetadata[0], session.outputMetadata[0]];
    const [n, c, h, w] = shape(input);
    const out = shape(output);
    const size = typeof h === 'number' ? h : NaN;
    const classes = typeof out[2] === 'number' ? out[2] - 5 : NaN;
    if (!(n === 1 && c === 3 && h === w && size > 0 && out[1] === yoloxAnchorCount(size) && classes > 0))
      throw new Error(
        `the model's tensors are not YOLOX's: input ${JSON.stringify(shape(input))}, output ${JSON.stringify(out)}; expected 1×3×S×S and 1×A×(5 + classes)`,
      );
    const run = async (frame: Frame) => {
      const { lb, rgb } = await scaledFor(frame, size);
      const started = performance.now();
      const result = await session.run({
        [input!.name]: new ort.Tensor('float32', yoloxInput(rgb, lb), [1, 3, size, size]),
      });
      const head = result[output!.name]!.data as Float32Array;
      const boxes = decodeYolox(head, lb, classes, { minScore: opts.minScore, nmsIou: opts.nmsIou });
      return { ms: performance.now() - started, boxes: boxes.length };
    };
    await run(opts.warmUp);
    return { ...artifact, inputSize: size, run, release: () => session.release() };
  } catch (err) {
    await session.release();
    throw err;
  }
}
