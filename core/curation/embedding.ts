/**
 * Per-frame embeddings for diverse-subset selection (docs/curation.md). No learned image model
 * ships with the platform (../shared/models holds detectors only), so the embedding is a classic
 * global scene descriptor: the "tiny image" of Torralba, Fergus and Freeman ("80 million tiny
 * images", IEEE TPAMI 2008), whose distances track scene layout and colour well enough to spread a
 * subset over lighting, road type and traffic density.
 *
 * `tiny-image-v1`: the redacted frame resized to 16×12 (aspect ignored: every frame gets the same
 * grid), RGB, each value in [0, 1], minus the descriptor's own mean (brightness drops out) and
 * scaled to unit L2 norm (contrast drops out): 576 dimensions. A flat frame has no direction and
 * is the zero vector.
 */

export interface EmbeddingModel {
  name: string;
  width: number;
  height: number;
  channels: 3;
  dims: number;
}

export const EMBEDDING_MODEL_NAMES = ['tiny-image-v1'] as const;
export type EmbeddingModelName = (typeof EMBEDDING_MODEL_NAMES)[number];
export const DEFAULT_EMBEDDING_MODEL: EmbeddingModelName = 'tiny-image-v1';

export const EMBEDDING_MODELS: Record<EmbeddingModelName, EmbeddingModel> = {
  'tiny-image-v1': { name: 'tiny-image-v1', width: 16, height: 12, channels: 3, dims: 576 },
};

/** The descriptor of a frame already scaled to the model's grid, packed RGB (`dims` bytes). */
export function tinyImageDescriptor(
  rgb: ArrayLike<number>,
  model: EmbeddingModel = EMBEDDING_MODELS[DEFAULT_EMBEDDING_MODEL],
): Float32Array {
  if (rgb.length !== model.dims)
    throw new RangeError(
      `${model.name} needs ${model.width}×${model.height} RGB (${model.dims} values), got ${rgb.length}`,
    );
  const values = new Float64Array(model.dims);
  let mean = 0;
  for (let i = 0; i < model.dims; i++) {
    values[i] = rgb[i]! / 255;
    mean += values[i]! / model.dims;
  }
  let norm = 0;
  for (let i = 0; i < model.dims; i++) {
    values[i]! -= mean;
    norm += values[i]! * values[i]!;
  }
  norm = Math.sqrt(norm);
  const out = new Float32Array(model.dims);
  // Below this the frame is flat up to rounding; its direction would be noise.
  if (norm < 1e-9) return out;
  for (let i = 0; i < model.dims; i++) out[i] = values[i]! / norm;
  return out;
}
