/**
 * Content tests for the formats whose reader files hold no `sniff` of their own (see
 * `CaptureFormat.sniff`): each looks for what the owning tool always writes at the top of a file.
 */
import { headLines } from './common';

/** BLF files open with the signature `LOGG` (Vector's file header). */
export function sniffBlf(head: Buffer): boolean {
  return head.length >= 4 && head.toString('latin1', 0, 4) === 'LOGG';
}

const CANDUMP_LINE = /^\(\d+(?:\.\d+)?\)\s+\S+\s+[0-9A-Fa-f]{1,8}#/;

/** candump -l lines: `(seconds) interface id#data`, from the first line on. */
export function sniffCandump(head: Buffer): boolean {
  const lines = headLines(head, 3);
  return lines.length > 0 && lines.every((l) => CANDUMP_LINE.test(l));
}

const ASC_HEADER = /^(?:date\s|base\s+(?:hex|dec)\b|(?:no\s+)?internal events logged|begin triggerblock)/i;

/** Vector ASC headers: `date …`, `base hex|dec timestamps …`, `Begin Triggerblock`. */
export function sniffAsc(head: Buffer): boolean {
  return headLines(head, 10).some((l) => ASC_HEADER.test(l));
}
