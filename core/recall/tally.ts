/** A recall run's tally, added up page by page (its `changes`, with the revert's tally beside it). */
export interface RecallTally {
  frames_checked: number;
  detections: number;
  candidates: number;
  frames_failed: number;
  failures: Array<{ frame_id: string; reason: string }>;
}

export const RECALL_FAILURES_KEPT = 20;

export const emptyRecallTally = (): RecallTally => ({
  frames_checked: 0,
  detections: 0,
  candidates: 0,
  frames_failed: 0,
  failures: [],
});

export const addRecallTally = (a: RecallTally, b: RecallTally): RecallTally => ({
  frames_checked: a.frames_checked + b.frames_checked,
  detections: a.detections + b.detections,
  candidates: a.candidates + b.candidates,
  frames_failed: a.frames_failed + b.frames_failed,
  failures: [...a.failures, ...b.failures].slice(0, RECALL_FAILURES_KEPT),
});
