/**
 * Bit-level flags (single bits that toggle rarely and belong to no wider field) and value tables
 * (multi-bit fields that hold only a few distinct values, changing rarely: enumerations).
 */
import { describeField, readField, type FieldRef } from '../analysis/bits';
import type { FlagCandidate, ValueTableCandidate } from './types';

export interface FlagOptions {
  /** A flag toggles in at most this share of frame pairs. Default 0.2. */
  maxToggleRate?: number;
}

/** Judges a one-bit field found by the segmentation; undefined when the bit looks like noise. */
export function judgeFlag(
  data: readonly Uint8Array[],
  field: FieldRef,
  options: FlagOptions = {},
): FlagCandidate | undefined {
  const n = data.length;
  if (n < 2 || field.length !== 1) return undefined;
  let toggles = 0;
  let on = 0;
  let prev = readField(data[0]!, field);
  for (let t = 0; t < n; t++) {
    const v = readField(data[t]!, field);
    if (v) on++;
    if (t > 0 && v !== prev) toggles++;
    prev = v;
  }
  if (toggles === 0) return undefined;
  const rate = toggles / (n - 1);
  const maxRate = options.maxToggleRate ?? 0.2;
  const confidence =
    rate <= maxRate ? Math.min(0.95, 0.6 + 0.35 * (1 - rate / maxRate)) : Math.max(0.1, 0.5 - rate);
  return {
    kind: 'flag',
    field,
    toggles,
    onRatio: on / n,
    confidence,
    evidence: [
      `${describeField(field)}: ${toggles} toggles in ${n} frames (${(rate * 100).toFixed(2)}% of frame pairs), set in ${((on / n) * 100).toFixed(1)}% of frames`,
      rate <= maxRate
        ? 'few toggles and no neighbouring bit changes with it: a status flag'
        : 'toggles often: more likely a noise or data bit than a status flag',
    ],
  };
}

export interface ValueTableOptions {
  /** At most this many distinct values. Default 16. */
  maxDistinct?: number;
  /** Value changes in at most this share of frame pairs. Default 0.25. */
  maxChangeRate?: number;
}

/** Judges a multi-bit field as an enumeration; undefined when it has too many values or changes too often. */
export function judgeValueTable(
  data: readonly Uint8Array[],
  field: FieldRef,
  options: ValueTableOptions = {},
): ValueTableCandidate | undefined {
  const n = data.length;
  if (n < 2 || field.length < 2) return undefined;
  const counts = new Map<number, number>();
  let changes = 0;
  let prev = readField(data[0]!, field);
  for (let t = 0; t < n; t++) {
    const v = readField(data[t]!, field);
    counts.set(v, (counts.get(v) ?? 0) + 1);
    if (t > 0 && v !== prev) changes++;
    prev = v;
  }
  const maxDistinct = options.maxDistinct ?? 16;
  const rate = changes / (n - 1);
  if (counts.size < 2 || counts.size > maxDistinct || rate > (options.maxChangeRate ?? 0.25))
    return undefined;
  // An enumeration holds each state for a while; values met in a single frame are a number passing
  // through (a ramp, a radar track's first readings) or glitches, not states.
  const once = [...counts.values()].filter((c) => c === 1).length;
  if (once > counts.size / 4) return undefined;
  const values = [...counts.entries()]
    .map(([value, count]) => ({ value, count }))
    .sort((a, b) => a.value - b.value);
  // Few values out of many possible ones, with gaps between them, look like an enumeration.
  const possible = 2 ** field.length;
  const sparsity = 1 - counts.size / Math.min(possible, 64);
  const confidence = Math.max(0.3, Math.min(0.9, 0.45 + 0.35 * sparsity + 0.1 * (1 - rate)));
  return {
    kind: 'value_table',
    field,
    values,
    confidence,
    evidence: [
      `${describeField(field)}: ${counts.size} distinct values (${values.map((v) => `${v.value}×${v.count}`).join(', ')}), changes in ${(rate * 100).toFixed(2)}% of frame pairs`,
    ],
  };
}
