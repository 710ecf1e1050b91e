/**
 * ByteTrack's Kalman filter (from SORT/DeepSORT): constant velocity on the box centre x, y, its
 * aspect ratio a = w / h and height h, state [x, y, a, h, vx, vy, va, vh], one time step per frame.
 * Process and measurement noise scale with the box height, so large and small boxes are equally
 * sure of themselves relative to their size.
 */

export type Vec = number[];
export type Mat = number[][];

const DIM = 4;
const STD_POSITION = 1 / 20;
const STD_VELOCITY = 1 / 160;

export interface KalmanState {
  mean: Vec;
  covariance: Mat;
}

const zeros = (r: number, c: number): Mat => Array.from({ length: r }, () => new Array<number>(c).fill(0));
const diag = (v: readonly number[]): Mat => v.map((x, i) => v.map((_, j) => (i === j ? x * x : 0)));

function mul(a: Mat, b: Mat): Mat {
  const out = zeros(a.length, b[0]!.length);
  for (let i = 0; i < a.length; i++)
    for (let k = 0; k < b.length; k++) {
      const aik = a[i]![k]!;
      if (aik === 0) continue;
      for (let j = 0; j < b[0]!.length; j++) out[i]![j]! += aik * b[k]![j]!;
    }
  return out;
}

const transpose = (a: Mat): Mat => a[0]!.map((_, j) => a.map((row) => row[j]!));
const add = (a: Mat, b: Mat): Mat => a.map((row, i) => row.map((x, j) => x + b[i]![j]!));

/** F: position += velocity. */
const MOTION: Mat = Array.from({ length: 2 * DIM }, (_, i) =>
  Array.from({ length: 2 * DIM }, (_, j) => (i === j || j === i + DIM ? 1 : 0)),
);
const MOTION_T = transpose(MOTION);

/** Inverse of a small symmetric positive-definite matrix by Gauss-Jordan elimination with pivoting. */
function invert(m: Mat): Mat {
  const n = m.length;
  const a = m.map((row, i) => [...row, ...row.map((_, j) => (i === j ? 1 : 0))]);
  for (let c = 0; c < n; c++) {
    let p = c;
    for (let r = c + 1; r < n; r++) if (Math.abs(a[r]![c]!) > Math.abs(a[p]![c]!)) p = r;
    [a[c], a[p]] = [a[p]!, a[c]!];
    const pivot = a[c]![c]!;
    if (pivot === 0) throw new Error('singular innovation covariance');
    for (let j = 0; j < 2 * n; j++) a[c]![j]! /= pivot;
    for (let r = 0; r < n; r++) {
      if (r === c) continue;
      const f = a[r]![c]!;
      if (f !== 0) for (let j = 0; j < 2 * n; j++) a[r]![j]! -= f * a[c]![j]!;
    }
  }
  return a.map((row) => row.slice(n));
}

/** A new track from its first measurement [x, y, a, h]: unknown velocity, wide uncertainty. */
export function initiate(measurement: readonly number[]): KalmanState {
  const h = measurement[3]!;
  const std = [
    2 * STD_POSITION * h,
    2 * STD_POSITION * h,
    1e-2,
    2 * STD_POSITION * h,
    10 * STD_VELOCITY * h,
    10 * STD_VELOCITY * h,
    1e-5,
    10 * STD_VELOCITY * h,
  ];
  return { mean: [...measurement, 0, 0, 0, 0], covariance: diag(std) };
}

/** One frame ahead. */
export function predict(s: KalmanState): KalmanState {
  const h = s.mean[3]!;
  const q = diag([
    STD_POSITION * h,
    STD_POSITION * h,
    1e-2,
    STD_POSITION * h,
    STD_VELOCITY * h,
    STD_VELOCITY * h,
    1e-5,
    STD_VELOCITY * h,
  ]);
  const mean = s.mean.map((_, i) => (i < DIM ? s.mean[i]! + s.mean[i + DIM]! : s.mean[i]!));
  return { mean, covariance: add(mul(mul(MOTION, s.covariance), MOTION_T), q) };
}

/** Corrects the state with a measurement [x, y, a, h]. */
export function correct(s: KalmanState, measurement: readonly number[]): KalmanState {
  const h = s.mean[3]!;
  const r = diag([STD_POSITION * h, STD_POSITION * h, 1e-1, STD_POSITION * h]);
  // H picks the first four state entries, so H P Hᵀ and P Hᵀ are blocks of P.
  const pht = s.covariance.map((row) => row.slice(0, DIM));
  const innovationCov = add(
    pht.slice(0, DIM).map((row) => [...row]),
    r,
  );
  const gain = mul(pht, invert(innovationCov));
  const innovation = measurement.map((z, i) => z - s.mean[i]!);
  const mean = s.mean.map((m, i) => m + gain[i]!.reduce((acc, g, k) => acc + g * innovation[k]!, 0));
  const kskt = mul(mul(gain, innovationCov), transpose(gain));
  return { mean, covariance: s.covariance.map((row, i) => row.map((p, j) => p - kskt[i]![j]!)) };
}
