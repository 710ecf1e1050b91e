/**
 * Calibration against a reference: given samples of a known physical quantity (a CSV of
 * `timestamp,value` logged beside the capture, e.g. GPS speed or a scan tool's coolant temperature),
 * find the payload field and the linear scale and offset that reproduce it best.
 *
 * Each reference sample is paired with the newest frame of the id at or before its time (within
 * `maxGapS`). Every field whose least and most significant bits both move among the paired payloads
 * is tried, in both byte orders, unsigned and (when its top bit moves) two's-complement signed, up to
 * 32 bits wide; each gets an ordinary least-squares fit value = scale * raw + offset. Candidates are
 * ranked by the coefficient of determination R² (ties go to the narrower field); the report carries
 * R², the RMS and the largest residual in the reference's unit.
 */
import { readFile } from 'node:fs/promises';
import { bitSetKey, fieldFromLsb, formatId, msbFirst, type FieldRef } from '../analysis/bits';
import type { ByteOrder } from '../dbc/model';
import { CanlabInputError } from '../errors';
import type { CanFrame } from '../frame';

const { sqrt, abs } = Math;

export interface ReferenceSample {
  timestamp: number;
  value: number;
}

export interface CalibrationFit {
  id: string;
  field: FieldRef;
  signed: boolean;
  scale: number;
  offset: number;
  r2: number;
  rmse: number;
  maxAbsError: number;
  samples: number;
}

export interface CalibrateOptions {
  ids?: ReadonlySet<string>;
  /** Added to reference times to bring them onto the capture's time base. Default 0. */
  timeOffsetS?: number;
  /** Largest distance from a reference sample back to the frame paired with it. Default 1 s. */
  maxGapS?: number;
  /** Reference samples used (evenly spread over the file). Default 1000. */
  maxSamples?: number;
  /** Fits returned. Default 5. */
  top?: number;
}

/** Parses `timestamp,value` lines (comma, semicolon, tab or spaces); a non-numeric first line is a header. */
export function parseReferenceCsv(text: string, where: string): ReferenceSample[] {
  const out: ReferenceSample[] = [];
  const lines = text.split(/\r?\n/);
  lines.forEach((line, i) => {
    const trimmed = line.trim();
    if (trimmed === '' || trimmed.startsWith('#')) return;
    const cells = trimmed.split(/\s*[,;\t ]\s*/);
    const t = Number(cells[0]);
    const v = Number(cells[1]);
    if (cells.length >= 2 && cells[0] !== '' && cells[1] !== '' && Number.isFinite(t) && Number.isFinite(v)) {
      out.push({ timestamp: t, value: v });
      return;
    }
    if (out.length === 0 && i === lines.findIndex((l) => l.trim() !== '')) return; // header
    throw new CanlabInputError(
      `${where}:${i + 1}`,
      `expected "timestamp,value" with two numbers, got "${trimmed.slice(0, 60)}"`,
    );
  });
  if (out.length < 3)
    throw new CanlabInputError(where, `a reference needs at least 3 samples, found ${out.length}`);
  return out;
}

export async function loadReferenceCsv(path: string): Promise<ReferenceSample[]> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw new CanlabInputError(
      path,
      `cannot read the reference file: ${(err as NodeJS.ErrnoException).code ?? String(err)}`,
    );
  }
  return parseReferenceCsv(text, path);
}

/** Newest index with times[i] <= t, or -1. */
function atOrBefore(times: readonly number[], t: number): number {
  let lo = 0;
  let hi = times.length - 1;
  let found = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (times[mid]! <= t) {
      found = mid;
      lo = mid + 1;
    } else hi = mid - 1;
  }
  return found;
}

interface Fit {
  r2: number;
  scale: number;
  offset: number;
  rmse: number;
  maxAbsError: number;
}

/** Least squares y = scale * x + offset on centered sums (raw values up to 2^32 keep precision). */
function fitLine(x: Float64Array, y: Float64Array, yMean: number, yVar: number): Fit | undefined {
  const n = x.length;
  let xMean = 0;
  for (let i = 0; i < n; i++) xMean += x[i]!;
  xMean /= n;
  let sxx = 0;
  let sxy = 0;
  for (let i = 0; i < n; i++) {
    const dx = x[i]! - xMean;
    sxx += dx * dx;
    sxy += dx * (y[i]! - yMean);
  }
  if (sxx <= 0) return undefined;
  const scale = sxy / sxx;
  const offset = yMean - scale * xMean;
  let ssRes = 0;
  let maxAbsError = 0;
  for (let i = 0; i < n; i++) {
    const e = y[i]! - (scale * x[i]! + offset);
    ssRes += e * e;
    if (abs(e) > maxAbsError) maxAbsError = abs(e);
  }
  return { r2: yVar > 0 ? 1 - ssRes / yVar : 0, scale, offset, rmse: sqrt(ssRes / n), maxAbsError };
}

