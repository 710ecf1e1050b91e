/** A scaled crop's place in a packed input, and its size there. */
export interface Placement {
  /** Which of the inputs. */
  input: number;
  x: number;
  y: number;
  width: number;
  height: number;
}

export interface Packing {
  /** The inputs' sizes, multiples of the alignment. */
  inputs: Array<{ width: number; height: number }>;
  /** In the order of the sizes given. */
  placements: Placement[];
}

export interface PackOptions {
  /** Pixels kept empty between crops, so that one crop's text or face never joins another's. */
  gap: number;
  /** Input sides are multiples of this. */
  align: number;
  /**
   * Largest input a crop that fits is packed into: per pixel, DB-net runs up to a third slower on
   * large inputs than on ones of some 640×352 (measured: docs/pii.md "Search").
   */
  maxWidth: number;
  maxHeight: number;
}

interface Segment {
  x: number;
  y: number;
  width: number;
}

/** One input being filled: its skyline (the top edge of what is placed so far) and its limits. */
interface Bin {
  line: Segment[];
  width: number;
  height: number;
}

/**
 * Where a `w`×`h` item (its gap included) rests lowest on the skyline, leftmost on a tie, within
 * the bin's limits; the skyline updated for it.
 */
function place(bin: Bin, w: number, h: number): { x: number; y: number } | undefined {
  let best: { x: number; y: number } | undefined;
  for (const start of bin.line) {
    if (start.x + w > bin.width) break;
    const under = bin.line.filter((s) => s.x < start.x + w && s.x + s.width > start.x);
    const y = Math.max(...under.map((s) => s.y));
    if (y + h <= bin.height && (!best || y < best.y)) best = { x: start.x, y };
  }
  if (!best) return undefined;
  const { x, y } = best;
  // The item's top edge replaces the skyline under it; a segment it covers in part keeps the rest.
  const next: Segment[] = [];
  for (const s of bin.line) {
    if (s.x < x) next.push({ ...s, width: Math.min(s.width, x - s.x) });
    if (s.x + s.width > x + w)
      next.push({ x: Math.max(s.x, x + w), y: s.y, width: s.x + s.width - Math.max(s.x, x + w) });
  }
  next.push({ x, y: y + h, width: w });
  bin.line = next.sort((a, b) => a.x - b.x);
  return best;
}

const alignUp = (v: number, align: number): number => Math.max(align, Math.ceil(v / align) * align);

/**
 * The scaled crops laid out on as few detector inputs as their size allows: skyline packing,
 * tallest first, each crop into the first input it fits, a new input when it fits none (one
 * larger than the limits gets an input of its own size). Each input is then cut to what it holds.
 */
export function packRectangles(
  sizes: ReadonlyArray<{ width: number; height: number }>,
  opts: PackOptions,
): Packing {
  const { gap, align } = opts;
  const order = sizes.map((_, i) => i).sort((a, b) => sizes[b]!.height - sizes[a]!.height);
  const bins: Bin[] = [];
  const placements = new Array<Placement>(sizes.length);
  for (const i of order) {
    const { width, height } = sizes[i]!;
    // Each crop carries its gap to the right and below; the limits allow for the last one's.
    const w = width + gap;
    const h = height + gap;
    let input = 0;
    let at: { x: number; y: number } | undefined;
    for (; input < bins.length && !at; input++) at = place(bins[input]!, w, h);
    if (at) input--;
    else {
      const bin: Bin = {
        line: [{ x: 0, y: 0, width: Math.max(opts.maxWidth, width) + gap }],
        width: Math.max(opts.maxWidth, width) + gap,
        height: Math.max(opts.maxHeight, height) + gap,
      };
      bins.push(bin);
      at = place(bin, w, h)!;
    }
    placements[i] = { input, x: at.x, y: at.y, width, height };
  }
  const inputs = bins.map((_, input) => {
    const held = placements.filter((p) => p.input === input);
    return {
      width: alignUp(Math.max(...held.map((p) => p.x + p.width)), align),
      height: alignUp(Math.max(...held.map((p) => p.y + p.height)), align),
    };
  });
  return { inputs, placements };
}

/** How a detector wants its input: planar BGR, each channel (v·scale − mean) / std. */
export interface InputNorm {
  scale: number;
  mean: readonly [number, number, number];
  std: readonly [number, number, number];
}

/**
 * Writes packed RGB pixels (`width`×`height`) into a planar BGR input of `inputWidth`×`inputHeight`
 * at `at`, normalised. The rest of the input is left as it is: zeros in a new input, which is
 * black for YuNet and the mean colour for DB-net, so the gaps between packed crops hold nothing.
 */
export function writePlanar(
  rgb: Uint8Array,
  width: number,
  height: number,
  input: Float32Array,
  inputWidth: number,
  at: { x: number; y: number },
  norm: InputNorm,
): void {
  const plane = input.length / 3;
  // (v·scale − mean) / std as v·gain + offset, per BGR channel, taken from RGB's channel 2 − c.
  const gain = [0, 1, 2].map((c) => norm.scale / norm.std[c]!);
  const offset = [0, 1, 2].map((c) => -norm.mean[c]! / norm.std[c]!);
  for (let c = 0; c < 3; c++) {
    const g = gain[c]!;
    const o = offset[c]!;
    for (let y = 0; y < height; y++) {
      const out = c * plane + (at.y + y) * inputWidth + at.x;
      const src = y * width * 3 + 2 - c;
      for (let x = 0; x < width; x++) input[out + x] = rgb[src + x * 3]! * g + o;
    }
  }
}

