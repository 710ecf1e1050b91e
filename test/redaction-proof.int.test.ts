import type { FrameRow } from '../core/export/parquet-tables';
import { createCommitFixture } from '../testkit/commits';
import { startIngestStack, type IngestStack } from '../testkit/media/harness';
import { createSessionFixture } from '../testkit/session-fixtures';

/**
 * The redaction proof on the real stack (docs/redaction-proof.md): a session whose frames show each
 * way a frame can fail the proof — and one that passes — judged by the privacy gate's containment
 * rule, totalled, digested, audited and paged; a dataset commit proven over the frames it lists.
 */
let stack: IngestStack;
let sessionId: string;
let frameIds: string[];
let uncoveredCar: string;
let commitId: string;

const prove = (body: unknown, token = stack.reviewer) =>
  stack.api.call('POST', '/api/govern/redaction/proof', { token, body });

beforeAll(async () => {
  stack = await startIngestStack();
  const { db, storage } = stack.api.deps;
  const classId = async (name: string) => (await db.ontologyClass.findFirstOrThrow({ where: { name } })).id;
  const [person, car, sign] = await Promise.all(['person', 'car', 'traffic_sign'].map(classId));
  const { session, frames } = await createSessionFixture(
    { db, storage },
    { frames: 5, redacted: true, storeImages: false },
  );
  sessionId = session.id;
  frameIds = frames.map((f) => f.id);
  const audit = (frameId: string, regions: Array<{ kind: string; bbox: number[] }>) =>
    db.piiAudit.create({
      data: {
        frameId,
        nFaces: regions.filter((r) => r.kind === 'face').length,
        nPlates: regions.filter((r) => r.kind === 'plate').length,
        regions: regions.map((r) => ({ ...r, score: 0.9 })),
        modelVersions: { face: 'face_detection_yunet.onnx', text: 'ch_PP-OCRv4_det_infer.int8.onnx' },
      },
    });
  const object = (frameId: string, classId: number, bbox: number[], state = 'accepted') =>
    db.annoObject.create({ data: { frameId, classId, bbox, source: 'human', state } });
  // 0: proven — a person with a face inside its box, a car with its plate (sticking out a little).
  await audit(frameIds[0]!, [
    { kind: 'face', bbox: [12, 4, 20, 12] },
    { kind: 'plate', bbox: [38, 30, 50, 34] },
  ]);
  await object(frameIds[0]!, person!, [10, 2, 24, 40]);
  await object(frameIds[0]!, car!, [30, 20, 49, 35]);
  // 1: no audit at all.
  await object(frameIds[1]!, person!, [10, 2, 24, 40]);
  // 2: a car whose plate region lies elsewhere; a rejected person and a sign do not count.
  await audit(frameIds[2]!, [{ kind: 'plate', bbox: [0, 0, 6, 3] }]);
  uncoveredCar = (await object(frameIds[2]!, car!, [30, 20, 49, 35])).id;
  await object(frameIds[2]!, person!, [1, 1, 5, 5], 'rejected');
  await object(frameIds[2]!, sign!, [50, 0, 60, 10]);
  // 3: examined, nothing to redact, but its redacted copy is missing.
  await audit(frameIds[3]!, []);
  await db.frame.update({ where: { id: frameIds[3]! }, data: { redactedUri: null } });
  // 4: examined, no person or vehicle: proven without a region.
  await audit(frameIds[4]!, []);
  const listed = [0, 4].map((i): FrameRow => ({
    frame_id: frameIds[i]!,
    session_id: sessionId,
    frame_index: i,
    timestamp_ms: 0,
    split: 'train',
    width: 64,
    height: 48,
    image: null,
    lighting: 'normal',
    context: '{}',
    pii_audited: true,
    pii_faces: 0,
    pii_plates: 0,
    objects: 0,
  }));
  commitId = (
    await createCommitFixture(stack.api.deps, {
      name: 'proven slice',
      objects: [{ object_id: '00000000-0000-4000-8000-000000000002', class_name: 'car' }],
      frames: listed,
      sessionIds: [sessionId],
    })
  ).commitId;
}, 120_000);

afterAll(async () => {
  await stack?.close();
});

