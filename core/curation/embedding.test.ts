import { DEFAULT_EMBEDDING_MODEL, EMBEDDING_MODELS, tinyImageDescriptor } from './embedding';

const model = EMBEDDING_MODELS[DEFAULT_EMBEDDING_MODEL];
/** A 16×12 RGB picture: a horizontal gradient in red, a vertical one in blue, green flat. */
const picture = (offset = 0, gain = 1) =>
  Array.from({ length: model.dims }, (_, i) => {
    const pixel = Math.floor(i / 3);
    const [x, y] = [pixel % model.width, Math.floor(pixel / model.width)];
    const base = [x * 8, 60, y * 10][i % 3]!;
    return offset + gain * base;
  });
const norm = (v: Float32Array) => Math.hypot(...v);
const mean = (v: Float32Array) => v.reduce((s, x) => s + x, 0) / v.length;

describe('tiny-image-v1', () => {
  it('is a 576-value descriptor of a 16×12 RGB frame, with zero mean and unit length', () => {
    expect(model).toMatchObject({ name: 'tiny-image-v1', width: 16, height: 12, dims: 576 });
    const v = tinyImageDescriptor(picture());
    expect(v).toHaveLength(576);
    expect(mean(v)).toBeCloseTo(0, 6);
    expect(norm(v)).toBeCloseTo(1, 6);
  });

  it('ignores overall brightness and contrast, so only the layout and colour of the scene count', () => {
    const v = tinyImageDescriptor(picture());
    const brighter = tinyImageDescriptor(picture(40));
    const flatter = tinyImageDescriptor(picture(20, 0.5));
    for (let i = 0; i < v.length; i++) {
      expect(brighter[i]).toBeCloseTo(v[i]!, 5);
      expect(flatter[i]).toBeCloseTo(v[i]!, 5);
    }
    // Another layout (the gradients swapped) lies far from it.
    const swapped = tinyImageDescriptor(picture().map((_, i, all) => all[i - (i % 3) + (2 - (i % 3))]!));
    expect(Math.hypot(...v.map((x, i) => x - swapped[i]!))).toBeGreaterThan(0.5);
  });

  it('answers the zero vector for a flat frame and refuses a buffer of the wrong size', () => {
    expect([...tinyImageDescriptor(new Array(576).fill(90))].every((x) => x === 0)).toBe(true);
    expect(() => tinyImageDescriptor(new Uint8Array(575))).toThrow(/576 values/);
  });
});