/** The values of a `mapWidth`-wide map inside `p`, as a map of their own. */
export function subMap(
  map: ArrayLike<number>,
  mapWidth: number,
  p: Pick<Placement, 'x' | 'y' | 'width' | 'height'>,
): Float32Array {
  const out = new Float32Array(p.width * p.height);
  for (let y = 0; y < p.height; y++)
    for (let x = 0; x < p.width; x++) out[y * p.width + x] = map[(p.y + y) * mapWidth + p.x + x]!;
  return out;
}

/** A region of a frame, in frame pixels. */
export interface Region {
  left: number;
  top: number;
  width: number;
  height: number;
}

/**
 * For each of `outSize` output pixels, the source pixels of `inSize` it is made of and their
 * weights: a triangle (linear) filter, widened by the shrink factor when shrinking so that every
 * source pixel counts (antialiased, as Pillow's bilinear resize is), exact at scale 1.
 */
function linearTaps(
  outSize: number,
  inSize: number,
): { first: Int32Array; count: Int32Array; weights: Float32Array; n: number } {
  const ratio = inSize / outSize;
  const radius = Math.max(1, ratio);
  const n = Math.ceil(2 * radius) + 2;
  const first = new Int32Array(outSize);
  const count = new Int32Array(outSize);
  const weights = new Float32Array(outSize * n);
  for (let i = 0; i < outSize; i++) {
    const centre = (i + 0.5) * ratio;
    const lo = Math.max(0, Math.floor(centre - radius));
    const hi = Math.min(inSize, Math.ceil(centre + radius));
    let total = 0;
    for (let j = lo; j < hi; j++) {
      const w = Math.max(0, 1 - Math.abs(j + 0.5 - centre) / radius);
      weights[i * n + j - lo] = w;
      total += w;
    }
    for (let j = 0; j < hi - lo; j++) weights[i * n + j]! /= total;
    first[i] = lo;
    count[i] = hi - lo;
  }
  return { first, count, weights, n };
}

/**
 * Writes `region` of a packed RGB frame, resampled to `at`'s size by `linearTaps` in both
 * directions, into a planar BGR input of `inputWidth` at `at`, normalised — `writePlanar` of a
 * cropped and resized frame in one pass. Cheaper than an image library for the many small crops of
 * a frame (a call of sharp costs some 2 ms of CPU whatever the crop's size, measured).
 */
export function writeResampledPlanar(
  rgb: Uint8Array,
  frameWidth: number,
  region: Region,
  input: Float32Array,
  inputWidth: number,
  at: Pick<Placement, 'x' | 'y' | 'width' | 'height'>,
  norm: InputNorm,
): void {
  const xs = linearTaps(at.width, region.width);
  const ys = linearTaps(at.height, region.height);
  // Horizontal pass over the region's rows, RGB interleaved.
  const rows = new Float32Array(region.height * at.width * 3);
  for (let y = 0; y < region.height; y++) {
    const src = ((region.top + y) * frameWidth + region.left) * 3;
    const dst = y * at.width * 3;
    for (let x = 0; x < at.width; x++) {
      let r = 0;
      let g = 0;
      let b = 0;
      const w0 = x * xs.n;
      let p = src + xs.first[x]! * 3;
      for (let k = 0; k < xs.count[x]!; k++, p += 3) {
        const w = xs.weights[w0 + k]!;
        r += rgb[p]! * w;
        g += rgb[p + 1]! * w;
        b += rgb[p + 2]! * w;
      }
      rows[dst + x * 3] = r;
      rows[dst + x * 3 + 1] = g;
      rows[dst + x * 3 + 2] = b;
    }
  }
  const plane = input.length / 3;
  const gain = [0, 1, 2].map((c) => norm.scale / norm.std[c]!);
  const offset = [0, 1, 2].map((c) => -norm.mean[c]! / norm.std[c]!);
  const [gb, gg, gr] = gain as [number, number, number];
  const [ob, og, or] = offset as [number, number, number];
  // Vertical pass, written as planar BGR.
  for (let y = 0; y < at.height; y++) {
    const w0 = y * ys.n;
    const row0 = ys.first[y]!;
    const taps = ys.count[y]!;
    const out = (at.y + y) * inputWidth + at.x;
    for (let x = 0; x < at.width; x++) {
      let r = 0;
      let g = 0;
      let b = 0;
      for (let k = 0; k < taps; k++) {
        const w = ys.weights[w0 + k]!;
        const p = ((row0 + k) * at.width + x) * 3;
        r += rows[p]! * w;
        g += rows[p + 1]! * w;
        b += rows[p + 2]! * w;
      }
      input[out + x] = b * gb + ob;
      input[plane + out + x] = g * gg + og;
      input[2 * plane + out + x] = r * gr + or;
    }
  }
}