/** Bit `k` of value (0 = LSB) of a field whose LSB is `lsb`, or -1 when it leaves the payload. */
function nthBit(lsb: number, k: number, order: ByteOrder, bits: number): number {
  if (order === 'little_endian') return lsb + k < bits ? lsb + k : -1;
  const p = msbFirst(lsb) - k;
  return p >= 0 ? msbFirst(p) : -1;
}

function calibrateId(
  id: string,
  frames: readonly CanFrame[],
  reference: readonly ReferenceSample[],
  options: Required<Omit<CalibrateOptions, 'ids'>>,
): CalibrationFit[] {
  const times = frames.map((f) => f.timestamp);
  const payloads: Uint8Array[] = [];
  const values: number[] = [];
  for (const r of reference) {
    const t = r.timestamp + options.timeOffsetS;
    const i = atOrBefore(times, t);
    if (i < 0 || t - times[i]! > options.maxGapS) continue;
    payloads.push(frames[i]!.data);
    values.push(r.value);
  }
  const n = payloads.length;
  if (n < 3) return [];
  const bits = Math.min(...payloads.map((p) => p.length)) * 8;
  const bitAt = (s: number, b: number): number => (payloads[s]![b >> 3]! >> (b & 7)) & 1;
  const moving = new Set<number>();
  for (let b = 0; b < bits; b++) {
    for (let s = 1; s < n; s++) {
      if (bitAt(s, b) !== bitAt(0, b)) {
        moving.add(b);
        break;
      }
    }
  }
  const y = Float64Array.from(values);
  let yMean = 0;
  for (const v of y) yMean += v;
  yMean /= n;
  let yVar = 0;
  for (const v of y) yVar += (v - yMean) * (v - yMean);

  const fits: CalibrationFit[] = [];
  const raw = new Float64Array(n);
  const signedRaw = new Float64Array(n);
  for (const order of ['little_endian', 'big_endian'] as const) {
    for (const lsb of moving) {
      raw.fill(0);
      for (let k = 0; k < 32; k++) {
        const b = nthBit(lsb, k, order, bits);
        if (b < 0) break;
        const weight = 2 ** k;
        for (let s = 0; s < n; s++) if (bitAt(s, b)) raw[s] = raw[s]! + weight;
        if (!moving.has(b)) continue;
        const field = fieldFromLsb(lsb, k + 1, order);
        const unsigned = fitLine(raw, y, yMean, yVar);
        if (unsigned) fits.push({ id, field, signed: false, ...unsigned, samples: n });
        if (k === 0) continue;
        for (let s = 0; s < n; s++) signedRaw[s] = raw[s]! >= weight ? raw[s]! - 2 * weight : raw[s]!;
        const signed = fitLine(signedRaw, y, yMean, yVar);
        if (signed) fits.push({ id, field, signed: true, ...signed, samples: n });
      }
    }
  }
  return fits;
}

/** Best linear fits of the reference over the capture's fields, best first. */
export function calibrate(
  frames: readonly CanFrame[],
  reference: readonly ReferenceSample[],
  options: CalibrateOptions = {},
): CalibrationFit[] {
  const opts = {
    timeOffsetS: options.timeOffsetS ?? 0,
    maxGapS: options.maxGapS ?? 1,
    maxSamples: options.maxSamples ?? 1000,
    top: options.top ?? 5,
  };
  const step = Math.max(1, reference.length / opts.maxSamples);
  const sampled: ReferenceSample[] = [];
  for (let i = 0; i < reference.length; i += step) sampled.push(reference[Math.floor(i)]!);
  const byId = new Map<string, CanFrame[]>();
  for (const f of frames) {
    if (f.error || f.remote) continue;
    const id = formatId(f.id, f.extended);
    if (options.ids && !options.ids.has(id)) continue;
    const list = byId.get(id);
    if (list) list.push(f);
    else byId.set(id, [f]);
  }
  const all: CalibrationFit[] = [];
  for (const [id, list] of byId) all.push(...calibrateId(id, list, sampled, opts));
  all.sort((a, b) => (abs(b.r2 - a.r2) > 1e-9 ? b.r2 - a.r2 : a.field.length - b.field.length));
  // The same bits read in the other byte order (a field inside one byte) fit identically: keep one.
  const seen = new Set<string>();
  const out: CalibrationFit[] = [];
  for (const fit of all) {
    const key = `${fit.id}/${bitSetKey(fit.field)}/${fit.signed}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(fit);
    if (out.length >= opts.top) break;
  }
  return out;
}
