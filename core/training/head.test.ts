import fs from 'node:fs';
import path from 'node:path';
import { readOnnx } from '../onnx/graph';
import { anchorGrid } from './assign';
import { NotYoloxDetectorError, headOutput, headWeights, trainedInitializers, yoloxHeadOf } from './head';
import { sigmoid, type HeadLevel } from './loss';

const YOLOX = path.resolve(__dirname, '../../../shared/models/yolox_nano.onnx');

describe('finding a YOLOX head', () => {
  it('finds the prediction convolutions and their inputs by the weights’ names', () => {
    const model = readOnnx(fs.readFileSync(YOLOX));
    const head = yoloxHeadOf(model);
    expect(head).toMatchObject({
      inputName: 'images',
      outputName: 'output',
      inputSize: 416,
      classes: 80,
      channels: 64,
    });
    expect(head.levels.map((l) => [l.cls.input, l.obj.input])).toEqual([
      ['input.631', 'input.663'],
      ['input.703', 'input.735'],
      ['input.775', 'input.807'],
    ]);
    expect(head.levels[2]!.obj).toMatchObject({
      weight: 'head.obj_preds.2.weight',
      bias: 'head.obj_preds.2.bias',
    });
    const weights = headWeights(model, head);
    expect(weights[0]!.clsWeight).toHaveLength(80 * 64);
    expect([...trainedInitializers(head, weights, { cls: false, obj: true }).keys()]).toEqual([
      'head.obj_preds.0.weight',
      'head.obj_preds.0.bias',
      'head.obj_preds.1.weight',
      'head.obj_preds.1.bias',
      'head.obj_preds.2.weight',
      'head.obj_preds.2.bias',
    ]);
  });

  it('refuses by name a model without head.cls_preds convolutions', () => {
    const model = readOnnx(fs.readFileSync(YOLOX));
    // The same network with its class predictors under another name: not a head this trainer knows.
    for (const t of model.graph!.initializer!) t.name = t.name!.replace('head.cls_preds', 'head.class_out');
    for (const n of model.graph!.node!)
      n.input = n.input!.map((i) => i.replace('head.cls_preds', 'head.class_out'));
    expect(() => yoloxHeadOf(model)).toThrow(NotYoloxDetectorError);
    expect(() => yoloxHeadOf(model)).toThrow('not a YOLOX-family detector: no head.cls_preds.* convolutions');
  });
});

describe('the head’s output from features', () => {
  // A 32-pixel input: 16 + 4 + 1 anchors, 2 classes, 3 channels.
  const grid = anchorGrid(32, [8, 16, 32]);
  const cellsOf = [16, 4, 1];
  const levels: HeadLevel[] = [0, 1, 2].map((l) => ({
    clsWeight: Float32Array.from([1, 0, -1, 0.5, 0.5, 0.5].map((v) => v * (l + 1))),
    clsBias: Float32Array.from([0.1, -0.1]),
    objWeight: Float32Array.from([0.2, -0.3, 0.1 * l]),
    objBias: Float32Array.from([l - 1]),
  }));
  const feature = (l: number, c: number, i: number) => Math.sin(l * 7 + c * 3 + i);
  const maps = (shift: number) =>
    cellsOf.map((cells, l) =>
      Float32Array.from({ length: 3 * cells }, (_, j) => feature(l, (j / cells) | 0, (j % cells) + shift)),
    );
  const features = { cls: maps(0), obj: maps(100) };
  const parentRaw = Float32Array.from({ length: 21 * 7 }, (_, j) => (j % 7) / 10);

  it('recomputes objectness everywhere and class scores where objectness reaches the floor', () => {
    const out = headOutput(parentRaw, features, levels, grid, { cls: true, obj: true }, 0.5);
    for (let a = 0; a < 21; a++) {
      const l = grid.level[a]!;
      const i = a - grid.levelStart[l]!;
      const p = levels[l]!;
      const dot = (w: ArrayLike<number>, at: number, which: 'cls' | 'obj') =>
        [0, 1, 2].reduce((s, c) => s + w[at + c]! * features[which][l]![c * cellsOf[l]! + i]!, 0);
      const obj = sigmoid(p.objBias[0]! + dot(p.objWeight, 0, 'obj'));
      expect(out[a * 7 + 4]).toBeCloseTo(obj, 6);
      for (let k = 0; k < 2; k++) {
        const expected =
          obj >= 0.5 ? sigmoid(p.clsBias[k]! + dot(p.clsWeight, k * 3, 'cls')) : parentRaw[a * 7 + 5 + k]!;
        expect(out[a * 7 + 5 + k]).toBeCloseTo(expected, 6);
      }
      // The box columns stay the parent's: the regression does not learn.
      expect(Array.from(out.subarray(a * 7, a * 7 + 4))).toEqual(
        Array.from(parentRaw.subarray(a * 7, a * 7 + 4)),
      );
    }
  });

  it('leaves objectness the parent’s when only the class scores learn', () => {
    const out = headOutput(parentRaw, features, levels, grid, { cls: true, obj: false }, 0.3);
    for (let a = 0; a < 21; a++) {
      expect(out[a * 7 + 4]).toBe(parentRaw[a * 7 + 4]);
      expect(out[a * 7 + 5]).not.toBe(parentRaw[a * 7 + 5]); // the parent's objectness, 0.4, is over 0.3
    }
  });
});
