/**
 * The export privacy gate's report (spec "Export privacy gate"; the checks themselves are SQL in
 * activities/export/privacy-gate.ts): counts over the slice, and the blocking sessions with their
 * first frames and objects lacking coverage. Pages of an export are gated apart and merged.
 */

export const GATE_MODES = ['off', 'advisory', 'enforcing'] as const;
export type GateMode = (typeof GATE_MODES)[number];

/** Classes the coverage check treats as a person or a vehicle. */
export const COVERAGE_L1 = ['vru', 'two_wheeler', 'vehicle'] as const;
/** How far a region may reach beyond the object's box, as a share of the region's own size. */
export const CONTAINMENT_TOLERANCE = 0.25;
/** Blocking frames listed per session, and uncovered objects per frame, in a refusal. */
export const LIST_CAP = 50;

export interface BlockingFrame {
  frame_id: string;
  index: number;
  missing_audit: boolean;
  uncovered_objects: string[];
}

export interface BlockingSession {
  session_id: string;
  name: string;
  frames_lacking_coverage: number;
  uncovered_objects: number;
  frames: BlockingFrame[];
}

export interface GateReport {
  mode: GateMode;
  /** `off`: not checked; `passed`: no gap; `gaps`: gaps found and let through (advisory); `refused`. */
  outcome: 'off' | 'passed' | 'gaps' | 'refused';
  checked_frames: number;
  frames_without_audit: number;
  uncovered_objects: number;
  blocking_sessions: BlockingSession[];
}

export function withOutcome(report: Omit<GateReport, 'outcome'>): GateReport {
  const gaps = report.frames_without_audit + report.uncovered_objects;
  return {
    ...report,
    outcome: gaps === 0 ? 'passed' : report.mode === 'enforcing' ? 'refused' : 'gaps',
  };
}

/** The report of two parts of a slice (export pages) as one; listed frames stay capped per session. */
export function mergeGateReports(a: GateReport, b: GateReport): GateReport {
  if (a.mode === 'off') return a;
  const sessions = new Map(a.blocking_sessions.map((s) => [s.session_id, { ...s, frames: [...s.frames] }]));
  for (const s of b.blocking_sessions) {
    const into = sessions.get(s.session_id);
    if (!into) sessions.set(s.session_id, { ...s, frames: s.frames.slice(0, LIST_CAP) });
    else {
      into.frames_lacking_coverage += s.frames_lacking_coverage;
      into.uncovered_objects += s.uncovered_objects;
      into.frames.push(...s.frames.slice(0, LIST_CAP - into.frames.length));
    }
  }
  return withOutcome({
    mode: a.mode,
    checked_frames: a.checked_frames + b.checked_frames,
    frames_without_audit: a.frames_without_audit + b.frames_without_audit,
    uncovered_objects: a.uncovered_objects + b.uncovered_objects,
    blocking_sessions: [...sessions.values()],
  });
}

/** A gate that has looked at nothing yet (an advisory export before its first page). */
export const emptyGateReport = (mode: GateMode): GateReport =>
  mode === 'off'
    ? {
        mode,
        outcome: 'off',
        checked_frames: 0,
        frames_without_audit: 0,
        uncovered_objects: 0,
        blocking_sessions: [],
      }
    : withOutcome({
        mode,
        checked_frames: 0,
        frames_without_audit: 0,
        uncovered_objects: 0,
        blocking_sessions: [],
      });
