import { RefusedError } from '../errors';
import { YOLOX_STRIDES } from '../detect/yolox';
import { dimsOf, findInitializer, initializerFloats, nodesOf, type OnnxModel } from '../onnx/graph';
import type { AnchorGrid } from './assign';
import { sigmoid, type HeadLevel, type HeadsTrained } from './loss';

/**
 * Where a YOLOX-family head's prediction convolutions are in an ONNX graph. YOLOX exports keep
 * PyTorch's parameter names as initializer names, so the head is found by them: per level k the
 * 1×1 convolutions whose weights are `head.cls_preds.k.weight` and `head.obj_preds.k.weight`.
 * Their input tensors (the features the trainer learns from) are whatever the graph calls them.
 */
export class NotYoloxDetectorError extends RefusedError {}

export interface HeadConv {
  weight: string;
  bias: string;
  /** The tensor the convolution reads. */
  input: string;
}

export interface YoloxHead {
  inputName: string;
  outputName: string;
  inputSize: number;
  classes: number;
  channels: number;
  strides: readonly number[];
  /** Per level, finest first. */
  levels: Array<{ cls: HeadConv; obj: HeadConv }>;
}

const refuse = (why: string): never => {
  throw new NotYoloxDetectorError(`not a YOLOX-family detector: ${why}`);
};

function convOf(model: OnnxModel, weight: string): HeadConv | undefined {
  const node = nodesOf(model).find((n) => n.opType === 'Conv' && n.input?.[1] === weight);
  if (!node) return undefined;
  const [input, , bias] = node.input ?? [];
  if (!input || !bias) return refuse(`the convolution of ${weight} has no input or no bias`);
  return { weight, bias, input };
}

/** The head of `model`, or a NotYoloxDetectorError naming what is missing. */
export function yoloxHeadOf(model: OnnxModel): YoloxHead {
  const levels: YoloxHead['levels'] = [];
  for (let k = 0; ; k++) {
    const cls = convOf(model, `head.cls_preds.${k}.weight`);
    if (!cls) break;
    const obj = convOf(model, `head.obj_preds.${k}.weight`) ?? refuse(`no head.obj_preds.${k} convolution`);
    levels.push({ cls, obj });
  }
  if (!levels.length) refuse('no head.cls_preds.* convolutions');
  if (levels.length !== YOLOX_STRIDES.length)
    refuse(
      `${levels.length} head levels; YOLOX has ${YOLOX_STRIDES.length} (strides ${YOLOX_STRIDES.join(', ')})`,
    );
  const [classes, channels] = dimsOf(findInitializer(model, levels[0]!.cls.weight));
  for (const { cls, obj } of levels) {
    const c = dimsOf(findInitializer(model, cls.weight)).join('×');
    const o = dimsOf(findInitializer(model, obj.weight)).join('×');
    if (c !== `${classes}×${channels}×1×1` || o !== `1×${channels}×1×1`)
      refuse(`the prediction convolutions are ${c} and ${o}, not 1×1 convolutions of one width`);
  }
  const graph = model.graph!;
  const initialised = new Set((graph.initializer ?? []).map((i) => i.name));
  const input = (graph.input ?? []).find((i) => !initialised.has(i.name));
  const shape = (input?.type?.tensorType?.shape?.dim ?? []).map((d) => Number(d.dimValue ?? NaN));
  const [n, ch, h, w] = shape;
  if (!input?.name || shape.length !== 4 || n !== 1 || ch !== 3 || h !== w || !(h! % 32 === 0 && h! > 0))
    refuse(`its input is ${JSON.stringify(shape)}, not a fixed 1×3×S×S`);
  const outputName = graph.output?.[0]?.name ?? refuse('it has no output');
  return {
    inputName: input!.name!,
    outputName,
    inputSize: h!,
    classes: classes!,
    channels: channels!,
    strides: YOLOX_STRIDES,
    levels,
  };
}

/** The head's current weights, one HeadLevel per level (copies). */
export function headWeights(model: OnnxModel, head: YoloxHead): HeadLevel[] {
  const copy = (name: string) => initializerFloats(model, name).slice();
  return head.levels.map(({ cls, obj }) => ({
    clsWeight: copy(cls.weight),
    clsBias: copy(cls.bias),
    objWeight: copy(obj.weight),
    objBias: copy(obj.bias),
  }));
}

/** Initializer name → the part of `levels` it names, for the parts that learn (weights, gradients alike). */
export function trainedInitializers<T>(
  head: YoloxHead,
  levels: ReadonlyArray<Record<keyof HeadLevel, T>>,
  heads: HeadsTrained,
): Map<string, T> {
  const out = new Map<string, T>();
  head.levels.forEach(({ cls, obj }, l) => {
    const p = levels[l]!;
    if (heads.cls) out.set(cls.weight, p.clsWeight).set(cls.bias, p.clsBias);
    if (heads.obj) out.set(obj.weight, p.objWeight).set(obj.bias, p.objBias);
  });
  return out;
}

/** One image's features: per level, the class and regression branches' maps (channels × cells, planar). */
export interface LevelFeatures {
  cls: Float32Array[];
  obj: Float32Array[];
}

/**
 * The head's raw output (anchors × (5 + classes)) under `levels`: objectness and class columns
 * recomputed from the features for the parts that learn, box columns the parent's (the regression
 * does not learn). Class columns are recomputed only where objectness reaches `minScore` — the
 * decoder drops every other anchor unread — and keep the parent's values elsewhere.
 */
export function headOutput(
  parentRaw: Float32Array,
  features: LevelFeatures,
  levels: readonly HeadLevel[],
  grid: AnchorGrid,
  heads: HeadsTrained,
  minScore: number,
): Float32Array {
  const out = parentRaw.slice();
  const classes = levels[0]!.clsBias.length;
  const stride = 5 + classes;
  const channels = levels[0]!.objWeight.length;
  grid.strides.forEach((_, l) => {
    const start = grid.levelStart[l]!;
    const cells = (grid.levelStart[l + 1] ?? grid.count) - start;
    const p = levels[l]!;
    if (heads.obj) {
      const z = new Float64Array(cells).fill(p.objBias[0]!);
      const map = features.obj[l]!;
      for (let c = 0; c < channels; c++) {
        const w = p.objWeight[c]!;
        const row = c * cells;
        for (let i = 0; i < cells; i++) z[i] = z[i]! + w * map[row + i]!;
      }
      for (let i = 0; i < cells; i++) out[(start + i) * stride + 4] = sigmoid(z[i]!);
    }
    if (!heads.cls) return;
    const map = features.cls[l]!;
    const f = new Float32Array(channels);
    for (let i = 0; i < cells; i++) {
      const o = (start + i) * stride;
      if (out[o + 4]! < minScore) continue;
      // Gathered once, read by every class: the map is planar, an anchor's channels lie apart.
      gatherFeatures(map, cells, i, channels, f, 0);
      for (let k = 0; k < classes; k++) {
        let z = p.clsBias[k]!;
        const w = k * channels;
        for (let c = 0; c < channels; c++) z += p.clsWeight[w + c]! * f[c]!;
        out[o + 5 + k] = sigmoid(z);
      }
    }
  });
  return out;
}

/** Copies anchor `anchor`'s feature vector out of a planar level map into `into` at `at`. */
export function gatherFeatures(
  map: Float32Array,
  cells: number,
  index: number,
  channels: number,
  into: Float32Array,
  at: number,
): void {
  for (let c = 0; c < channels; c++) into[at + c] = map[c * cells + index]!;
}
