import {
  LIST_CAP,
  emptyGateReport,
  mergeGateReports,
  withOutcome,
  type BlockingSession,
} from './gate-report';

const session = (id: string, frames: number, uncovered: number): BlockingSession => ({
  session_id: id,
  name: `drive ${id}`,
  frames_lacking_coverage: frames,
  uncovered_objects: uncovered,
  frames: Array.from({ length: Math.min(frames, LIST_CAP) }, (_, i) => ({
    frame_id: `${id}-${i}`,
    index: i,
    missing_audit: false,
    uncovered_objects: [`${id}-o${i}`],
  })),
});

describe('gate reports', () => {
  it('passes without gaps, lets gaps through when advisory and refuses them when enforcing', () => {
    const counts = {
      checked_frames: 3,
      frames_without_audit: 0,
      uncovered_objects: 0,
      blocking_sessions: [],
    };
    expect(withOutcome({ mode: 'advisory', ...counts }).outcome).toBe('passed');
    expect(withOutcome({ mode: 'advisory', ...counts, uncovered_objects: 1 }).outcome).toBe('gaps');
    expect(withOutcome({ mode: 'enforcing', ...counts, frames_without_audit: 1 }).outcome).toBe('refused');
    expect(emptyGateReport('off').outcome).toBe('off');
  });

  it('merges the pages of an export: counts add up, a session spanning pages is one, listed frames stay capped', () => {
    const first = withOutcome({
      mode: 'advisory',
      checked_frames: 40,
      frames_without_audit: 1,
      uncovered_objects: 30,
      blocking_sessions: [session('a', 30, 30)],
    });
    const second = withOutcome({
      mode: 'advisory',
      checked_frames: 40,
      frames_without_audit: 0,
      uncovered_objects: 25,
      blocking_sessions: [session('a', 25, 25), session('b', 0, 0)],
    });
    const merged = mergeGateReports(mergeGateReports(emptyGateReport('advisory'), first), second);
    expect(merged).toMatchObject({
      outcome: 'gaps',
      checked_frames: 80,
      frames_without_audit: 1,
      uncovered_objects: 55,
    });
    expect(merged.blocking_sessions.map((s) => s.session_id)).toEqual(['a', 'b']);
    const a = merged.blocking_sessions[0]!;
    expect(a).toMatchObject({ frames_lacking_coverage: 55, uncovered_objects: 55 });
    expect(a.frames).toHaveLength(LIST_CAP);
    expect(a.frames.slice(28, 32).map((f) => f.frame_id)).toEqual(['a-28', 'a-29', 'a-0', 'a-1']);
    // The inputs are left as they were.
    expect(first.blocking_sessions[0]!.frames).toHaveLength(30);
  });
});
