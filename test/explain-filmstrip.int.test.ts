import { randomUUID } from 'node:crypto';
import { createFrame, removeTestBlobs } from '../testkit/annotations';
import { useApiForFile } from '../testkit/api';
import { queueScore } from '../core/review/ranking';
import type { ThresholdFigure } from '../core/routing/thresholds';

/**
 * GET /api/objects/{object_id}/explain and GET /api/frames/{frame_id}/filmstrip against the real
 * PostgreSQL and MinIO (docs/annotations.md, Explain and filmstrip). The explanation is checked
 * against what the review queue itself answers, and the threshold against fits activated through
 * the fusion routes; the filmstrip against the session's frames as they were made.
 */
const ctx = useApiForFile();

interface QueueItem {
  object_id: string;
  score: number;
  uncertainty: number;
  rarity: number;
  state: string;
}

describe('explain and filmstrip', () => {
  /** Frames of the main session, by index. */
  const strip: string[] = [];
  let otherSessionFrame: string;
  const obj: Record<string, string> = {};
  let classIds: Record<string, number>;

  const machine = async (
    key: string,
    frameId: string,
    className: string,
    conf: number | null,
    state: string,
  ): Promise<string> => {
    const id = randomUUID();
    await ctx.api.deps.db.annoObject.create({
      data: {
        id,
        frameId,
        bbox: [10, 10, 50, 50],
        classId: classIds[className]!,
        conf,
        source: 'fused',
        state,
      },
    });
    obj[key] = id;
    return id;
  };

  beforeAll(async () => {
    const { deps } = ctx.api;
    classIds = Object.fromEntries(
      (await deps.db.ontologyClass.findMany({ where: { name: { in: ['car', 'bus', 'person'] } } })).map(
        (c) => [c.name, c.id],
      ),
    );
    const first = await createFrame(deps);
    strip.push(first.frame.id);
    for (let i = 1; i < 7; i++)
      strip.push((await createFrame(deps, { sessionId: first.sessionId })).frame.id);
    await deps.db.frame.update({
      where: { id: strip[2]! },
      data: { redactedUri: 's3://redacted/test/f2.jpg' },
    });
    const other = await createFrame(deps);
    otherSessionFrame = other.frame.id;

    // Frame 0: three cars awaiting review and one accepted; frame 1: two buses of one confidence
    // (equal scores, so the id decides their order) and a rejected one; frame 3: an auto-accepted
    // car and, below, a person drawn by an annotator. The other session makes cars common.
    await machine('car50', strip[0]!, 'car', 0.5, 'review');
    await machine('car70', strip[0]!, 'car', 0.7, 'review');
    await machine('car90', strip[0]!, 'car', 0.9, 'review');
    await machine('carAccepted', strip[0]!, 'car', 0.95, 'accepted');
    await machine('busA', strip[1]!, 'bus', 0.6, 'review');
    await machine('busB', strip[1]!, 'bus', 0.6, 'review');
    await machine('busRejected', strip[1]!, 'bus', 0.3, 'rejected');
    await machine('carAuto', strip[3]!, 'car', 0.97, 'auto_accept');
    for (let i = 0; i < 8; i++)
      await machine(`common${i}`, otherSessionFrame, 'car', 0.4 + i * 0.05, 'review');
    const drawn = await ctx.api.call('POST', `/api/frames/${strip[3]}/objects`, {
      token: ctx.token.annotator,
      body: { class_name: 'person', bbox: [100, 100, 150, 200] },
    });
    expect(drawn.status).toBe(201);
    expect(drawn.body.state).toBe('submitted');
    obj.person = drawn.body.id;

    // An older and a newer provenance for car70: the explanation must read the newer one.
    await deps.db.provenance.create({
      data: {
        objectId: obj.car70!,
        paths: ['closed_set'],
        rawConfidences: { closed_set: 0.4 },
        agreement: 0.5,
        entropy: 1.2,
        qualityFlags: ['stale'],
        reasonerTrace: { route: { state: 'annotate', reason: 'old', demoted_by_critic: false } },
        createdAt: new Date(Date.now() - 60_000),
      },
    });
    await deps.db.provenance.create({
      data: {
        objectId: obj.car70!,
        paths: ['closed_set', 'open_vocab'],
        rawConfidences: { closed_set: 0.72, open_vocab: 0.68 },
        agreement: 1,
        entropy: 0.25,
        qualityFlags: ['unverified'],
        reasonerTrace: {
          paths_ran: ['closed_set', 'open_vocab'],
          route: { state: 'review', reason: 'conf 0.700 in [0.35, 0.8)', demoted_by_critic: true },
          critic: {
            vetoes: [{ check: 'geometric', reason: 'box too small for its distance' }],
            ran: ['geometric', 'relationship'],
            skipped: [{ check: 'temporal', reason: 'no previous frame in this run' }],
          },
          verifier: { status: 'failed', reason: 'the verifier gave no answer for it' },
        },
      },
    });
  });
  afterAll(async () => {
    if (ctx.api) await removeTestBlobs(ctx.api.deps);
  });

  const explain = (id: string, token = ctx.token.annotator) =>
    ctx.api.call('GET', `/api/objects/${id}/explain`, { token });

  describe('GET /api/objects/{object_id}/explain', () => {
    it("gives every queued object the triage list's score, factors and position", async () => {
      const triage = await ctx.api.call('GET', '/api/triage?limit=500', { token: ctx.token.annotator });
      expect(triage.status).toBe(200);
      const items = triage.body.items as QueueItem[];
      expect(items).toHaveLength(14);
      // The tie is real: both buses score the same, so the position depends on the id order.
      const buses = items.filter((i) => i.object_id === obj.busA || i.object_id === obj.busB);
      expect(buses[0]!.score).toBe(buses[1]!.score);
      for (const [k, item] of items.entries()) {
        const res = await explain(item.object_id);
        expect(res.status).toBe(200);
        expect(res.body.queue).toMatchObject({
          score: item.score,
          uncertainty: item.uncertainty,
          rarity: item.rarity,
          states: ['review', 'submitted'],
          in_queue: true,
          position: k + 1,
        });
        expect(res.body.state).toBe(item.state);
      }
    });

    it('scores an object outside the queue from the live class distribution, with no position', async () => {
      const res = await explain(obj.carAccepted!);
      expect(res.status).toBe(200);
      const total = await ctx.api.deps.db.annoObject.count();
      const cars = await ctx.api.deps.db.annoObject.count({ where: { classId: classIds.car } });
      expect(res.body).toMatchObject({
        object_id: obj.carAccepted,
        frame_id: strip[0],
        state: 'accepted',
        source: 'fused',
        conf: 0.95,
        version: 1,
        class: { id: classIds.car, name: 'car', l1: expect.any(String) },
        queue: { class_count: cars, total_objects: total, in_queue: false, position: null },
      });
      expect(res.body.queue.score).toBeCloseTo(queueScore(0.95, cars, total), 12);
      expect(res.body.queue.score).toBeCloseTo(res.body.queue.uncertainty * res.body.queue.rarity, 12);
    });

    it("reads the object's newest provenance and its reasoner trace", async () => {
      const res = await explain(obj.car70!);
      const newest = await ctx.api.deps.db.provenance.findFirst({
        where: { objectId: obj.car70! },
        orderBy: { createdAt: 'desc' },
      });
      expect(res.body.provenance).toEqual({
        id: newest!.id,
        created_at: newest!.createdAt.toISOString(),
        paths: ['closed_set', 'open_vocab'],
        raw_confidences: { closed_set: 0.72, open_vocab: 0.68 },
        agreement: 1,
        entropy: 0.25,
        quality_flags: ['unverified'],
        route: { state: 'review', reason: 'conf 0.700 in [0.35, 0.8)', demoted_by_critic: true },
        critic: {
          vetoes: [{ check: 'geometric', reason: 'box too small for its distance' }],
          ran: ['geometric', 'relationship'],
          skipped: [{ check: 'temporal', reason: 'no previous frame in this run' }],
        },
        verifier: { status: 'failed', reason: 'the verifier gave no answer for it' },
      });
    });

    it('answers nulls, not zeros, for an object a person drew', async () => {
      const res = await explain(obj.person!);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ source: 'human', state: 'submitted', conf: null });
      expect(res.body.queue.uncertainty).toBe(1);
      expect(res.body.provenance).toEqual({
        id: null,
        created_at: null,
        paths: null,
        raw_confidences: null,
        agreement: null,
        entropy: null,
        quality_flags: null,
        route: null,
        critic: null,
        verifier: null,
      });
      expect(res.body.threshold.clears).toBeNull();
      // A machine object without provenance reads the same.
      expect((await explain(obj.car50!)).body.provenance.paths).toBeNull();
    });

    it('answers 404 for an unknown object, 422 for a malformed id, 401 without a token', async () => {
      const missing = await explain(randomUUID());
      expect(missing.status).toBe(404);
      expect(missing.headers.get('content-type')).toMatch(/problem\+json/);
      const malformed = await explain('not-a-uuid');
      expect(malformed.status).toBe(422);
      expect(JSON.stringify(malformed.body)).toContain('path.object_id');
      expect((await ctx.api.call('GET', `/api/objects/${obj.car50}/explain`)).status).toBe(401);
    });

    describe('the threshold in force', () => {
      const figure = (status: ThresholdFigure['status'], threshold: number | null): ThresholdFigure => ({
        status,
        threshold,
        judged: 40,
        correct: 38,
        at_threshold: threshold === null ? null : { judged: 30, correct: 30, precision: 31 / 32 },
        coverage: threshold === null ? 0 : 0.75,
        precision_all: 39 / 42,
        reason: 'fixture',
      });
      const activate = async (global: ThresholdFigure, classes: Record<string, ThresholdFigure>) => {
        const fit = await ctx.api.deps.db.thresholdFit.create({
          data: {
            targetPrecision: 0.95,
            minSamples: 25,
            global: global as never,
            classes: classes as never,
          },
        });
        const res = await ctx.api.call('POST', `/api/fusion/thresholds/${fit.id}/activate`, {
          token: ctx.token.admin,
        });
        expect(res.status).toBe(200);
        return fit.id;
      };
      const policyNow = async () =>
        (await ctx.api.call('GET', '/api/fusion/thresholds', { token: ctx.token.annotator })).body
          .routing_defaults as { auto_accept_conf: number; review_low: number; require_agreement: boolean };

      it('is the configured one while no fit is active', async () => {
        const configured = ctx.api.deps.config.autolabel.autoAcceptConf;
        const high = await explain(obj.car90!);
        expect(high.body.threshold).toMatchObject({
          class_name: 'car',
          value: configured,
          source: 'configured',
          basis: 'configured',
          clears: 0.9 >= configured,
          policy: { threshold_fit_id: null },
        });
        expect((await explain(obj.car70!)).body.threshold.clears).toBe(0.7 >= configured);
        const policy = await policyNow();
        expect(high.body.threshold.policy).toMatchObject({
          auto_accept_conf: policy.auto_accept_conf,
          review_low: policy.review_low,
          require_agreement: policy.require_agreement,
        });
      });

      it("follows an active fit: a class's fitted threshold, a never-class, the configured fallback", async () => {
        const configured = ctx.api.deps.config.autolabel.autoAcceptConf;
        const fitId = await activate(figure('insufficient', null), {
          car: figure('fitted', 0.65),
          bus: figure('unreachable', null),
        });
        expect((await explain(obj.car70!)).body.threshold).toMatchObject({
          value: 0.65,
          source: fitId,
          basis: 'class_fit',
          clears: true,
          policy: { auto_accept_conf: configured, threshold_fit_id: fitId },
        });
        expect((await explain(obj.car50!)).body.threshold).toMatchObject({ value: 0.65, clears: false });
        expect((await explain(obj.busA!)).body.threshold).toMatchObject({
          class_name: 'bus',
          value: null,
          source: fitId,
          basis: 'class_fit',
          clears: false,
        });
        // The fit fitted no global threshold, so a class outside it keeps the configured one.
        expect((await explain(obj.person!)).body.threshold).toMatchObject({
          value: configured,
          source: 'configured',
          basis: 'configured',
        });
      });

      it("credits a fit's global threshold to the classes it did not fit", async () => {
        const fitId = await activate(figure('fitted', 0.75), { bus: figure('fitted', 0.55) });
        expect((await explain(obj.car70!)).body.threshold).toMatchObject({
          value: 0.75,
          source: fitId,
          basis: 'global_fit',
          clears: false,
        });
        expect((await explain(obj.busB!)).body.threshold).toMatchObject({
          value: 0.55,
          source: fitId,
          basis: 'class_fit',
          clears: true,
        });
        const policy = await policyNow();
        expect((await explain(obj.car90!)).body.threshold.policy).toEqual({
          auto_accept_conf: policy.auto_accept_conf,
          review_low: policy.review_low,
          require_agreement: policy.require_agreement,
          threshold_fit_id: fitId,
        });
      });
    });
  });

  describe('GET /api/frames/{frame_id}/filmstrip', () => {
    const film = (frameId: string, query = '') =>
      ctx.api.call('GET', `/api/frames/${frameId}/filmstrip${query}`, { token: ctx.token.annotator });

    it('answers the frames around a frame in index order, the frame itself marked current', async () => {
      const res = await film(strip[3]!, '?before=2&after=2');
      expect(res.status).toBe(200);
      const session = await ctx.api.deps.db.frame.findUniqueOrThrow({ where: { id: strip[3]! } });
      expect(res.body).toMatchObject({
        frame_id: strip[3],
        session_id: session.sessionId,
        index: 3,
        before: 2,
        after: 2,
        more_before: true,
        more_after: true,
      });
      const frames = res.body.frames as Array<Record<string, unknown>>;
      expect(frames.map((f) => f.id)).toEqual(strip.slice(1, 6));
      expect(frames.map((f) => f.index)).toEqual([1, 2, 3, 4, 5]);
      expect(frames.map((f) => f.current)).toEqual([false, false, true, false, false]);
      expect(frames.map((f) => f.redacted)).toEqual([false, true, false, false, false]);
      expect(frames[0]).toMatchObject({
        timestamp_ms: 333,
        width: 640,
        height: 360,
        image_url: `/api/frames/${strip[1]}/image`,
      });
    });

    it('counts objects by state in each frame', async () => {
      const res = await film(strip[1]!, '?before=1&after=2');
      const byId = new Map(
        (res.body.frames as Array<{ id: string; objects: unknown }>).map((f) => [f.id, f.objects]),
      );
      expect(byId.get(strip[0]!)).toEqual({ total: 4, by_state: { review: 3, accepted: 1 } });
      expect(byId.get(strip[1]!)).toEqual({ total: 3, by_state: { review: 2, rejected: 1 } });
      expect(byId.get(strip[2]!)).toEqual({ total: 0, by_state: {} });
      expect(byId.get(strip[3]!)).toEqual({ total: 2, by_state: { auto_accept: 1, submitted: 1 } });
    });

    it("stops at the session's start and end, and never crosses into another session", async () => {
      const start = await film(strip[0]!);
      expect(start.body).toMatchObject({ before: 10, after: 10, more_before: false, more_after: false });
      expect(start.body.frames.map((f: { id: string }) => f.id)).toEqual(strip);
      expect(start.body.frames[0].current).toBe(true);

      const end = await film(strip[6]!, '?before=3&after=5');
      expect(end.body.frames.map((f: { index: number }) => f.index)).toEqual([3, 4, 5, 6]);
      expect(end.body).toMatchObject({ more_before: true, more_after: false });
      expect(end.body.frames[3].current).toBe(true);

      const exact = await film(strip[3]!, '?before=3&after=3');
      expect(exact.body).toMatchObject({ more_before: false, more_after: false });
      expect(exact.body.frames).toHaveLength(7);

      const alone = await film(strip[4]!, '?before=0&after=0');
      expect(alone.body.frames.map((f: { id: string }) => f.id)).toEqual([strip[4]]);
      expect(alone.body).toMatchObject({ more_before: true, more_after: true });

      const other = await film(otherSessionFrame);
      expect(other.body.frames.map((f: { id: string }) => f.id)).toEqual([otherSessionFrame]);
      expect(other.body.frames[0].objects).toEqual({ total: 8, by_state: { review: 8 } });
    });

    it('windows by frame count across gaps in the index, not by index arithmetic', async () => {
      const { db } = ctx.api.deps;
      const session = await db.session.create({ data: { name: 'gappy drive', sourceKind: 'frames' } });
      const ids: string[] = [];
      for (const index of [0, 5, 9, 20])
        ids.push(
          (
            await db.frame.create({
              data: {
                sessionId: session.id,
                index,
                timestampMs: index * 333,
                width: 320,
                height: 180,
                uri: 's3://frames/test/none.jpg',
              },
            })
          ).id,
        );
      const res = await film(ids[1]!, '?before=1&after=2');
      expect(res.body.frames.map((f: { index: number }) => f.index)).toEqual([0, 5, 9, 20]);
      expect(res.body).toMatchObject({ more_before: false, more_after: false });
      const narrow = await film(ids[2]!, '?before=1&after=0');
      expect(narrow.body.frames.map((f: { index: number }) => f.index)).toEqual([5, 9]);
      expect(narrow.body).toMatchObject({ more_before: true, more_after: true });
    });

    it('answers 404 for an unknown frame and 422 for a malformed id or window', async () => {
      expect((await film(randomUUID())).status).toBe(404);
      const malformed = await film('frame-1');
      expect(malformed.status).toBe(422);
      expect(JSON.stringify(malformed.body)).toContain('path.frame_id');
      for (const q of ['?before=51', '?after=-1', '?before=1.5', '?after=ten', '?around=3']) {
        const res = await film(strip[3]!, q);
        expect({ q, status: res.status }).toEqual({ q, status: 422 });
      }
      expect((await ctx.api.call('GET', `/api/frames/${strip[3]}/filmstrip`)).status).toBe(401);
    });
  });
});
