import { InputError } from '../../errors';
import type { CocoBox, CocoSegmentation } from './types';

/**
 * pycocotools' mask API (common/maskApi.c, Simplified BSD licence, Piotr Dollár and Tsung-Yi Lin
 * 2015) ported step for step onto typed arrays, so that rasterised polygons, areas and IoUs are the
 * same integers and doubles COCOeval computes. npm has no maintained port of it. Where C relies on
 * integer behaviour the port says so: Int32Array stores truncate toward zero like C's (int) cast,
 * `>>> 0` wraps like its unsigned arithmetic.
 */

/** A binary mask as run lengths over its column-major pixels, the first run being zeros. */
export interface Rle {
  height: number;
  width: number;
  counts: Uint32Array;
}

/**
 * IoU of two [x, y, w, h] boxes as maskApi's bbIou computes it; against a crowd region the union
 * is the detection's own area, so a detection anywhere inside the crowd scores high.
 */
export function boxIou(
  dx: number,
  dy: number,
  dw: number,
  dh: number,
  gx: number,
  gy: number,
  gw: number,
  gh: number,
  crowd: boolean,
): number {
  const w = Math.min(dw + dx, gw + gx) - Math.max(dx, gx);
  if (w <= 0) return 0;
  const h = Math.min(dh + dy, gh + gy) - Math.max(dy, gy);
  if (h <= 0) return 0;
  const inter = w * h;
  const detArea = dw * dh;
  return inter / (crowd ? detArea : detArea + gw * gh - inter);
}

/** rleFrPoly: the pixels whose centres the polygon covers, traced at 5× resolution. */
export function rleFromPolygon(xy: ArrayLike<number>, height: number, width: number): Rle {
  const scale = 5;
  const k = xy.length >> 1;
  const x = new Int32Array(k + 1);
  const y = new Int32Array(k + 1);
  for (let j = 0; j < k; j++) {
    x[j] = scale * xy[2 * j]! + 0.5;
    y[j] = scale * xy[2 * j + 1]! + 0.5;
  }
  x[k] = x[0]!;
  y[k] = y[0]!;
  let n = 0;
  for (let j = 0; j < k; j++) n += Math.max(Math.abs(x[j]! - x[j + 1]!), Math.abs(y[j]! - y[j + 1]!)) + 1;
  // Dense boundary points of each edge, stepping along its longer axis.
  const u = new Int32Array(n);
  const v = new Int32Array(n);
  n = 0;
  for (let j = 0; j < k; j++) {
    let xs = x[j]!;
    let xe = x[j + 1]!;
    let ys = y[j]!;
    let ye = y[j + 1]!;
    const dx = Math.abs(xe - xs);
    const dy = Math.abs(ys - ye);
    const flip = (dx >= dy && xs > xe) || (dx < dy && ys > ye);
    if (flip) {
      [xs, xe] = [xe, xs];
      [ys, ye] = [ye, ys];
    }
    // A zero-length edge gives 0/0 = NaN, as in C; its one point never starts a column change.
    const slope = dx >= dy ? (ye - ys) / dx : (xe - xs) / dy;
    if (dx >= dy) {
      for (let d = 0; d <= dx; d++) {
        const t = flip ? dx - d : d;
        u[n] = t + xs;
        v[n] = ys + slope * t + 0.5;
        n++;
      }
    } else {
      for (let d = 0; d <= dy; d++) {
        const t = flip ? dy - d : d;
        v[n] = t + ys;
        u[n] = xs + slope * t + 0.5;
        n++;
      }
    }
  }
  // Where the boundary crosses a pixel column, the first pixel row inside it.
  const starts = new Uint32Array(n + 1);
  let m = 0;
  for (let j = 1; j < n; j++) {
    if (u[j] === u[j - 1]) continue;
    let xd = u[j]! < u[j - 1]! ? u[j]! : u[j]! - 1;
    xd = (xd + 0.5) / scale - 0.5;
    if (Math.floor(xd) !== xd || xd < 0 || xd > width - 1) continue;
    let yd = v[j]! < v[j - 1]! ? v[j]! : v[j - 1]!;
    yd = (yd + 0.5) / scale - 0.5;
    if (yd < 0) yd = 0;
    else if (yd > height) yd = height;
    starts[m++] = xd * height + Math.ceil(yd);
  }
  starts[m++] = height * width;
  const a = starts.subarray(0, m).sort();
  let previous = 0;
  for (let j = 0; j < m; j++) {
    const t = a[j]!;
    a[j] = t - previous;
    previous = t;
  }
  // Crossings at the same pixel cancel: merge the runs around a zero-length one.
  const counts = new Uint32Array(m);
  let j = 0;
  let c = 0;
  counts[c++] = a[j++]!;
  while (j < m) {
    if (a[j]! > 0) counts[c++] = a[j++]!;
    else {
      j++;
      if (j < m) counts[c - 1]! += a[j++]!;
    }
  }
  return { height, width, counts: counts.slice(0, c) };
}

