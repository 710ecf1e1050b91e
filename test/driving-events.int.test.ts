import { useApiForFile } from '../testkit/api';
import { createSessionFixture } from '../testkit/session-fixtures';

/**
 * Driving events on the real PostgreSQL (docs/driving-events.md). Session `drive`: 12 frames of
 * 1280×720 at 3 fps without ego speed; a car comes from the left lane into the lower centre of the
 * view at frame 4 and stays (a cut-in), a pedestrian walks right to left across the road ahead
 * (inside the corridor on frames 3–8), a car stands parked at the right. Session `imu`: no tracks,
 * one inertial hard-braking timeline event.
 */
const ctx = useApiForFile();
const call = (method: string, p: string, token: string | undefined, body?: unknown) =>
  ctx.api.call(method, p, { token, body });
const MISSING = '00000000-0000-4000-8000-000000000000';

let drive: string;
let frames: Array<{ id: string; timestampMs: number }>;
let otherFrame: string;
let cutInCar: string;
let walker: string;
let parked: string;
let imuSession: string;
let imuEvent: string;

const box = (cx: number, bottom: number, w: number, h: number) => [
  cx - w / 2,
  bottom - h,
  cx + w / 2,
  bottom,
];

beforeAll(async () => {
  const { db, storage } = ctx.api.deps;
  const fixture = await createSessionFixture({ db, storage }, { frames: 12, storeImages: false });
  drive = fixture.session.id;
  frames = fixture.frames;
  await db.frame.updateMany({ where: { sessionId: drive }, data: { width: 1280, height: 720 } });
  const carClass = (await db.ontologyClass.findFirstOrThrow({ where: { name: 'car' } })).id;
  const pedClass = (await db.ontologyClass.findFirstOrThrow({ where: { name: 'pedestrian' } })).id;
  const trackOf = async (classId: number, boxes: number[][]) => {
    const track = (await db.track.create({ data: { sessionId: drive, trackerVersion: 'bytetrack-ts-1' } }))
      .id;
    for (const [i, bbox] of boxes.entries())
      await db.annoObject.create({
        data: { frameId: frames[i]!.id, classId, bbox, source: 'human', state: 'accepted', trackId: track },
      });
    return track;
  };
  cutInCar = await trackOf(
    carClass,
    [192, 260, 330, 400, 560, 620, 640, 640, 640, 640, 640, 640].map((cx) => box(cx, 560, 160, 120)),
  );
  walker = await trackOf(
    pedClass,
    Array.from({ length: 12 }, (_, i) => box(1000 - 64 * i, 500, 40, 100)),
  );
  parked = await trackOf(
    carClass,
    Array.from({ length: 12 }, () => box(1100, 520, 160, 120)),
  );
  const other = await createSessionFixture({ db, storage }, { frames: 4, storeImages: false });
  otherFrame = other.frames[0]!.id;
  imuSession = other.session.id;
  imuEvent = (
    await db.timelineEvent.create({
      data: {
        sessionId: imuSession,
        kind: 'hard_braking',
        tStartMs: 400,
        tEndMs: 900,
        source: 'inertial',
        attrs: { peak_decel_mps2: 5.2 },
      },
    })
  ).id;
});

const byKind = <T extends { kind: string }>(items: T[]) =>
  [...items].sort((a, b) => a.kind.localeCompare(b.kind));

describe('taxonomy', () => {
  it('lists the kinds with their rules and thresholds', async () => {
    const res = await call('GET', '/api/events/taxonomy', ctx.token.annotator);
    expect(res.status).toBe(200);
    expect(res.body.kinds.map((k: { name: string }) => k.name)).toEqual([
      'cut_in',
      'lead_vehicle_braking',
      'pedestrian_crossing',
      'close_pass',
      'hard_braking',
    ]);
    expect(res.body.kinds[0]).toMatchObject({
      participants: ['vehicle', 'two_wheeler'],
      thresholds: { min_stay_ms: 1000 },
    });
    expect(res.body).toMatchObject({ deriver_version: 'driving-rules-1', corridor: { half_width: 0.15 } });
  });
});

