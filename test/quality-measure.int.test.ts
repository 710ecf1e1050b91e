import path from 'node:path';
import { randomUUID } from 'node:crypto';
import type { Db } from '../activities/db';
import { createUserWithToken } from '../testkit/api';
import { startIngestStack, type IngestStack } from '../testkit/media/harness';
import { recordHistoryIfAsked, replayRecordedHistory } from '../testkit/temporal';
import { computeAgreement, type AgreementAnnotation } from '../core/quality/agreement';
import { agreementByClass } from '../core/quality/agreement-by-class';
import { applyCalibration, type CalibrationFit } from '../core/quality/calibration';
import { drawAuditSample } from '../core/quality/precision-audit';
import { cocoInputOf, harnessParity } from '../core/quality/parity';

/**
 * Quality measurement on the real stack (docs/quality-measure.md): agreement on sent annotations
 * and on stored objects of several users, calibration fitted from a session's verdicts and
 * activated (and what it changes in routing and threshold fits), the per-class precision audit,
 * the human queues, harness parity of a run against a gold set, the quality sheet of a slice, the
 * attribute audit, object quality and its backfill workflow.
 */
const HISTORY = path.join(__dirname, 'histories/object-quality-backfill.json');
let stack: IngestStack;
let db: Db;
const classId: Record<string, number> = {};

const api = (method: string, url: string, token: string, body?: unknown) =>
  stack.api.call(method, url, { token, ...(body === undefined ? {} : { body }) });

/** A session with frames of 640×360 made directly in the database (no image is read here). */
async function session(frames: number) {
  const s = await db.session.create({
    data: { name: `qm ${randomUUID().slice(0, 8)}`, sourceKind: 'frames' },
  });
  const ids: string[] = [];
  for (let i = 0; i < frames; i++)
    ids.push(
      (
        await db.frame.create({
          data: {
            sessionId: s.id,
            index: i,
            timestampMs: i * 333,
            width: 640,
            height: 360,
            uri: `s3://frames/qm/${s.id}/${i}.jpg`,
          },
        })
      ).id,
    );
  return { id: s.id, frames: ids };
}

let idem = 0;
/** A machine (fused) object written the way the auto-labeller writes one. */
const machine = (
  frameId: string,
  cls: string,
  conf: number,
  state = 'review',
  bbox: number[] = [10, 10, 60, 60],
) =>
  db.annoObject.create({
    data: { frameId, classId: classId[cls]!, conf, source: 'fused', state, bbox, idemKey: `qm:${++idem}` },
  });

/** An object drawn through the API by the token's user. */
async function draw(token: string, frameId: string, cls: string, bbox: number[]): Promise<string> {
  const res = await api('POST', `/api/frames/${frameId}/objects`, token, { class_name: cls, bbox });
  expect(res.status).toBe(201);
  return res.body.id as string;
}

const review = (ids: string[], action: string) =>
  api('POST', '/api/objects/bulk-review', stack.reviewer, { object_ids: ids, action }).then((r) => {
    expect(r.status).toBe(200);
  });

const verdict = (sampleId: string, v: string) =>
  api('POST', `/api/govern/control/${sampleId}/verdict`, stack.reviewer, { verdict: v }).then((r) => {
    expect(r.status).toBe(200);
  });

beforeAll(async () => {
  stack = await startIngestStack();
  db = stack.api.deps.db;
  for (const c of await db.ontologyClass.findMany()) classId[c.name] = c.id;
}, 120_000);

afterAll(async () => {
  await stack?.close();
});