/** rleFrString: pycocotools' compressed counts (LEB128-like, 6 bits a character from '0'). */
export function rleFromString(text: string, height: number, width: number): Rle {
  const counts = new Uint32Array(text.length);
  let m = 0;
  let p = 0;
  while (p < text.length) {
    let x = 0;
    let k = 0;
    let more = true;
    while (more) {
      const c = text.charCodeAt(p) - 48;
      x |= (c & 0x1f) << (5 * k);
      more = (c & 0x20) !== 0;
      p++;
      k++;
      if (!more && c & 0x10) x |= -1 << (5 * k);
    }
    // From the third count on, each is stored as its difference from the count two before.
    if (m > 2) x += counts[m - 2]!;
    counts[m++] = x >>> 0;
  }
  return { height, width, counts: counts.slice(0, m) };
}

/** rleMerge without intersect: the union of masks of one size (an empty mask if sizes differ). */
export function rleUnion(masks: readonly Rle[]): Rle {
  const first = masks[0];
  if (!first) return { height: 0, width: 0, counts: new Uint32Array(0) };
  let height = first.height;
  let width = first.width;
  let merged = first.counts.slice();
  for (let i = 1; i < masks.length; i++) {
    const b = masks[i]!;
    if (b.height !== height || b.width !== width) {
      height = width = 0;
      merged = new Uint32Array(0);
      break;
    }
    const a = merged;
    const out = new Uint32Array(a.length + b.counts.length + 1);
    let ca = a[0]!;
    let cb = b.counts[0]!;
    let ia = 1;
    let ib = 1;
    let va = false;
    let vb = false;
    let value = false;
    let m = 0;
    let run = 0;
    let remaining = 1;
    while (remaining > 0) {
      const c = Math.min(ca, cb);
      run += c;
      ca -= c;
      if (!ca && ia < a.length) {
        ca = a[ia++]!;
        va = !va;
      }
      cb -= c;
      if (!cb && ib < b.counts.length) {
        cb = b.counts[ib++]!;
        vb = !vb;
      }
      remaining = ca + cb;
      const previous: boolean = value;
      value = va || vb;
      if (value !== previous || remaining === 0) {
        out[m++] = run;
        run = 0;
      }
    }
    merged = out.slice(0, m);
  }
  return { height, width, counts: merged };
}

/** rleArea: the number of mask pixels (the odd runs). */
export function rleArea(mask: Rle): number {
  let area = 0;
  for (let j = 1; j < mask.counts.length; j += 2) area += mask.counts[j]!;
  return area >>> 0;
}

/**
 * rleToBbox (the corrected version pycocotools ships since 2.0.7): the tightest [x, y, w, h]
 * around the mask; a run that wraps to the next column spans the whole height.
 */