describe('derivation', () => {
  let cutInId: string;
  let crossingId: string;

  it('previews exactly the cut-in and the crossing, with their tracks and times, storing nothing', async () => {
    const res = await call('POST', `/api/sessions/${drive}/driving-events/preview`, ctx.token.annotator);
    expect([res.status, res.body.detail]).toEqual([200, undefined]);
    expect(res.body).toMatchObject({ session_id: drive, count: 2, would_write: 2 });
    expect(res.body.skipped.map((s: { kind: string }) => s.kind)).toEqual([
      'lead_vehicle_braking',
      'hard_braking',
    ]);
    expect(res.body.events).toEqual([
      expect.objectContaining({
        kind: 'pedestrian_crossing',
        track_ids: [walker],
        classes: ['pedestrian'],
        t_start_ms: frames[2]!.timestampMs,
        t_end_ms: frames[9]!.timestampMs,
        start_frame_id: frames[2]!.id,
        end_frame_id: frames[9]!.id,
        evidence: expect.objectContaining({ crossed_fully: true, dynamics_from: 'computed' }),
        suppressed_by: null,
      }),
      expect.objectContaining({
        kind: 'cut_in',
        track_ids: [cutInCar],
        classes: ['car'],
        t_start_ms: frames[3]!.timestampMs,
        t_end_ms: frames[11]!.timestampMs,
        evidence: expect.objectContaining({ from_side: 'left', entry_frame_index: 4 }),
      }),
    ]);
    expect(await ctx.api.deps.db.drivingEvent.count()).toBe(0);
  });

  it('derives them as proposals, and re-deriving replaces its own proposals', async () => {
    const first = await call('POST', `/api/sessions/${drive}/driving-events/derive`, ctx.token.annotator);
    expect([first.status, first.body.detail]).toEqual([200, undefined]);
    expect(first.body).toMatchObject({ written: 2, replaced: 0, suppressed: 0 });
    for (const e of first.body.items)
      expect(e).toMatchObject({ state: 'proposed', source: 'derived', deriver_version: 'driving-rules-1' });
    // Stored dynamics are read when they are current.
    await call('POST', '/api/dynamics/compute', ctx.token.annotator, { session_id: drive });
    const again = await call('POST', `/api/sessions/${drive}/driving-events/derive`, ctx.token.annotator);
    expect(again.body).toMatchObject({ written: 2, replaced: 2, suppressed: 0 });
    expect(
      again.body.items.map((e: { evidence: { dynamics_from: string } }) => e.evidence.dynamics_from),
    ).toEqual(['stored', 'stored']);
    const stored = await ctx.api.deps.db.drivingEvent.findMany({ where: { sessionId: drive } });
    expect(stored.map((e) => e.id).sort()).toEqual(
      again.body.items.map((e: { event_id: string }) => e.event_id).sort(),
    );
    [crossingId, cutInId] = again.body.items.map((e: { event_id: string }) => e.event_id);
    expect(
      await ctx.api.deps.db.auditLog.count({ where: { action: 'driving_events.derived', subjectId: drive } }),
    ).toBe(2);
  });

  it('lets a reviewer confirm or reject with a note, and refuses the same decision twice', async () => {
    const annotator = await call('POST', `/api/driving-events/${cutInId}/confirm`, ctx.token.annotator, {});
    expect(annotator.status).toBe(403);
    const confirmed = await call('POST', `/api/driving-events/${cutInId}/confirm`, ctx.token.reviewer, {
      note: 'clear cut-in',
    });
    expect([confirmed.status, confirmed.body.detail]).toEqual([200, undefined]);
    expect(confirmed.body).toMatchObject({
      event_id: cutInId,
      state: 'confirmed',
      review_note: 'clear cut-in',
    });
    expect(confirmed.body.reviewed_by).toEqual(expect.any(String));
    expect((await call('POST', `/api/driving-events/${cutInId}/confirm`, ctx.token.reviewer)).status).toBe(
      409,
    );
    const rejected = await call('POST', `/api/driving-events/${crossingId}/reject`, ctx.token.reviewer);
    expect([rejected.status, rejected.body.state, rejected.body.review_note]).toEqual([
      200,
      'rejected',
      null,
    ]);
    expect((await call('POST', `/api/driving-events/${crossingId}/reject`, ctx.token.admin, {})).status).toBe(
      409,
    );
    expect((await call('POST', `/api/driving-events/${MISSING}/reject`, ctx.token.reviewer, {})).status).toBe(
      404,
    );
    expect((await call('POST', '/api/driving-events/nope/confirm', ctx.token.reviewer, {})).status).toBe(422);
    const tooLong = await call('POST', `/api/driving-events/${cutInId}/reject`, ctx.token.reviewer, {
      note: 'x'.repeat(1001),
    });
    expect([tooLong.status, tooLong.body.errors[0].field]).toEqual([422, 'body.note']);
    const audit = await ctx.api.deps.db.auditLog.findFirstOrThrow({
      where: { action: 'driving_event.confirmed', subjectId: cutInId },
    });
    expect(audit.detail).toMatchObject({ previous_state: 'proposed', note: 'clear cut-in' });
  });

  it('keeps reviewed events on re-deriving and does not propose them again', async () => {
    const res = await call('POST', `/api/sessions/${drive}/driving-events/derive`, ctx.token.annotator);
    expect(res.body).toMatchObject({ written: 0, replaced: 0, suppressed: 2, items: [] });
    expect(
      byKind(res.body.suppressed_events as Array<{ kind: string; suppressed_by: unknown }>).map(
        (e) => e.suppressed_by,
      ),
    ).toEqual([
      { event_id: cutInId, state: 'confirmed', source: 'derived' },
      { event_id: crossingId, state: 'rejected', source: 'derived' },
    ]);
    const preview = await call('POST', `/api/sessions/${drive}/driving-events/preview`, ctx.token.annotator);
    expect(preview.body).toMatchObject({ count: 2, would_write: 0 });
    expect(await ctx.api.deps.db.drivingEvent.count({ where: { sessionId: drive } })).toBe(2);
  });

  it('lets the other decision replace one, audited with what it was', async () => {
    const res = await call('POST', `/api/driving-events/${crossingId}/confirm`, ctx.token.reviewer, {
      note: 'on second look, yes',
    });
    expect([res.status, res.body.state]).toEqual([200, 'confirmed']);
    const audit = await ctx.api.deps.db.auditLog.findFirstOrThrow({
      where: { action: 'driving_event.confirmed', subjectId: crossingId },
    });
    expect(audit.detail).toMatchObject({ previous_state: 'rejected' });
  });

  it('takes hard braking from the inertial timeline events', async () => {
    const res = await call('POST', `/api/sessions/${imuSession}/driving-events/derive`, ctx.token.annotator);
    expect(res.body.items).toEqual([
      expect.objectContaining({
        kind: 'hard_braking',
        t_start_ms: 400,
        t_end_ms: 900,
        track_ids: [],
        evidence: { basis: 'imu', timeline_event_id: imuEvent, imu: { peak_decel_mps2: 5.2 } },
      }),
    ]);
    expect(res.body.ran).toContain('hard_braking');
  });

  it('answers 404 for an unknown session', async () => {
    for (const p of ['preview', 'derive'])
      expect(
        (await call('POST', `/api/sessions/${MISSING}/driving-events/${p}`, ctx.token.annotator)).status,
      ).toBe(404);
  });
});