describe('agreement', () => {
  const annotations: AgreementAnnotation[] = [
    { annotator: 'A', frame_id: 'f0', class: 'car', bbox: [10, 10, 110, 90] },
    { annotator: 'B', frame_id: 'f0', class: 'car', bbox: [12, 10, 112, 92] },
    { annotator: 'C', frame_id: 'f0', class: 'car', bbox: [10, 12, 108, 90] },
    { annotator: 'A', frame_id: 'f0', class: 'bus', bbox: [200, 100, 300, 250] },
    { annotator: 'B', frame_id: 'f0', class: 'truck', bbox: [205, 100, 300, 245] },
    { annotator: 'A', frame_id: 'f1', class: 'person', bbox: [50, 50, 80, 150] },
    { annotator: 'B', frame_id: 'f1', class: 'person', bbox: [52, 50, 82, 150] },
    { annotator: 'C', frame_id: 'f1', class: 'person', bbox: [50, 48, 80, 148] },
    { annotator: 'C', frame_id: 'f1', class: 'car', bbox: [300, 100, 400, 200] },
  ];

  it('equals core on a hand-built input, per class too, and is recorded as an operation', async () => {
    const res = await api('POST', '/api/platform/quality/agreement', stack.annotator, { annotations });
    expect(res.status).toBe(200);
    const expected = computeAgreement({ annotations, iou_thr: 0.5 });
    const { operation_id, by_class, ...report } = res.body;
    expect(report).toEqual(expected);
    expect(by_class).toEqual(agreementByClass({ annotations }));
    expect(expected.class_agreement.krippendorff_alpha).not.toBeNull();
    const latest = await api('GET', '/api/eval/operations/agreement/latest', stack.annotator);
    expect(latest.body).toMatchObject({ id: operation_id, op_type: 'agreement', params: { annotations: 9 } });
    expect(latest.body.result.class_agreement).toEqual(expected.class_agreement);
  });

  it('refuses malformed annotations, one annotator, and unknown fields, naming the field', async () => {
    const bad = async (body: unknown, field: RegExp) => {
      const r = await api('POST', '/api/platform/quality/agreement', stack.annotator, body);
      expect(r.status).toBe(422);
      expect(JSON.stringify(r.body)).toMatch(field);
    };
    await bad(
      { annotations: [{ ...annotations[0], bbox: [1, 2, 3] }, annotations[1]] },
      /annotations\.0\.bbox/,
    );
    await bad({ annotations: [{ ...annotations[0], bbox: [10, 10, 5, 5] }, annotations[1]] }, /x2 ≥ x1/);
    await bad({ annotations: [{ ...annotations[0], extra: 1 }, annotations[1]] }, /extra/);
    await bad({ annotations: [annotations[0], annotations[3]] }, /two annotators/);
    await bad({ annotations, iou_thr: 0 }, /iou_thr/);
    await bad({ annotations: 'nope' }, /annotations/);
  });

  it('over stored objects of three users equals the same numbers, leaving out machine objects and one-annotator frames', async () => {
    const users = await Promise.all([1, 2, 3].map(() => createUserWithToken(stack.api.deps, 'annotator')));
    const s = await session(3);
    const frameOf: Record<string, string> = { f0: s.frames[0]!, f1: s.frames[1]! };
    const user: Record<string, (typeof users)[number]> = { A: users[0]!, B: users[1]!, C: users[2]! };
    for (const a of annotations)
      await draw(user[a.annotator]!.token, frameOf[a.frame_id]!, String(a.class), [...a.bbox]);
    await draw(user.A!.token, s.frames[2]!, 'car', [0, 0, 50, 50]);
    await machine(s.frames[0]!, 'car', 0.9);
    const res = await api('POST', '/api/quality/iaa', stack.annotator, { session_id: s.id });
    expect(res.status).toBe(200);
    const stored = annotations.map((a) => ({
      ...a,
      annotator: user[a.annotator]!.userId,
      frame_id: frameOf[a.frame_id]!,
    }));
    const expected = computeAgreement({ annotations: stored });
    expect(res.body).toMatchObject({
      annotator_by: 'creator',
      left_out: {
        objects_without_annotator: 1,
        frames_with_one_annotator: 1,
        objects_of_other_annotators: 0,
      },
      counts: expected.counts,
      class_agreement: expected.class_agreement,
      localisation: expected.localisation,
      pairs: expected.pairs,
      annotators: expected.annotators,
      by_class: agreementByClass({ annotations: stored }),
    });
    expect(Object.keys(res.body.annotator_names).sort()).toEqual(users.map((u) => u.userId).sort());
    // The same numbers as the hand-built input: only the names differ.
    const handBuilt = computeAgreement({ annotations });
    // (Annotators sort differently by user id, so sums may differ in the last bit.)
    expect(expected.class_agreement.fleiss_kappa).toBeCloseTo(handBuilt.class_agreement.fleiss_kappa!, 12);
    expect(expected.class_agreement.krippendorff_alpha).toBeCloseTo(
      handBuilt.class_agreement.krippendorff_alpha!,
      12,
    );
    expect(expected.localisation.mean_iou).toBeCloseTo(handBuilt.localisation.mean_iou!, 12);
    // Two of the three users: the third one's objects are left out.
    const two = await api('POST', '/api/quality/iaa', stack.annotator, {
      frame_ids: s.frames,
      annotators: [users[0]!.userId, users[1]!.userId],
    });
    expect(two.status).toBe(200);
    const pair = stored.filter((a) => a.annotator !== users[2]!.userId);
    expect(two.body.counts).toEqual(computeAgreement({ annotations: pair }).counts);
    expect(two.body.left_out.objects_of_other_annotators).toBe(3);
    const op = await db.evalOperation.findUniqueOrThrow({ where: { id: res.body.operation_id } });
    expect(op).toMatchObject({ opType: 'iaa' });
    expect(op.subjectIds).toContain(s.id);
  });

  it('answers bad scopes with 4xx', async () => {
    expect(
      (await api('POST', '/api/quality/iaa', stack.annotator, { session_id: randomUUID() })).status,
    ).toBe(404);
    expect(
      (await api('POST', '/api/quality/iaa', stack.annotator, { frame_ids: [randomUUID()] })).status,
    ).toBe(404);
    const s = await session(1);
    expect(
      (await api('POST', '/api/quality/iaa', stack.annotator, { session_id: s.id, frame_ids: s.frames }))
        .status,
    ).toBe(422);
    expect((await api('POST', '/api/quality/iaa', stack.annotator, {})).status).toBe(422);
    // One annotator only: refused by name.
    await draw(stack.annotator, s.frames[0]!, 'car', [1, 1, 20, 20]);
    const single = await api('POST', '/api/quality/iaa', stack.annotator, { session_id: s.id });
    expect(single.status).toBe(422);
    expect(single.body.reason).toBe('single_annotator');
  });
});

