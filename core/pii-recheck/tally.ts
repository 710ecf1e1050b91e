/** What a PII corpus run has seen so far, carried from page to page (its workflow continues as new). */
export interface PiiRunTally {
  checked: number;
  failed: number;
  /** The first failures, with why. */
  failures: Array<{ frame_id: string; reason: string }>;
}

/** Failures listed on a run; the rest are counted. */
export const FAILURES_KEPT = 20;

export const emptyPiiTally = (): PiiRunTally => ({ checked: 0, failed: 0, failures: [] });

export const addTally = (a: PiiRunTally, b: PiiRunTally): PiiRunTally => ({
  checked: a.checked + b.checked,
  failed: a.failed + b.failed,
  failures: [...a.failures, ...b.failures].slice(0, FAILURES_KEPT),
});
