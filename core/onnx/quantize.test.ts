import fs from 'node:fs';
import path from 'node:path';
import { onnx } from 'onnx-proto';
import { initializerFloats, nodesOf, readOnnx, writeOnnx, type OnnxModel } from './graph';
import { convWeightNames, fromHalf, quantizeConvWeights, toHalf } from './quantize';

const YOLOX = path.resolve(__dirname, '../../../shared/models/yolox_nano.onnx');
const load = (): OnnxModel => readOnnx(fs.readFileSync(YOLOX));
const initializer = (m: OnnxModel, name: string) => m.graph!.initializer!.find((t) => t.name === name);
const WEIGHT = 'head.cls_preds.0.weight';

describe('half precision', () => {
  it('round-trips values a half can hold and rounds the rest to the nearest half', () => {
    for (const v of [0, 1, -2.5, 0.333251953125, 65504, 2 ** -24, -(2 ** -14)])
      expect(fromHalf(toHalf(v))).toBe(v);
    expect(fromHalf(toHalf(1 + 2 ** -12))).toBe(1); // below half an ulp: down to 1
    expect(fromHalf(toHalf(70000))).toBe(Infinity);
    expect(fromHalf(toHalf(2 ** -26))).toBe(0);
    expect(Number.isNaN(fromHalf(toHalf(NaN)))).toBe(true);
  });
});

describe('Conv weights at reduced precision', () => {
  it('stores int8 codes with one scale per output channel, under opset 13, dequantized within half a step', () => {
    const model = load();
    const before = initializerFloats(model, WEIGHT);
    const report = quantizeConvWeights(model, 'int8');
    expect(report).toMatchObject({ precision: 'int8', scheme: 'per-channel', opset: 13, tensors: 113 });
    const again = readOnnx(writeOnnx(model));
    expect(initializer(again, WEIGHT)).toBeUndefined();
    const codes = initializer(again, `${WEIGHT}.int8`)!;
    expect(codes.dataType).toBe(onnx.TensorProto.DataType.INT8);
    const scales = initializerFloats(again, `${WEIGHT}.scale`);
    expect(scales.length).toBe(80);
    const q = new Int8Array(new Uint8Array(codes.rawData!).buffer);
    const per = before.length / 80;
    for (let i = 0; i < before.length; i++)
      expect(Math.abs(q[i]! * scales[Math.floor(i / per)]! - before[i]!)).toBeLessThanOrEqual(
        scales[Math.floor(i / per)]! / 2 + 1e-7,
      );
    const conv = nodesOf(again).find((n) => n.opType === 'Conv' && n.input![1]!.startsWith(WEIGHT))!;
    expect(conv.input![1]).toBe(`${WEIGHT}.dequantized`);
    const dq = nodesOf(again).find((n) => n.output![0] === `${WEIGHT}.dequantized`)!;
    expect(dq.opType).toBe('DequantizeLinear');
    expect(dq.attribute!.map((a) => [a.name, Number(a.i)])).toEqual([['axis', 0]]);
    expect(convWeightNames(again)).toEqual([]);
    expect(writeOnnx(again).length).toBeLessThan(fs.statSync(YOLOX).size / 3);
  });

  it('keeps the opset and uses per-tensor scales when raising it would change an op of the graph', () => {
    const model = load();
    model.graph!.node!.push(
      onnx.NodeProto.create({
        opType: 'Unsqueeze',
        input: ['output'],
        output: ['unsqueezed'],
        attribute: [],
      }),
    );
    const report = quantizeConvWeights(model, 'int8');
    expect(report).toMatchObject({ scheme: 'per-tensor', opset: 11 });
    expect(initializer(model, `${WEIGHT}.scale`)!.dims).toEqual([]);
  });

  it('stores float16 weights widened by a Cast', () => {
    const model = load();
    const before = initializerFloats(model, WEIGHT);
    const report = quantizeConvWeights(model, 'fp16');
    expect(report).toMatchObject({ scheme: 'cast', opset: 11 });
    const half = initializer(model, `${WEIGHT}.fp16`)!;
    expect(half.dataType).toBe(onnx.TensorProto.DataType.FLOAT16);
    const values = new Uint16Array(new Uint8Array(half.rawData!).buffer);
    values.forEach((h, i) => expect(fromHalf(h)).toBeCloseTo(before[i]!, 3));
    const cast = nodesOf(model).find((n) => n.output![0] === `${WEIGHT}.fp32`)!;
    expect(cast).toMatchObject({
      opType: 'Cast',
      attribute: [expect.objectContaining({ name: 'to', i: 1 })],
    });
  });

  it('refuses a model with no Conv weight to reduce', () => {
    const model = load();
    quantizeConvWeights(model, 'fp16');
    expect(() => quantizeConvWeights(model, 'int8')).toThrow('no float32 Conv weight');
  });
});
