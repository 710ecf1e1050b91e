import { onnx } from 'onnx-proto';
import { dimsOf, initializerFloats, nodesOf, OnnxGraphError, type OnnxModel } from './graph';

/**
 * Reduced-precision weights for the edge forge (docs/edgeforge.md): every Conv weight is stored as
 * int8 with its scales (dequantized by a `DequantizeLinear` node) or as float16 (widened by a
 * `Cast`), so the file shrinks while the graph still computes in float32 — onnxruntime folds the
 * widening once at load. Activations are not quantized: that needs a calibration set and a
 * runtime with integer kernels on the target, which this forge does not claim.
 */

export type WeightPrecision = 'int8' | 'fp16';

/**
 * Ops whose signature changed incompatibly between opsets 11 and 13 (attributes became inputs,
 * or the op was removed): a graph using one of them keeps its opset and gets per-tensor int8 scales.
 */
const CHANGED_BY_OPSET_13 = new Set(['Split', 'Squeeze', 'Unsqueeze', 'ReduceSum', 'Upsample', 'Scatter']);
/** Per-channel `DequantizeLinear` (its `axis` attribute) exists from opset 13. */
const PER_CHANNEL_OPSET = 13;
/** The IR version that goes with opset 13. */
const PER_CHANNEL_IR = 7;
const INT8_MAX = 127;

export interface QuantizeReport {
  precision: WeightPrecision;
  /** per-channel | per-tensor (int8), cast (fp16). */
  scheme: 'per-channel' | 'per-tensor' | 'cast';
  /** The default-domain opset after the change (raised to 13 for per-channel scales when the graph allows). */
  opset: number;
  tensors: number;
  values: number;
  /** Largest |w − dequantized w| over every weight changed. */
  max_abs_error: number;
}

const graphOf = (model: OnnxModel): onnx.IGraphProto => {
  if (!model.graph) throw new OnnxGraphError('the model holds no graph');
  return model.graph;
};

/** Ops whose input 1 is a convolution weight: ONNX's Conv and onnxruntime's fusion of Conv with its activation. */
const CONV_OPS = new Set(['Conv', 'FusedConv']);

/** The float32 initializers that feed a convolution as its weight (input 1). */
export function convWeightNames(model: OnnxModel): string[] {
  const floats = new Set(
    (graphOf(model).initializer ?? [])
      .filter((t) => t.dataType === onnx.TensorProto.DataType.FLOAT)
      .map((t) => t.name!),
  );
  const names = nodesOf(model)
    .filter((n) => CONV_OPS.has(n.opType ?? ''))
    .map((n) => n.input?.[1])
    .filter((name): name is string => !!name && floats.has(name));
  return [...new Set(names)];
}

const defaultOpset = (model: OnnxModel): onnx.IOperatorSetIdProto => {
  const entry = (model.opsetImport ?? []).find((o) => !o.domain);
  if (!entry) throw new OnnxGraphError('the model imports no default-domain opset');
  return entry;
};

/** Whether int8 scales can be per output channel: opset 13 already, or a graph that stays valid when raised to it. */
function perChannelPossible(model: OnnxModel): boolean {
  if (Number(defaultOpset(model).version) >= PER_CHANNEL_OPSET) return true;
  return !nodesOf(model).some((n) => CHANGED_BY_OPSET_13.has(n.opType ?? ''));
}

/** float32 → IEEE 754 half, rounded to nearest even (Float16Array is not in this Node). */
export function toHalf(value: number): number {
  const f32 = new Float32Array([value]);
  const bits = new Uint32Array(f32.buffer)[0]!;
  const sign = (bits >>> 16) & 0x8000;
  const exp = (bits >>> 23) & 0xff;
  const mant = bits & 0x7fffff;
  if (exp === 0xff) return sign | 0x7c00 | (mant ? 0x200 : 0);
  const e = exp - 127 + 15;
  if (e >= 0x1f) return sign | 0x7c00;
  if (e <= 0) {
    if (e < -10) return sign;
    const m = mant | 0x800000;
    const shift = 14 - e;
    const half = m >>> shift;
    const rest = m & ((1 << shift) - 1);
    const mid = 1 << (shift - 1);
    return sign | (rest > mid || (rest === mid && half & 1) ? half + 1 : half);
  }
  const half = (e << 10) | (mant >>> 13);
  const rest = mant & 0x1fff;
  return sign | (rest > 0x1000 || (rest === 0x1000 && half & 1) ? half + 1 : half);
}

/** IEEE 754 half → float. */
export function fromHalf(h: number): number {
  const sign = h & 0x8000 ? -1 : 1;
  const exp = (h >>> 10) & 0x1f;
  const mant = h & 0x3ff;
  if (exp === 0) return sign * mant * 2 ** -24;
  if (exp === 0x1f) return mant ? NaN : sign * Infinity;
  return sign * (1 + mant / 1024) * 2 ** (exp - 15);
}

