import fs from 'node:fs';
import path from 'node:path';
import {
  OnnxGraphError,
  exposeTensors,
  initializerFloats,
  readOnnx,
  setInitializerFloats,
  writeOnnx,
} from './graph';

const YOLOX = path.resolve(__dirname, '../../../shared/models/yolox_nano.onnx');

describe('ONNX graph editing', () => {
  it('writes new weights back and reads them again after a round trip', () => {
    const model = readOnnx(fs.readFileSync(YOLOX));
    const before = initializerFloats(model, 'head.cls_preds.0.weight');
    expect(before.length).toBe(80 * 64);
    const next = before.map((v, i) => v + i * 1e-3);
    setInitializerFloats(model, 'head.cls_preds.0.weight', next);
    const again = readOnnx(writeOnnx(model));
    expect(Array.from(initializerFloats(again, 'head.cls_preds.0.weight'))).toEqual(Array.from(next));
    expect(Array.from(initializerFloats(again, 'head.cls_preds.1.weight'))).toEqual(
      Array.from(initializerFloats(readOnnx(fs.readFileSync(YOLOX)), 'head.cls_preds.1.weight')),
    );
  });

  it('refuses a wrong element count, an unknown tensor and bytes that are no model', () => {
    const model = readOnnx(fs.readFileSync(YOLOX));
    expect(() => setInitializerFloats(model, 'head.cls_preds.0.bias', new Float32Array(3))).toThrow(
      'holds 80 values, not 3',
    );
    expect(() => exposeTensors(model, ['no.such.tensor'])).toThrow(OnnxGraphError);
    expect(() => readOnnx(Buffer.from('definitely not protobuf \xff\xff\xff'))).toThrow(OnnxGraphError);
  });

  it('exposes an intermediate tensor as a graph output once', () => {
    const model = readOnnx(fs.readFileSync(YOLOX));
    exposeTensors(model, ['input.631', 'input.631']);
    expect(model.graph!.output!.map((o) => o.name)).toEqual(['output', 'input.631']);
  });
});