describe('human events and lists', () => {
  let humanId: string;

  it('records a person’s event over frames of the session, with its tracks’ classes', async () => {
    const res = await call('POST', `/api/sessions/${drive}/driving-events`, ctx.token.annotator, {
      kind: 'close_pass',
      start_frame_id: frames[5]!.id,
      end_frame_id: frames[7]!.id,
      track_ids: [parked, walker],
      note: 'tight squeeze',
    });
    expect([res.status, res.body.detail]).toEqual([201, undefined]);
    expect(res.body).toMatchObject({
      session_id: drive,
      kind: 'close_pass',
      source: 'human',
      state: 'proposed',
      t_start_ms: frames[5]!.timestampMs,
      t_end_ms: frames[7]!.timestampMs,
      start_frame_id: frames[5]!.id,
      track_ids: [parked, walker],
      classes: ['car', 'pedestrian'],
      evidence: { note: 'tight squeeze' },
      deriver_version: null,
    });
    humanId = res.body.event_id;
    const byTime = await call('POST', `/api/sessions/${drive}/driving-events`, ctx.token.annotator, {
      kind: 'hard_braking',
      t_start_ms: 3500,
      t_end_ms: 3600,
    });
    expect([byTime.status, byTime.body.start_frame_id, byTime.body.track_ids]).toEqual([201, null, []]);
  });

  it('refuses malformed events, naming the field', async () => {
    const refused = async (body: unknown) => {
      const res = await call('POST', `/api/sessions/${drive}/driving-events`, ctx.token.annotator, body);
      expect(res.status).toBe(422);
      return (res.body.errors as Array<{ field: string }>).map((e) => e.field);
    };
    const base = { kind: 'cut_in', start_frame_id: frames[1]!.id, end_frame_id: frames[3]!.id };
    expect(await refused({ ...base, kind: 'teleport' })).toEqual(['body.kind']);
    expect(await refused({ ...base, end_frame_id: frames[0]!.id })).toEqual(['body.end_frame_id']);
    expect(await refused({ ...base, start_frame_id: otherFrame })).toEqual(['body.start_frame_id']);
    expect(await refused({ ...base, track_ids: [MISSING] })).toEqual(['body.track_ids']);
    expect(await refused({ ...base, t_start_ms: 1, t_end_ms: 2 })).toEqual(['body']);
    expect(await refused({ kind: 'cut_in' })).toEqual(['body']);
    expect(await refused({ kind: 'cut_in', t_start_ms: 5 })).toEqual(['body.t_end_ms']);
    expect(await refused({ kind: 'cut_in', t_start_ms: 5, t_end_ms: 4 })).toEqual(['body.t_end_ms']);
    const missing = await call('POST', `/api/sessions/${MISSING}/driving-events`, ctx.token.annotator, base);
    expect(missing.status).toBe(404);
  });

  it("lists a session's events in time order, filtered, and a track's events", async () => {
    const all = await call('GET', `/api/sessions/${drive}/driving-events`, ctx.token.annotator);
    expect(all.status).toBe(200);
    expect(all.body).toMatchObject({ session_id: drive, count: 4, truncated: false });
    expect(all.body.items.map((e: { kind: string }) => e.kind)).toEqual([
      'pedestrian_crossing',
      'cut_in',
      'close_pass',
      'hard_braking',
    ]);
    const human = await call(
      'GET',
      `/api/sessions/${drive}/driving-events?source=human&limit=1`,
      ctx.token.annotator,
    );
    expect(human.body).toMatchObject({ count: 2, truncated: true });
    expect(human.body.items.map((e: { event_id: string }) => e.event_id)).toEqual([humanId]);
    const walkerEvents = await call('GET', `/api/tracks/${walker}/driving-events`, ctx.token.annotator);
    expect(walkerEvents.body).toMatchObject({ track_id: walker, session_id: drive, count: 2 });
    expect(walkerEvents.body.items.map((e: { kind: string }) => e.kind)).toEqual([
      'pedestrian_crossing',
      'close_pass',
    ]);
    const carEvents = await call(
      'GET',
      `/api/tracks/${cutInCar}/driving-events?state=confirmed`,
      ctx.token.annotator,
    );
    expect(carEvents.body.items.map((e: { kind: string }) => e.kind)).toEqual(['cut_in']);
    expect((await call('GET', `/api/tracks/${MISSING}/driving-events`, ctx.token.annotator)).status).toBe(
      404,
    );
    expect((await call('GET', `/api/sessions/${MISSING}/driving-events`, ctx.token.annotator)).status).toBe(
      404,
    );
    expect(
      (await call('GET', `/api/sessions/${drive}/driving-events?state=maybe`, ctx.token.annotator)).status,
    ).toBe(422);
  });
});