/** Symmetric int8 of one block of weights: the scale and the codes. */
function quantizeBlock(w: Float32Array, scales: Float32Array, at: number, codes: Int8Array): number {
  let max = 0;
  for (const v of w) max = Math.max(max, Math.abs(v));
  // An all-zero block (a pruned channel) keeps zeros under any positive scale.
  const scale = max > 0 ? max / INT8_MAX : 1;
  scales[at] = scale;
  let err = 0;
  w.forEach((v, i) => {
    const q = Math.max(-INT8_MAX, Math.min(INT8_MAX, Math.round(v / scale)));
    codes[i] = q;
    err = Math.max(err, Math.abs(v - Math.fround(q * Math.fround(scale))));
  });
  return err;
}

const bytesOf = (a: ArrayBufferView): Uint8Array =>
  new Uint8Array(a.buffer.slice(a.byteOffset, a.byteOffset + a.byteLength));

const tensor = (name: string, dataType: number, dims: number[], data: ArrayBufferView) =>
  onnx.TensorProto.create({ name, dataType, dims, rawData: bytesOf(data) });

/**
 * Replaces the float32 initializer `name` by `replacement` initializers and one node whose output
 * every former reader now takes.
 */
function swapInitializer(
  graph: onnx.IGraphProto,
  name: string,
  replacement: onnx.ITensorProto[],
  node: onnx.INodeProto,
): void {
  const output = node.output![0]!;
  for (const n of graph.node ?? []) n.input = (n.input ?? []).map((i) => (i === name ? output : i));
  graph.initializer = (graph.initializer ?? []).filter((t) => t.name !== name).concat(replacement);
  // Old IR versions list initializers among the graph inputs too.
  graph.input = (graph.input ?? []).filter((i) => i.name !== name);
  graph.node = [node, ...(graph.node ?? [])];
}

/**
 * Stores every Conv weight of the model in `precision` (the model is changed in place) and says
 * what it did. Biases and every other tensor stay float32.
 */
export function quantizeConvWeights(model: OnnxModel, precision: WeightPrecision): QuantizeReport {
  const graph = graphOf(model);
  const names = convWeightNames(model);
  if (!names.length) throw new OnnxGraphError('the model has no float32 Conv weight to quantize');
  const perChannel = precision === 'int8' && perChannelPossible(model);
  if (perChannel && Number(defaultOpset(model).version) < PER_CHANNEL_OPSET) {
    defaultOpset(model).version = PER_CHANNEL_OPSET;
    if (Number(model.irVersion ?? 0) < PER_CHANNEL_IR) model.irVersion = PER_CHANNEL_IR;
  }
  let values = 0;
  let maxErr = 0;
  for (const name of names) {
    const w = initializerFloats(model, name);
    const dims = dimsOf(graph.initializer!.find((t) => t.name === name)!);
    values += w.length;
    if (precision === 'fp16') {
      const half = Uint16Array.from(w, toHalf);
      half.forEach((h, i) => (maxErr = Math.max(maxErr, Math.abs(w[i]! - fromHalf(h)))));
      swapInitializer(
        graph,
        name,
        [tensor(`${name}.fp16`, onnx.TensorProto.DataType.FLOAT16, dims, half)],
        onnx.NodeProto.create({
          name: `${name}.cast`,
          opType: 'Cast',
          input: [`${name}.fp16`],
          output: [`${name}.fp32`],
          attribute: [
            { name: 'to', type: onnx.AttributeProto.AttributeType.INT, i: onnx.TensorProto.DataType.FLOAT },
          ],
        }),
      );
      continue;
    }
    const channels = perChannel ? dims[0]! : 1;
    const per = w.length / channels;
    const scales = new Float32Array(channels);
    const codes = new Int8Array(w.length);
    for (let c = 0; c < channels; c++) {
      const err = quantizeBlock(w.subarray(c * per, (c + 1) * per), scales, c, codes.subarray(c * per));
      maxErr = Math.max(maxErr, err);
    }
    const scaleDims = perChannel ? [channels] : [];
    swapInitializer(
      graph,
      name,
      [
        tensor(`${name}.int8`, onnx.TensorProto.DataType.INT8, dims, codes),
        tensor(`${name}.scale`, onnx.TensorProto.DataType.FLOAT, scaleDims, scales),
        tensor(`${name}.zero`, onnx.TensorProto.DataType.INT8, scaleDims, new Int8Array(channels)),
      ],
      onnx.NodeProto.create({
        name: `${name}.dequantize`,
        opType: 'DequantizeLinear',
        input: [`${name}.int8`, `${name}.scale`, `${name}.zero`],
        output: [`${name}.dequantized`],
        attribute: perChannel ? [{ name: 'axis', type: onnx.AttributeProto.AttributeType.INT, i: 0 }] : [],
      }),
    );
  }
  return {
    precision,
    scheme: precision === 'fp16' ? 'cast' : perChannel ? 'per-channel' : 'per-tensor',
    opset: Number(defaultOpset(model).version),
    tensors: names.length,
    values,
    max_abs_error: maxErr,
  };
}