describe('calibration', () => {
  let cal: { id: string; frames: string[] };
  let routed: { id: string; frames: string[] };
  const ids: string[] = [];

  beforeAll(async () => {
    // Overconfident: at 0.9 right half the time, at 0.6 right 2 in 10, auto-accepts at 0.95 right 2 in 4.
    cal = await session(2);
    const high = await Promise.all(Array.from({ length: 20 }, () => machine(cal.frames[0]!, 'car', 0.9)));
    const low = await Promise.all(Array.from({ length: 10 }, () => machine(cal.frames[0]!, 'car', 0.6)));
    await review(
      high.slice(0, 10).map((o) => o.id),
      'confirm',
    );
    await review(
      high.slice(10).map((o) => o.id),
      'reject',
    );
    await review(
      low.slice(0, 2).map((o) => o.id),
      'confirm',
    );
    await review(
      low.slice(2).map((o) => o.id),
      'reject',
    );
    // A geometry edit judges nothing.
    const edited = await machine(cal.frames[1]!, 'car', 0.9);
    expect(
      (
        await api('POST', `/api/objects/${edited.id}/review`, stack.reviewer, {
          action: 'edit',
          bbox: [5, 5, 50, 50],
        })
      ).status,
    ).toBe(200);
    for (let i = 0; i < 4; i++) {
      const o = await machine(cal.frames[1]!, 'car', 0.95, 'auto_accept');
      const c = await db.controlSample.create({
        data: { objectId: o.id, sessionId: cal.id, seed: 1, className: 'car', conf: 0.95 },
      });
      await verdict(c.id, i < 2 ? 'correct' : 'wrong_class');
    }
    ids.push(...high.map((o) => o.id));
    routed = await session(1);
    await machine(routed.frames[0]!, 'car', 0.9, 'auto_accept');
  });

  const uncertain = async () => {
    const res = await api('POST', '/api/fusion/uncertainty', stack.annotator, { session_id: routed.id });
    expect(res.status).toBe(200);
    return res.body as {
      uncertain: number;
      objects: Array<{ would_route: { route: string; reason: string } }>;
      policy: any;
    };
  };

  it('is a reviewer’s: an annotator gets 403 and nothing is stored', async () => {
    const res = await api('POST', '/api/quality/calibrate/fit', stack.annotator, { session_id: cal.id });
    expect(res.status).toBe(403);
    expect(await db.calibration.count()).toBe(0);
  });

  it('refuses fewer than 25 verdicts, and bad bodies', async () => {
    const few = await session(1);
    const objs = await Promise.all(Array.from({ length: 5 }, () => machine(few.frames[0]!, 'car', 0.8)));
    await review(
      objs.map((o) => o.id),
      'confirm',
    );
    const res = await api('POST', '/api/quality/calibrate/fit', stack.reviewer, { session_id: few.id });
    expect(res.status).toBe(422);
    expect(res.body).toMatchObject({ reason: 'too_few_verdicts', samples: 5, minimum: 25 });
    const both = await api('POST', '/api/quality/calibrate/fit', stack.reviewer, {
      session_id: few.id,
      gold_id: randomUUID(),
    });
    expect(both.status).toBe(422);
    expect((await api('POST', '/api/quality/calibrate/fit', stack.reviewer, {})).status).toBe(422);
    expect(
      (
        await api('POST', '/api/quality/calibrate/fit', stack.reviewer, {
          session_id: few.id,
          method: 'platt',
        })
      ).status,
    ).toBe(422);
    expect(
      (await api('POST', '/api/quality/calibrate/fit', stack.reviewer, { session_id: randomUUID() })).status,
    ).toBe(404);
    expect(
      (await api('POST', '/api/quality/calibrate/fit', stack.reviewer, { gold_id: randomUUID() })).status,
    ).toBe(404);
    expect(await db.calibration.count()).toBe(0);
  });

  let first: string;
  it('fits from a session’s verdicts, lowers ECE, and once active changes auto-accept routing', async () => {
    const before = await uncertain();
    expect(before.uncertain).toBe(0);
    expect(before.policy.calibration).toBeUndefined();
    const res = await api('POST', '/api/quality/calibrate/fit', stack.reviewer, {
      session_id: cal.id,
      activate: true,
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      active: true,
      samples: 34,
      source: { session_id: cal.id },
      report: { by_origin: { review: 30, control: 4 }, selection: { by: 'cross_validation' } },
    });
    expect(res.body.report.before.ece).toBeCloseTo((24 / 34) * (0.9 + 1 / 120 - 0.5) + (10 / 34) * 0.4, 9);
    expect(res.body.report.after.ece).toBeLessThan(res.body.report.before.ece);
    expect(res.body.report.classes).toEqual([
      expect.objectContaining({ class_name: 'car', samples: 34, map: 'class' }),
    ]);
    first = res.body.calibration_id;
    // The same raw 0.9 car now routes on its calibrated conf (about 0.5): to review.
    const after = await uncertain();
    expect(after.uncertain).toBe(1);
    expect(after.policy.calibration.calibration_id).toBe(first);
    expect(after.objects[0]!.would_route.route).toBe('review');
    expect(after.objects[0]!.would_route.reason).toMatch(
      /^calibrated conf 0\.\d{3} \(raw 0\.900\) in \[0\.35, 0\.8\)/,
    );
  });

  it('keeps one calibration active, and threshold fits fit on calibrated confidences', async () => {
    const second = await api('POST', '/api/quality/calibrate/fit', stack.reviewer, {
      session_id: cal.id,
      method: 'temperature',
      activate: true,
    });
    expect(second.status).toBe(201);
    expect(second.body).toMatchObject({ method: 'temperature', report: { selection: { by: 'request' } } });
    const third = await api('POST', '/api/quality/calibrate/fit', stack.reviewer, {
      session_id: cal.id,
      method: 'isotonic',
    });
    expect(third.body).toMatchObject({ active: false, method: 'isotonic' });
    const active = await db.calibration.findMany({ where: { active: true } });
    expect(active.map((c) => c.id)).toEqual([second.body.calibration_id]);
    expect((await db.calibration.findUniqueOrThrow({ where: { id: first } })).active).toBe(false);
    const fit = await api('POST', '/api/fusion/thresholds/fit', stack.reviewer, { session_ids: [cal.id] });
    expect(fit.status).toBe(201);
    expect(fit.body.evidence).toMatchObject({ calibration_id: second.body.calibration_id });
    expect(
      (await api('GET', '/api/eval/operations/calibration_fit/latest', stack.annotator)).body.subject_ids,
    ).toContain(third.body.calibration_id);
  });
});

