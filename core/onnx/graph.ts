import { onnx } from 'onnx-proto';

/**
 * Reading and rewriting ONNX model files (protobuf, via onnx-proto) without running them: the
 * trainer writes fine-tuned weights back into a graph, exposes intermediate tensors as outputs to
 * compute features, and the edge forge stores reduced-precision weights. Pure: bytes in, bytes out.
 */
export type OnnxModel = onnx.ModelProto;

export class OnnxGraphError extends Error {
  override name = 'OnnxGraphError';
}

export function readOnnx(bytes: Uint8Array): OnnxModel {
  try {
    const model = onnx.ModelProto.decode(bytes);
    if (!model.graph) throw new OnnxGraphError('the file holds no graph');
    return model;
  } catch (err) {
    if (err instanceof OnnxGraphError) throw err;
    throw new OnnxGraphError(`not an ONNX model: ${(err as Error).message}`);
  }
}

export function writeOnnx(model: OnnxModel): Uint8Array {
  return onnx.ModelProto.encode(model).finish();
}

const graphOf = (model: OnnxModel): onnx.IGraphProto => {
  if (!model.graph) throw new OnnxGraphError('the model holds no graph');
  return model.graph;
};

export function findInitializer(model: OnnxModel, name: string): onnx.ITensorProto {
  const t = (graphOf(model).initializer ?? []).find((i) => i.name === name);
  if (!t) throw new OnnxGraphError(`no initializer ${name}`);
  return t;
}

export const dimsOf = (t: onnx.ITensorProto): number[] => (t.dims ?? []).map((d) => Number(d));

/** A float32 initializer's values, from raw_data or float_data. */
export function initializerFloats(model: OnnxModel, name: string): Float32Array {
  const t = findInitializer(model, name);
  if (t.dataType !== onnx.TensorProto.DataType.FLOAT)
    throw new OnnxGraphError(`initializer ${name} is not float32 (data type ${t.dataType})`);
  if (t.rawData && t.rawData.length) {
    const copy = new Uint8Array(t.rawData); // aligned copy: raw_data may sit at any offset of the file
    return new Float32Array(copy.buffer, copy.byteOffset, copy.byteLength / 4);
  }
  return Float32Array.from(t.floatData ?? []);
}

/** Replaces a float32 initializer's values (same element count), stored as raw_data. */
export function setInitializerFloats(model: OnnxModel, name: string, values: Float32Array): void {
  const t = findInitializer(model, name);
  const expected = dimsOf(t).reduce((a, b) => a * b, 1);
  if (values.length !== expected)
    throw new OnnxGraphError(`initializer ${name} holds ${expected} values, not ${values.length}`);
  t.rawData = new Uint8Array(values.buffer.slice(values.byteOffset, values.byteOffset + values.byteLength));
  t.floatData = [];
}

/** Makes intermediate tensors graph outputs, so a session returns them beside the model's own outputs. */
export function exposeTensors(model: OnnxModel, names: readonly string[]): void {
  const graph = graphOf(model);
  const produced = new Set((graph.node ?? []).flatMap((n) => n.output ?? []));
  graph.output ??= [];
  for (const name of names) {
    if (!produced.has(name)) throw new OnnxGraphError(`no node produces ${name}`);
    if (graph.output.some((o) => o.name === name)) continue;
    graph.output.push(
      onnx.ValueInfoProto.create({
        name,
        type: { tensorType: { elemType: onnx.TensorProto.DataType.FLOAT } },
      }),
    );
  }
}

export function nodesOf(model: OnnxModel): onnx.INodeProto[] {
  return graphOf(model).node ?? [];
}