export function rleBoundingBox(mask: Rle): [number, number, number, number] {
  const { height: h, width: w, counts } = mask;
  const m = counts.length & ~1;
  if (m === 0) return [0, 0, 0, 0];
  let xs = w;
  let ys = h;
  let xe = 0;
  let ye = 0;
  let end = 0;
  for (let j = 0; j < m; j++) {
    const start = end;
    end += counts[j]!;
    if (j % 2 === 0 || counts[j] === 0) continue;
    const yStart = start % h;
    const xStart = (start - yStart) / h;
    const yEnd = (end - 1) % h;
    const xEnd = (end - 1 - yEnd) / h;
    xs = Math.min(xs, xStart);
    xe = Math.max(xe, xEnd);
    if (xStart < xEnd) {
      ys = 0;
      ye = h - 1;
    } else {
      ys = Math.min(ys, yStart);
      ye = Math.max(ye, yEnd);
    }
  }
  return [xs, ys, (xe - xs + 1) >>> 0, (ye - ys + 1) >>> 0];
}

/** A mask with its bounding box, which rleIou checks first so that far-apart masks cost nothing. */
export interface BoxedRle extends Rle {
  box: [number, number, number, number];
}

export const withBoundingBox = (mask: Rle): BoxedRle => ({ ...mask, box: rleBoundingBox(mask) });

/**
 * rleIou for one pair: intersection over union of the pixels, over the detection's own pixels
 * against a crowd region; -1 when overlapping boxes belong to masks of different sizes.
 */
export function maskIou(dt: BoxedRle, gt: BoxedRle, crowd: boolean): number {
  const [dx, dy, dw, dh] = dt.box;
  const [gx, gy, gw, gh] = gt.box;
  if (!(boxIou(dx, dy, dw, dh, gx, gy, gw, gh, crowd) > 0)) return 0;
  if (dt.height !== gt.height || dt.width !== gt.width) return -1;
  const a = dt.counts;
  const b = gt.counts;
  let ca = a[0]!;
  let cb = b[0]!;
  let ia = 1;
  let ib = 1;
  let va = false;
  let vb = false;
  let inter = 0;
  let union = 0;
  let remaining = 1;
  while (remaining > 0) {
    const c = Math.min(ca, cb);
    if (va || vb) {
      union += c;
      if (va && vb) inter += c;
    }
    ca -= c;
    if (!ca && ia < a.length) {
      ca = a[ia++]!;
      va = !va;
    }
    cb -= c;
    if (!cb && ib < b.length) {
      cb = b[ib++]!;
      vb = !vb;
    }
    remaining = ca + cb;
  }
  if (inter === 0) return 0;
  return inter / (crowd ? rleArea(dt) : union);
}

function checkedPolygon(polygon: readonly number[]): readonly number[] {
  if (polygon.length < 6)
    throw new InputError(`a polygon needs at least three points, got ${polygon.length} numbers`);
  return polygon;
}

/**
 * COCO.annToRLE: polygons are rasterised in the image's size and unioned; run lengths keep their
 * own size, as pycocotools keeps them.
 */
export function segmentationToRle(segmentation: CocoSegmentation, height: number, width: number): Rle {
  if (Array.isArray(segmentation)) {
    const polygons = segmentation as readonly (readonly number[])[];
    if (polygons.length === 0) throw new InputError('a segmentation needs at least one polygon');
    return rleUnion(polygons.map((p) => rleFromPolygon(checkedPolygon(p), height, width)));
  }
  const { size, counts } = segmentation as {
    size: readonly [number, number];
    counts: readonly number[] | string;
  };
  const [h, w] = size;
  return typeof counts === 'string'
    ? rleFromString(counts, h, w)
    : { height: h, width: w, counts: Uint32Array.from(counts) };
}

/** The polygon pycocotools' loadRes gives a detection that has only a box. */
export const boxPolygon = ([x, y, w, h]: CocoBox): number[][] => [[x, y, x, y + h, x + w, y + h, x + w, y]];