describe('precision audit', () => {
  let aud: { id: string; frames: string[] };
  beforeAll(async () => {
    aud = await session(2);
    for (let i = 0; i < 30; i++) await machine(aud.frames[0]!, 'car', 0.9, 'auto_accept');
    for (let i = 0; i < 10; i++) await machine(aud.frames[1]!, 'bus', 0.9, 'auto_accept');
  });

  it('draws a seeded per-class sample reproducibly and reports precision from 25 verdicts', async () => {
    const body = { seed: 99, per_class: 28, session_id: aud.id };
    expect((await api('POST', '/api/platform/quality/audit', stack.annotator, body)).status).toBe(403);
    const res = await api('POST', '/api/platform/quality/audit', stack.reviewer, body);
    expect(res.status).toBe(200);
    const candidates = await db.annoObject.findMany({
      where: { frame: { sessionId: aud.id } },
      select: { id: true, idemKey: true, class: { select: { name: true } } },
    });
    const expected = drawAuditSample(
      candidates.map((c) => ({ object_id: c.id, key: c.idemKey!, class_name: c.class.name })),
      99,
      28,
    );
    const controls = await db.controlSample.findMany({ where: { sessionId: aud.id } });
    expect(controls.map((c) => c.objectId).sort()).toEqual(
      [...expected.values()]
        .flat()
        .map((c) => c.object_id)
        .sort(),
    );
    expect(res.body).toMatchObject({
      drawn_now: true,
      controls_created: 38,
      overall: { status: 'not_yet_measurable' },
    });
    const car = res.body.classes.find((c: { class_name: string }) => c.class_name === 'car');
    expect(car).toMatchObject({
      candidates: 30,
      sampled: 28,
      status: 'not_yet_measurable',
      reviewed: 0,
      pending: 28,
    });
    // Verdicts on 25 of the car controls: 20 right, 5 wrong.
    const carControls = controls
      .filter((c) => c.className === 'car')
      .sort((a, b) => a.id.localeCompare(b.id));
    for (const [i, c] of carControls.slice(0, 25).entries())
      await verdict(c.id, i < 20 ? 'correct' : 'bad_box');
    const again = await api('POST', '/api/platform/quality/audit', stack.reviewer, body);
    expect(again.body).toMatchObject({ drawn_now: false, controls_created: 0 });
    const car2 = again.body.classes.find((c: { class_name: string }) => c.class_name === 'car');
    expect(car2).toMatchObject({ status: 'measured', reviewed: 25, correct: 20, pending: 3, awaiting: 3 });
    expect(car2.precision).toBeCloseTo(21 / 27, 12);
    expect(again.body.classes.find((c: { class_name: string }) => c.class_name === 'bus')).toMatchObject({
      sampled: 10,
      status: 'not_yet_measurable',
      precision: null,
    });
    expect(await db.controlSample.count({ where: { sessionId: aud.id } })).toBe(38);
  });

  it('answers unknown classes and sessions with 404 and bad sizes with 422', async () => {
    const unknown = await api('POST', '/api/platform/quality/audit', stack.reviewer, {
      classes: ['no-such-class'],
    });
    expect(unknown.status).toBe(404);
    expect(
      (await api('POST', '/api/platform/quality/audit', stack.reviewer, { session_id: randomUUID() })).status,
    ).toBe(404);
    expect((await api('POST', '/api/platform/quality/audit', stack.reviewer, { per_class: 0 })).status).toBe(
      422,
    );
  });
});