describe('search and summaries', () => {
  const search = (q: string) => call('GET', `/api/events/search?${q}`, ctx.token.annotator);
  const kindsOf = (res: { body: { items: Array<{ kind: string }> } }) =>
    res.body.items.map((e) => e.kind).sort();

  it('filters by kind, session, state, source, class and time', async () => {
    expect(kindsOf(await search('kind=hard_braking'))).toEqual(['hard_braking', 'hard_braking']);
    expect(kindsOf(await search(`kind=hard_braking&session_id=${imuSession}`))).toEqual(['hard_braking']);
    expect(kindsOf(await search('state=confirmed'))).toEqual(['cut_in', 'pedestrian_crossing']);
    expect(kindsOf(await search('class=pedestrian'))).toEqual(['close_pass', 'pedestrian_crossing']);
    expect(kindsOf(await search('class=pedestrian&source=derived'))).toEqual(['pedestrian_crossing']);
    // Spans overlapping 3.2–3.3 s: the crossing ends at 3.0 s, the cut-in runs to 3.67 s.
    expect(kindsOf(await search(`session_id=${drive}&t_from_ms=3200&t_to_ms=3300`))).toEqual(['cut_in']);
    expect(kindsOf(await search('t_to_ms=450'))).toEqual(['hard_braking']);
    const future = new Date(Date.now() + 3600_000).toISOString();
    expect((await search(`created_from=${encodeURIComponent(future)}`)).body.items).toEqual([]);
    expect((await search(`created_to=${encodeURIComponent(future)}`)).body.items).toHaveLength(5);
  });

  it('pages newest first by cursor, each event once', async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const res: { body: { items: Array<{ event_id: string }>; next_cursor: string | null } } = await search(
        `limit=2${cursor ? `&cursor=${cursor}` : ''}`,
      );
      expect(res.body.items.length).toBeLessThanOrEqual(2);
      seen.push(...res.body.items.map((e) => e.event_id));
      cursor = res.body.next_cursor;
    } while (cursor);
    const all = await ctx.api.deps.db.drivingEvent.findMany({
      orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
    });
    expect(seen).toEqual(all.map((e) => e.id));
    expect(seen).toHaveLength(5);
  });

  it('refuses a malformed search', async () => {
    for (const q of [
      'cursor=garbage',
      'state=maybe',
      'limit=0',
      't_from_ms=5&t_to_ms=4',
      'created_from=yesterday',
      'colour=red',
    ])
      expect([q, (await search(q)).status]).toEqual([q, 422]);
  });

  it('counts per kind and state for a session and for the corpus', async () => {
    const session = await call('GET', `/api/sessions/${drive}/driving-events/summary`, ctx.token.annotator);
    expect(session.status).toBe(200);
    expect(session.body).toMatchObject({
      session_id: drive,
      total: 4,
      by_state: { proposed: 2, confirmed: 2, rejected: 0 },
      by_source: { derived: 2, human: 2 },
      by_kind: {
        cut_in: { total: 1, proposed: 0, confirmed: 1, rejected: 0 },
        pedestrian_crossing: { total: 1, confirmed: 1 },
        close_pass: { total: 1, proposed: 1 },
        hard_braking: { total: 1, proposed: 1 },
        lead_vehicle_braking: { total: 0, proposed: 0, confirmed: 0, rejected: 0 },
      },
    });
    const corpus = await call('GET', '/api/events/corpus-summary', ctx.token.annotator);
    expect(corpus.body).toMatchObject({
      sessions: 2,
      total: 5,
      by_state: { proposed: 3, confirmed: 2, rejected: 0 },
      by_kind: { hard_braking: { total: 2, proposed: 2 } },
    });
    expect(
      (await call('GET', `/api/sessions/${MISSING}/driving-events/summary`, ctx.token.annotator)).status,
    ).toBe(404);
    expect((await call('GET', '/api/events/corpus-summary', undefined)).status).toBe(401);
  });
});