describe('POST /api/govern/redaction/proof', () => {
  it('judges every frame of a session by the containment rule, totals and digests the evidence, and audits it', async () => {
    const res = await prove({ session_id: sessionId });
    expect([res.status, res.body.detail]).toEqual([200, undefined]);
    expect(res.body.frames.map((f: { verdict: string }) => f.verdict)).toEqual([
      'proven',
      'no_audit',
      'uncovered_objects',
      'no_redacted_copy',
      'proven',
    ]);
    expect(res.body.frames[0]).toMatchObject({
      frame_id: frameIds[0],
      index: 0,
      examined: true,
      redacted_copy: true,
      faces: 1,
      plates: 1,
      regions: 2,
      subjects: 2,
      covered: 2,
      uncovered_object_ids: [],
      model_versions: { face: 'face_detection_yunet.onnx' },
    });
    expect(res.body.frames[1]).toMatchObject({ examined: false, subjects: 1, covered: 0 });
    expect(res.body.frames[2]).toMatchObject({
      subjects: 1,
      covered: 0,
      uncovered_object_ids: [uncoveredCar],
    });
    expect(res.body.summary).toEqual({
      frames: 5,
      proven: 2,
      by_verdict: { proven: 2, no_audit: 1, no_redacted_copy: 1, uncovered_objects: 1 },
      faces: 1,
      plates: 2,
      regions: 3,
      subjects: 4,
      covered_subjects: 2,
      complete: false,
    });
    expect(res.body.rule).toMatchObject({
      containment_tolerance: 0.25,
      subject_l1: ['vru', 'two_wheeler', 'vehicle'],
    });
    expect(res.body.subject).toEqual({ kind: 'session', id: sessionId, sessions: 1 });
    expect(res.body.evidence_sha256).toMatch(/^[0-9a-f]{64}$/);
    const audited = await stack.api.deps.db.auditLog.findFirstOrThrow({
      where: { action: 'govern.redaction_proved', subjectId: sessionId },
      orderBy: { createdAt: 'desc' },
    });
    expect(audited.detail).toMatchObject({
      evidence_sha256: res.body.evidence_sha256,
      summary: { proven: 2 },
    });
  });

  it('lists a page at a time with the same summary and digest, and a fix shows in the next proof', async () => {
    const whole = await prove({ session_id: sessionId });
    const first = await prove({ session_id: sessionId, limit: 2 });
    const last = await prove({ session_id: sessionId, offset: 4, limit: 2 });
    expect(first.body.frames.map((f: { index: number }) => f.index)).toEqual([0, 1]);
    expect(first.body.next_offset).toBe(2);
    expect(last.body.frames.map((f: { index: number }) => f.index)).toEqual([4]);
    expect(last.body.next_offset).toBeNull();
    expect(first.body.evidence_sha256).toBe(whole.body.evidence_sha256);
    expect(last.body.summary).toEqual(whole.body.summary);
    // The plate of frame 2 redacted where the car is: that frame is proven now, and the digest moves.
    const { db } = stack.api.deps;
    await db.piiAudit.update({
      where: { frameId: frameIds[2]! },
      data: { regions: [{ kind: 'plate', bbox: [36, 30, 46, 34], score: 0.9 }] },
    });
    try {
      const fixed = await prove({ session_id: sessionId });
      expect(fixed.body.frames[2].verdict).toBe('proven');
      expect(fixed.body.summary.proven).toBe(3);
      expect(fixed.body.evidence_sha256).not.toBe(whole.body.evidence_sha256);
    } finally {
      await db.piiAudit.update({
        where: { frameId: frameIds[2]! },
        data: { regions: [{ kind: 'plate', bbox: [0, 0, 6, 3], score: 0.9 }] },
      });
    }
  });

  it('proves a dataset commit over the frames its frames table lists', async () => {
    const res = await prove({ commit_id: commitId });
    expect(res.status).toBe(200);
    expect(res.body.subject).toEqual({ kind: 'commit', id: commitId, sessions: 1 });
    expect(res.body.frames.map((f: { frame_id: string }) => f.frame_id)).toEqual([frameIds[0], frameIds[4]]);
    expect(res.body.summary).toMatchObject({ frames: 2, proven: 2, complete: true });
  });

  it('refuses what it cannot prove, by name', async () => {
    const none = await prove({});
    expect([none.status, none.body.errors?.[0]?.message]).toEqual([
      422,
      'give exactly one of session_id and commit_id',
    ]);
    expect((await prove({ session_id: sessionId, commit_id: commitId })).status).toBe(422);
    expect((await prove({ session_id: '00000000-0000-4000-8000-00000000beef' })).status).toBe(404);
    expect((await prove({ commit_id: 'e'.repeat(64) })).status).toBe(404);
    expect((await prove({ session_id: sessionId, limit: 0 })).status).toBe(422);
    expect((await prove({ session_id: sessionId }, stack.annotator)).status).toBe(403);
    expect(
      (await stack.api.call('POST', '/api/govern/redaction/proof', { body: { session_id: sessionId } }))
        .status,
    ).toBe(401);
  });
});