describe('human queues', () => {
  it('counts what waits, per state, class and session, with the oldest age', async () => {
    const q = await session(2);
    const waiting = [
      await machine(q.frames[0]!, 'car', 0.5, 'review'),
      await machine(q.frames[0]!, 'car', 0.5, 'review'),
      await machine(q.frames[0]!, 'car', 0.5, 'review'),
      await machine(q.frames[1]!, 'bus', 0.2, 'annotate'),
      await machine(q.frames[1]!, 'bus', 0.2, 'annotate'),
      await machine(q.frames[1]!, 'car', 0.5, 'submitted'),
    ];
    await machine(q.frames[1]!, 'car', 0.5, 'accepted');
    await db.$executeRaw`UPDATE objects SET updated_at = now() - interval '2 hours' WHERE id = ${waiting[3]!.id}::uuid`;
    const controlled = await machine(q.frames[1]!, 'car', 0.95, 'auto_accept');
    await db.controlSample.create({
      data: { objectId: controlled.id, sessionId: q.id, seed: 1, className: 'car' },
    });
    const run = await db.errorRun.create({ data: { scope: {}, status: 'completed' } });
    for (const [kind, state] of [
      ['label_flip', 'open'],
      ['missing', 'open'],
      ['duplicate', 'dismissed'],
    ] as const)
      await db.errorCandidate.create({
        data: { errorRunId: run.id, kind, frameId: q.frames[0]!, score: 0.5, proposed: {}, state },
      });
    const audit = await db.blindAudit.create({ data: { name: 'blind', seed: 1, spec: {} } });
    for (const [i, v] of [null, null, 'correct'].entries())
      await db.blindAuditItem.create({
        data: {
          auditId: audit.id,
          objectId: waiting[i]!.id,
          frameId: q.frames[0]!,
          classId: classId.car!,
          hidden: {},
          verdict: v,
        },
      });
    const res = await api('GET', `/api/platform/queue?session_id=${q.id}`, stack.annotator);
    expect(res.status).toBe(200);
    const b = res.body;
    expect(b.objects).toMatchObject({
      count: 6,
      sessions_waiting: 1,
      by_state: { review: { count: 3 }, annotate: { count: 2 }, submitted: { count: 1 } },
    });
    expect(b.objects.oldest_age_s).toBeGreaterThanOrEqual(7200);
    expect(b.objects.by_state.annotate.oldest_age_s).toBeGreaterThanOrEqual(7200);
    expect(b.objects.by_state.review.oldest_age_s).toBeLessThan(3600);
    expect(b.objects.by_class).toEqual([
      expect.objectContaining({
        class_name: 'car',
        count: 4,
        by_state: { review: 3, annotate: 0, submitted: 1 },
      }),
      expect.objectContaining({
        class_name: 'bus',
        count: 2,
        by_state: { review: 0, annotate: 2, submitted: 0 },
      }),
    ]);
    expect(b.objects.by_session).toEqual([expect.objectContaining({ session_id: q.id, count: 6 })]);
    expect(b.controls).toMatchObject({ count: 1, by_class: [{ class_name: 'car', count: 1 }] });
    expect(b.error_candidates).toMatchObject({ count: 2, by_kind: { label_flip: 1, missing: 1 } });
    expect(b.blind_audit_items).toMatchObject({ count: 2, by_audit: [{ audit_id: audit.id, count: 2 }] });
    expect(b.totals.waiting).toBe(11);
    const all = await api('GET', '/api/platform/queue', stack.annotator);
    expect(all.body.objects.count).toBeGreaterThanOrEqual(6);
    expect((await api('GET', `/api/platform/queue?session_id=${randomUUID()}`, stack.annotator)).status).toBe(
      404,
    );
    expect((await api('GET', '/api/platform/queue?session_id=nope', stack.annotator)).status).toBe(422);
    expect((await api('GET', '/api/platform/queue?extra=1', stack.annotator)).status).toBe(422);
  });
});

