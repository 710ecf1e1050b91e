import { frameVerdict, proveFrames, type FrameEvidenceRow } from './redaction-proof';

const row = (over: Partial<FrameEvidenceRow> = {}): FrameEvidenceRow => ({
  frame_id: 'f1',
  session_id: 's1',
  index: 0,
  examined: true,
  redacted_copy: true,
  faces: 1,
  plates: 0,
  regions: 1,
  subjects: 2,
  uncovered_object_ids: [],
  model_versions: { face: 'yunet.onnx' },
  ...over,
});

describe('frameVerdict', () => {
  it('names the first gap: no audit, then no redacted copy, then uncovered objects', () => {
    expect(frameVerdict(row())).toBe('proven');
    expect(frameVerdict(row({ examined: false, redacted_copy: false, uncovered_object_ids: ['o'] }))).toBe(
      'no_audit',
    );
    expect(frameVerdict(row({ redacted_copy: false, uncovered_object_ids: ['o'] }))).toBe('no_redacted_copy');
    expect(frameVerdict(row({ uncovered_object_ids: ['o'] }))).toBe('uncovered_objects');
    // A frame with no person or vehicle needs no region to be proven.
    expect(frameVerdict(row({ subjects: 0, regions: 0, faces: 0 }))).toBe('proven');
  });
});

describe('proveFrames', () => {
  it('totals the evidence, is complete only when every frame is proven, and digests every frame', () => {
    const rows = [
      row(),
      row({ frame_id: 'f2', index: 1, uncovered_object_ids: ['o9'], plates: 2, regions: 3 }),
    ];
    const proof = proveFrames(rows);
    expect(proof.summary).toEqual({
      frames: 2,
      proven: 1,
      by_verdict: { proven: 1, no_audit: 0, no_redacted_copy: 0, uncovered_objects: 1 },
      faces: 2,
      plates: 2,
      regions: 4,
      subjects: 4,
      covered_subjects: 3,
      complete: false,
    });
    expect(proof.frames[1]).toMatchObject({ covered: 1, verdict: 'uncovered_objects' });
    expect(proveFrames([row()]).summary.complete).toBe(true);
    expect(proveFrames([]).summary.complete).toBe(false);
    // The digest changes with any frame's evidence, and not with nothing.
    expect(proveFrames(rows).evidence_sha256).toBe(proof.evidence_sha256);
    expect(proveFrames([rows[0]!, { ...rows[1]!, regions: 4 }]).evidence_sha256).not.toBe(
      proof.evidence_sha256,
    );
    expect(proof.evidence_sha256).toMatch(/^[0-9a-f]{64}$/);
  });
});
