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