describe('harness parity', () => {
  let goldId: string;
  let runId: string;
  const gold = { frames: [] as string[] };
  const preds = [
    { f: 0, cls: 'car', bbox: [11, 11, 109, 91], conf: 0.9 },
    { f: 0, cls: 'bus', bbox: [205, 105, 295, 245], conf: 0.8 },
    { f: 0, cls: 'car', bbox: [400, 200, 450, 260], conf: 0.4 },
    { f: 1, cls: 'car', bbox: [302, 198, 398, 303], conf: 0.7 },
  ];

  beforeAll(async () => {
    const g = await session(2);
    gold.frames = g.frames;
    await draw(stack.reviewer, g.frames[0]!, 'car', [10, 10, 110, 90]);
    await draw(stack.reviewer, g.frames[0]!, 'bus', [200, 100, 300, 250]);
    await draw(stack.reviewer, g.frames[1]!, 'car', [300, 200, 400, 300]);
    const confirmed = await machine(g.frames[0]!, 'car', 0.8, 'review', [500, 20, 600, 100]);
    const rejected = await machine(g.frames[1]!, 'truck', 0.7, 'review', [500, 50, 560, 120]);
    await review([confirmed.id], 'confirm');
    await review([rejected.id], 'reject');
    const sealed = await api('POST', '/api/quality/gold/seal', stack.reviewer, {
      name: 'parity',
      frame_ids: g.frames,
    });
    expect(sealed.status).toBe(201);
    goldId = sealed.body.id;
    const run = await db.inferenceRun.create({
      data: { modelVersion: 'parity-model@1', status: 'completed', origin: 'imported' },
    });
    runId = run.id;
    await db.prediction.createMany({
      data: preds.map((p) => ({
        runId,
        frameId: g.frames[p.f]!,
        classId: classId[p.cls]!,
        conf: p.conf,
        bbox: p.bbox,
      })),
    });
  });

  it('finds both harnesses within the configured epsilon on a normal run, recorded as `parity`', async () => {
    const res = await api('POST', '/api/platform/reconcile/parity', stack.reviewer, {
      run_id: runId,
      gold_id: goldId,
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      within: true,
      epsilon: 1e-6,
      images: 2,
      ground_truth: 4,
      detections: 4,
      diverging: [],
    });
    const items = await db.goldItem.findMany({ where: { goldId } });
    const expected = harnessParity(
      cocoInputOf(
        gold.frames.map((f) => ({ frame_id: f, width: 640, height: 360 })),
        items.map((i) => ({ frame_id: i.frameId, class_id: i.classId, bbox: i.bbox })),
        preds.map((p) => ({
          frame_id: gold.frames[p.f]!,
          class_id: classId[p.cls]!,
          bbox: p.bbox,
          conf: p.conf,
        })),
      ),
      1e-6,
    );
    expect(res.body.primary).toEqual(expected.primary);
    expect(res.body.primary.headline.AP).toBeGreaterThan(0);
    expect(res.body.divergences).toHaveLength(10 + expected.primary.perCategoryAp.length);
    const op = await api('GET', `/api/eval/operations/parity/latest?subject_id=${runId}`, stack.annotator);
    expect(op.body).toMatchObject({
      id: res.body.operation_id,
      params: { epsilon: 1e-6 },
      result: { within: true },
    });
    const zero = await api('POST', '/api/platform/reconcile/parity', stack.reviewer, {
      run_id: runId,
      gold_id: goldId,
      epsilon: 0.5,
    });
    expect(zero.body).toMatchObject({ epsilon: 0.5, within: true });
  });

  it('refuses a reconstructed run by name, a running one, unknown ids, a negative epsilon and annotators', async () => {
    const rebuilt = await db.inferenceRun.create({
      data: { modelVersion: 'x', status: 'completed', origin: 'reconstructed', reconstructed: true },
    });
    const r = await api('POST', '/api/platform/reconcile/parity', stack.reviewer, {
      run_id: rebuilt.id,
      gold_id: goldId,
    });
    expect(r.status).toBe(422);
    expect(r.body.reason).toBe('reconstructed');
    const running = await db.inferenceRun.create({ data: { modelVersion: 'y', status: 'running' } });
    expect(
      (
        await api('POST', '/api/platform/reconcile/parity', stack.reviewer, {
          run_id: running.id,
          gold_id: goldId,
        })
      ).status,
    ).toBe(409);
    expect(
      (
        await api('POST', '/api/platform/reconcile/parity', stack.reviewer, {
          run_id: randomUUID(),
          gold_id: goldId,
        })
      ).status,
    ).toBe(404);
    expect(
      (
        await api('POST', '/api/platform/reconcile/parity', stack.reviewer, {
          run_id: runId,
          gold_id: randomUUID(),
        })
      ).status,
    ).toBe(404);
    expect(
      (
        await api('POST', '/api/platform/reconcile/parity', stack.reviewer, {
          run_id: runId,
          gold_id: goldId,
          epsilon: -1,
        })
      ).status,
    ).toBe(422);
    expect(
      (
        await api('POST', '/api/platform/reconcile/parity', stack.annotator, {
          run_id: runId,
          gold_id: goldId,
        })
      ).status,
    ).toBe(403);
  });

  it('gathers a gold set’s verdicts for calibration: confirmed proposals and rejected ones', async () => {
    const res = await api('POST', '/api/quality/calibrate/fit', stack.reviewer, { gold_id: goldId });
    expect(res.status).toBe(422);
    expect(res.body).toMatchObject({
      samples: 2,
      by_origin: { gold_confirmed: 1, gold_rejected: 1, review: 0, control: 0 },
    });
  });
});

describe('quality sheet and attribute audit', () => {
  it('reports a slice per class and in total as constructed', async () => {
    const s = await session(2);
    await draw(stack.reviewer, s.frames[0]!, 'car', [10, 10, 100, 100]);
    await draw(stack.reviewer, s.frames[0]!, 'car', [200, 10, 300, 100]);
    expect(
      (
        await api('POST', '/api/quality/gold/seal', stack.reviewer, {
          name: 'sheet',
          frame_ids: [s.frames[0]],
        })
      ).status,
    ).toBe(201);
    const auto = await machine(s.frames[1]!, 'car', 0.95, 'auto_accept');
    const doubted = await machine(s.frames[1]!, 'car', 0.6, 'review');
    await draw(stack.reviewer, s.frames[1]!, 'bus', [300, 100, 400, 200]);
    await machine(s.frames[1]!, 'bus', 0.95, 'auto_accept');
    const c = await db.controlSample.create({
      data: { objectId: auto.id, sessionId: s.id, seed: 1, className: 'car', conf: 0.95 },
    });
    await verdict(c.id, 'correct');
    const run = await db.errorRun.create({ data: { scope: {}, status: 'completed' } });
    await db.errorCandidate.create({
      data: {
        errorRunId: run.id,
        kind: 'label_flip',
        frameId: s.frames[1]!,
        objectIds: [doubted.id],
        score: 0.6,
        proposed: {},
      },
    });
    const slice = await db.slice.create({ data: { name: 'sheet', predicate: { session_ids: [s.id] } } });
    const res = await api('GET', `/api/quality/sheet?slice_id=${slice.id}`, stack.annotator);
    expect(res.status).toBe(200);
    const car = res.body.classes.find((x: { class_name: string }) => x.class_name === 'car');
    const bus = res.body.classes.find((x: { class_name: string }) => x.class_name === 'bus');
    expect(car).toMatchObject({
      objects: 4,
      human_verified: { count: 2, share: 0.5 },
      auto_accept: { count: 1, share: 0.25 },
      gold: { objects: 2, coverage: 0.5 },
      open_error_candidates: 1,
      control_precision: { status: 'not_yet_measurable', reviewed: 1, correct: 1, precision: null },
    });
    expect(bus).toMatchObject({
      objects: 2,
      human_verified: { count: 1, share: 0.5 },
      auto_accept: { count: 1, share: 0.5 },
      gold: { objects: 0, coverage: 0 },
      open_error_candidates: 0,
      control_precision: { reviewed: 0, pending: 0 },
    });
    expect(res.body.totals).toMatchObject({
      objects: 6,
      classes: 2,
      human_verified: { count: 3, share: 0.5 },
      auto_accept: { count: 2 },
      gold: { objects: 2 },
      open_error_candidates: 1,
      control_precision: { reviewed: 1 },
    });
    // The latest agreement operation's per-class figure, and the active calibration's ECE for the class.
    const latest = await db.evalOperation.findFirstOrThrow({
      where: { opType: { in: ['iaa', 'agreement'] } },
      orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
    });
    const byClass = (latest.result as { by_class: Record<string, { agreement: number | null }> }).by_class;
    expect(car.agreement).toMatchObject({ operation_id: latest.id, agreement: byClass.car!.agreement });
    const active = await db.calibration.findFirstOrThrow({ where: { active: true } });
    const eceCar = (
      active.report as { classes: Array<{ class_id: number; ece_before: number; ece_after: number }> }
    ).classes.find((x) => x.class_id === classId.car)!;
    expect(car.calibration_ece).toMatchObject({ before: eceCar.ece_before, after: eceCar.ece_after });
    expect(bus.calibration_ece).toBeNull();
    expect(res.body.totals.calibration).toMatchObject({ calibration_id: active.id });
    const corpus = await api('GET', '/api/quality/sheet', stack.annotator);
    expect(corpus.status).toBe(200);
    expect(corpus.body.totals.objects).toBeGreaterThan(6);
    expect((await api('GET', `/api/quality/sheet?slice_id=${randomUUID()}`, stack.annotator)).status).toBe(
      404,
    );
  });

  it('audits a session’s attributes: completeness, values, track conflicts and class deviants', async () => {
    const s = await session(3);
    const track = await db.track.create({ data: { sessionId: s.id, trackerVersion: 'test' } });
    const tracked = [];
    for (const [i, occluded] of [false, false, true].entries())
      tracked.push(
        await db.annoObject.create({
          data: {
            frameId: s.frames[i]!,
            classId: classId.car!,
            source: 'human',
            state: 'accepted',
            bbox: [1, 1, 20, 20],
            attrs: { occluded, color: 'red' },
            trackId: track.id,
          },
        }),
      );
    for (let i = 0; i < 3; i++)
      await db.annoObject.create({
        data: {
          frameId: s.frames[0]!,
          classId: classId.car!,
          source: 'human',
          state: 'accepted',
          bbox: [1, 1, 9, 9],
          attrs: { occluded: false },
        },
      });
    await db.annoObject.create({
      data: {
        frameId: s.frames[0]!,
        classId: classId.car!,
        source: 'human',
        state: 'accepted',
        bbox: [1, 1, 9, 9],
      },
    });
    const res = await api('GET', `/api/quality/attr-audit/${s.id}`, stack.annotator);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ session_id: s.id, objects: 7, tracked_objects: 3 });
    const [car] = res.body.classes;
    expect(car.class_name).toBe('car');
    expect(car.keys.occluded).toMatchObject({
      present: 6,
      completeness: 6 / 7,
      distinct: 2,
      values: [
        { value: false, count: 5 },
        { value: true, count: 1 },
      ],
      majority: { value: false, share: 5 / 6 },
      track_conflicts: { tracks: 1, objects: 1, object_ids: [tracked[2]!.id] },
      class_deviants: { objects: 1, object_ids: [tracked[2]!.id] },
    });
    expect(car.keys.color).toMatchObject({ present: 3, completeness: 3 / 7, track_conflicts: { tracks: 0 } });
    expect((await api('GET', `/api/quality/attr-audit/${randomUUID()}`, stack.annotator)).status).toBe(404);
    const bad = await api('GET', '/api/quality/attr-audit/not-a-uuid', stack.annotator);
    expect(bad.status).toBe(422);
    expect(JSON.stringify(bad.body)).toMatch(/path\.session_id/);
  });
});

describe('object quality', () => {
  it('reflects a control verdict and an open error candidate, with the calibrated confidence, and stores its row', async () => {
    const s = await session(1);
    const wrong = await machine(s.frames[0]!, 'car', 0.9, 'auto_accept');
    const c = await db.controlSample.create({
      data: { objectId: wrong.id, sessionId: s.id, seed: 1, className: 'car', conf: 0.9 },
    });
    await verdict(c.id, 'bad_box');
    const judged = await api('GET', `/api/objects/${wrong.id}/quality`, stack.annotator);
    expect(judged.status).toBe(200);
    expect(judged.body).toMatchObject({
      object_id: wrong.id,
      score: 0,
      basis: 'judged_wrong',
      control: { sample_id: c.id, verdict: 'bad_box' },
    });

    const doubted = await machine(s.frames[0]!, 'car', 0.7, 'review');
    await db.provenance.create({
      data: {
        objectId: doubted.id,
        paths: ['closed_set'],
        agreement: 0.5,
        entropy: 0,
        qualityFlags: ['critic:geometric'],
      },
    });
    const run = await db.errorRun.create({ data: { scope: {}, status: 'completed' } });
    const cand = await db.errorCandidate.create({
      data: {
        errorRunId: run.id,
        kind: 'bad_box',
        frameId: s.frames[0]!,
        objectIds: [doubted.id],
        score: 0.6,
        proposed: {},
      },
    });
    const res = await api('GET', `/api/objects/${doubted.id}/quality`, stack.annotator);
    expect(res.status).toBe(200);
    const active = await db.calibration.findFirstOrThrow({ where: { active: true } });
    const calibrated = applyCalibration(active.fit as unknown as CalibrationFit, classId.car!, 0.7);
    expect(res.body).toMatchObject({
      basis: 'machine_confidence',
      calibration_id: active.id,
      critic_vetoes: ['geometric'],
      open_error_candidates: [{ id: cand.id, kind: 'bad_box', score: 0.6 }],
      control: null,
      gold_sets: [],
      provenance: { agreement: 0.5 },
    });
    expect(res.body.calibrated_conf).toBeCloseTo(calibrated, 12);
    expect(res.body.score).toBeCloseTo(calibrated * 0.75 * 0.7 * 0.7, 12);
    const row = await db.objectQuality.findUniqueOrThrow({ where: { objectId: doubted.id } });
    expect(row.score).toBeCloseTo(res.body.score, 12);
    // Dismissing the candidate lifts its factor on the next computation.
    await db.errorCandidate.update({ where: { id: cand.id }, data: { state: 'dismissed' } });
    const lifted = await api('GET', `/api/objects/${doubted.id}/quality`, stack.annotator);
    expect(lifted.body.score).toBeCloseTo(calibrated * 0.75 * 0.7, 12);
    expect((await db.objectQuality.findUniqueOrThrow({ where: { objectId: doubted.id } })).score).toBeCloseTo(
      lifted.body.score,
      12,
    );
    expect((await api('GET', `/api/objects/${randomUUID()}/quality`, stack.annotator)).status).toBe(404);
    expect((await api('GET', '/api/objects/nope/quality', stack.annotator)).status).toBe(422);
  });

  it('backfills missing rows in the request, and as a workflow when asked', async () => {
    const s = await session(1);
    const objs = await Promise.all([0.3, 0.5, 0.8].map((c) => machine(s.frames[0]!, 'bus', c)));
    expect(
      (await api('POST', '/api/objects/quality/backfill', stack.annotator, { session_id: s.id })).status,
    ).toBe(403);
    const res = await api('POST', '/api/objects/quality/backfill', stack.reviewer, { session_id: s.id });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ due: 3, computed: 3, scope: 'missing' });
    expect(await db.objectQuality.count({ where: { objectId: { in: objs.map((o) => o.id) } } })).toBe(3);
    const again = await api('POST', '/api/objects/quality/backfill', stack.reviewer, { session_id: s.id });
    expect(again.body).toMatchObject({ due: 0, computed: 0 });
    await machine(s.frames[0]!, 'bus', 0.6);
    const bg = await api('POST', '/api/objects/quality/backfill', stack.reviewer, {
      session_id: s.id,
      scope: 'all',
      background: true,
    });
    expect(bg.status).toBe(202);
    expect(bg.headers.get('location')).toBe('/api/eval/operations?op_type=object_quality_backfill');
    expect(bg.body).toMatchObject({ workflow_id: `object-quality-backfill-${s.id}-all`, due: 4 });
    const handle = stack.env.client.workflow.getHandle(bg.body.workflow_id);
    expect(await handle.result()).toEqual({ computed: 4 });
    expect(await db.objectQuality.count({ where: { object: { frame: { sessionId: s.id } } } })).toBe(4);
    const op = await api(
      'GET',
      `/api/eval/operations/object_quality_backfill/latest?subject_id=${s.id}`,
      stack.annotator,
    );
    expect(op.body).toMatchObject({
      result: { computed: 4 },
      params: { scope: 'all', workflow_id: bg.body.workflow_id },
    });
    await recordHistoryIfAsked(HISTORY, () => handle.fetchHistory());
    await expect(
      replayRecordedHistory(HISTORY, require.resolve('../workflows'), 'recorded'),
    ).resolves.toBeUndefined();
    expect(
      (await api('POST', '/api/objects/quality/backfill', stack.reviewer, { session_id: randomUUID() }))
        .status,
    ).toBe(404);
    expect(
      (await api('POST', '/api/objects/quality/backfill', stack.reviewer, { scope: 'some' })).status,
    ).toBe(422);
  });
});
