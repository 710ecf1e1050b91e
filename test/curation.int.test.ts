import path from 'node:path';
import { randomUUID } from 'node:crypto';
import sharp from 'sharp';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import { createCurationEmbedActivities, type CurationEmbedHeartbeat } from '../activities/curation/embed';
import type { Db } from '../activities/db';
import { objectLocation, readObject } from '../activities/inspector/frame-objects';
import { EMBEDDING_MODELS, tinyImageDescriptor } from '../core/curation/embedding';
import { kCenterGreedy } from '../core/curation/kcenter';
import type { Frame } from '../generated/prisma/client';
import type { StreamEvent } from '../runtime/event-hub';
import { startIngestStack, type IngestStack } from '../testkit/media/harness';
import { createSessionFixture } from '../testkit/session-fixtures';
import { recordHistoryIfAsked, replayRecordedHistory, scheduledActivities } from '../testkit/temporal';

/**
 * The curation group on the real PostgreSQL, MinIO and Temporal (docs/curation.md): slices and
 * what each predicate selects, the corpus summary, cross-session dedup from stored pHashes, the
 * embedding workflow and the diverse subset on its vectors, and extraction as an asset set.
 *
 * The corpus (200 objects): car 150 and bus 33 are common, pedestrian 10 and person 5 uncommon,
 * child and dog (1 each) rare. Frames: s1 dark / normal / bright / unknown lighting, s2 three
 * rainy normal frames, s3 two frames without a redacted copy.
 */
const HISTORY = path.join(__dirname, 'histories/curation-embed.json');
const MODEL = 'tiny-image-v1';
let stack: IngestStack;
let db: Db;
const frames: Record<'s1' | 's2' | 's3', Frame[]> = { s1: [], s2: [], s3: [] };
const sessions = { s1: '', s2: '', s3: '' };
const objectsOf = new Map<string, string[]>();

/** 64-bit pHashes: H0…H3 lie ≥ 32 bits apart; the flips below are the near copies. */
const H0 = '0000000000000000';
const H1 = 'ffffffff00000000';
const H2 = '00000000ffffffff';
const H3 = 'ffff0000ffff0000';

beforeAll(async () => {
  stack = await startIngestStack();
  db = stack.api.deps.db;
  const deps = stack.api.deps;
  const luma = [40, 120, 220];
  const s1 = await createSessionFixture(deps, {
    frames: 4,
    redacted: true,
    luma: (i) => luma[i] ?? 128,
    // The last frame has no exposure record: its lighting is unknown.
    context: (i) => (i < 3 ? { exposure: { mean_luma: luma[i]! } } : {}),
  });
  const s2 = await createSessionFixture(deps, {
    frames: 3,
    redacted: true,
    luma: () => 120,
    context: () => ({ weather: 'rain', exposure: { mean_luma: 120 } }),
  });
  const s3 = await createSessionFixture(deps, { frames: 2, redacted: false });
  for (const [key, f] of [
    ['s1', s1],
    ['s2', s2],
    ['s3', s3],
  ] as const) {
    frames[key] = f.frames;
    sessions[key] = f.session.id;
  }
  const hashes: Array<[Frame, string]> = [
    [frames.s1[0]!, H0],
    [frames.s2[0]!, '0000000000000007'], // 3 bits from s1/0
    [frames.s1[1]!, H1],
    [frames.s2[1]!, 'ffffffff0000003f'], // 6 bits from s1/1
    [frames.s3[0]!, 'ffffffff80000000'], // 1 bit from s1/1, 7 from s2/1
    [frames.s1[2]!, H2],
    [frames.s1[3]!, H2], // the same picture twice in one drive: never a cluster by itself
    [frames.s2[2]!, H3],
    [frames.s3[1]!, 'ffff0000ffff01ff'], // 9 bits from s2/2
  ];
  for (const [f, phash] of hashes) await db.frame.update({ where: { id: f.id }, data: { phash } });
  for (const f of [frames.s1[0]!, frames.s1[1]!])
    await db.piiAudit.create({ data: { frameId: f.id, nFaces: 0 } });

  const classes = new Map(
    (await db.ontologyClass.findMany({ select: { id: true, name: true } })).map((c) => [c.name, c.id]),
  );
  /** Objects are registered under their class, their frame (`s1.0`) and both (`s1.0:car`). */
  const place = async (
    at: `${keyof typeof frames}.${number}`,
    className: string,
    count: number,
    state: string,
    source: string,
    conf: number | null,
  ) => {
    const [key, index] = at.split('.') as [keyof typeof frames, string];
    const rows = Array.from({ length: count }, (_, i) => ({
      id: randomUUID(),
      frameId: frames[key][Number(index)]!.id,
      bbox: [i, i, i + 10, i + 20],
      classId: classes.get(className)!,
      state,
      source,
      conf,
      attrs: { n: i },
    }));
    await db.annoObject.createMany({ data: rows });
    for (const group of [className, at, `${at}:${className}`])
      objectsOf.set(group, [...(objectsOf.get(group) ?? []), ...rows.map((r) => r.id)]);
  };
  await place('s1.0', 'dog', 1, 'rejected', 'human', null);
  await place('s1.0', 'pedestrian', 2, 'accepted', 'human', null);
  await place('s1.1', 'car', 50, 'auto_accept', 'fused', 0.9);
  await place('s1.1', 'child', 1, 'accepted', 'human', null);
  await place('s1.2', 'bus', 33, 'accepted', 'human', null);
  await place('s1.3', 'person', 5, 'review', 'fused', 0.4);
  await place('s2.0', 'car', 50, 'auto_accept', 'fused', 0.95);
  await place('s2.0', 'pedestrian', 4, 'accepted', 'human', null);
  await place('s2.1', 'pedestrian', 4, 'accepted', 'human', null);
  await place('s3.0', 'car', 50, 'auto_accept', 'fused', 0.85);
}, 180_000);

afterAll(async () => {
  if (stack) {
    const { storage } = stack.api.deps;
    for (const id of Object.values(sessions)) {
      for (const role of ['frames', 'redacted'] as const) {
        const keys: string[] = [];
        for await (const o of storage.client.listObjects(storage.bucket(role), `test/${id}/`, true))
          if (o.name) keys.push(o.name);
        if (keys.length) await storage.client.removeObjects(storage.bucket(role), keys);
      }
    }
  }
  await stack?.close();
});

const call = (method: string, url: string, body?: unknown, token = stack.reviewer) =>
  stack.api.call(method, url, { token, body });
const newSlice = async (predicate: Record<string, unknown>, name = 'slice') => {
  const res = await call('POST', '/api/curation/slices', { name, predicate });
  expect(res.status).toBe(201);
  return res.body.id as string;
};
const materialize = (id: string, query = '') =>
  call('GET', `/api/curation/slices/${id}/materialize${query}`, undefined, stack.annotator);
/** The ids of the objects registered under any of the groups. */
const idsOf = (...groups: string[]) => [...new Set(groups.flatMap((g) => objectsOf.get(g) ?? []))].sort();

describe('slices', () => {
  it('saves a slice and answers it with what cannot match yet', async () => {
    const res = await call('POST', '/api/curation/slices', {
      name: '  people at night ',
      predicate: { classes: ['person'], context: { lighting: 'dark' }, region: { bbox: [0, 0, 1, 1] } },
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      name: 'people at night',
      predicate: { classes: ['person'], context: { lighting: 'dark' } },
      created_by: expect.any(String),
      unmatchable: [{ predicate: 'region', reason: expect.stringMatching(/GPS/) }],
    });
    const audit = await db.auditLog.findFirstOrThrow({ where: { action: 'curation.slice.created' } });
    expect(audit).toMatchObject({ subjectId: res.body.id, actorId: res.body.created_by });
  });

  it.each<[string, Record<string, unknown>, string[]]>([
    ['a class with its descendants', { classes: ['person'] }, ['person', 'pedestrian', 'child']],
    ['a leaf class alone', { classes: ['pedestrian'] }, ['pedestrian']],
    ['a parent two levels up', { classes: ['animal'] }, ['dog']],
    ['an l1', { l1: ['vru'] }, ['person', 'pedestrian', 'child']],
    ['a state', { states: ['review'] }, ['person']],
    ['states with classes', { classes: ['person'], states: ['accepted'] }, ['pedestrian', 'child']],
    ['a source and a confidence floor', { sources: ['fused'], min_conf: 0.9 }, ['s1.1:car', 's2.0:car']],
    ['dark lighting', { context: { lighting: 'dark' } }, ['s1.0']],
    ['bright lighting', { context: { lighting: 'bright' } }, ['s1.2']],
    ['unknown lighting', { context: { lighting: ['unknown'] } }, ['s1.3', 's3.0']],
    ['a recorded context value', { context: { weather: ['rain', 'snow'] } }, ['s2.0', 's2.1']],
    ['the rare band', { rarity_bands: ['rare'] }, ['child', 'dog']],
    ['the uncommon band', { rarity_bands: ['uncommon'] }, ['person', 'pedestrian']],
    ['the common band', { rarity_bands: ['common'] }, ['car', 'bus']],
    ['a region (no GPS yet)', { region: { bbox: [-10, -10, 10, 10] } }, []],
    ['track_event true (no track events yet)', { track_event: true }, []],
    ['track_event false', { track_event: false }, ['car', 'bus', 'person', 'pedestrian', 'child', 'dog']],
  ])('select exactly the objects of %s', async (_label, predicate, groups) => {
    const id = await newSlice(predicate);
    const all: string[] = [];
    let cursor: string | null = null;
    let body: any;
    do {
      const res = await materialize(id, `?limit=40${cursor ? `&cursor=${cursor}` : ''}`);
      expect(res.status).toBe(200);
      body = res.body;
      all.push(...body.items.map((o: { id: string }) => o.id));
      cursor = body.next_cursor;
    } while (cursor);
    const expected = idsOf(...groups);
    expect(all).toEqual([...all].sort());
    expect(all.sort()).toEqual(expected);
    expect(body.counts.objects).toBe(expected.length);
  });

  it('counts a slice’s objects, frames and sessions, per class and per state, and pages its items in id order', async () => {
    const id = await newSlice({ classes: ['person'] }, 'people');
    const first = await materialize(id, '?limit=6');
    expect(first.status).toBe(200);
    expect(first.body.counts).toEqual({
      objects: 16,
      frames: 5,
      sessions: 2,
      by_class: [
        { class_name: 'pedestrian', l0: 'object', l1: 'vru', count: 10 },
        { class_name: 'person', l0: 'object', l1: 'vru', count: 5 },
        { class_name: 'child', l0: 'object', l1: 'vru', count: 1 },
      ],
      by_state: { accepted: 11, review: 5 },
    });
    expect(first.body.unmatchable).toEqual([]);
    expect(first.body.items).toHaveLength(6);
    const whole = await materialize(id, '?limit=16');
    const object = await db.annoObject.findFirstOrThrow({ where: { id: objectsOf.get('person')![0] } });
    expect(whole.body.items.find((o: { id: string }) => o.id === object.id)).toEqual({
      id: object.id,
      frame_id: frames.s1[3]!.id,
      session_id: sessions.s1,
      frame_index: 3,
      class_name: 'person',
      l0: 'object',
      l1: 'vru',
      bbox: object.bbox,
      rot_deg: 0,
      state: 'review',
      source: 'fused',
      conf: 0.4,
    });
    const rest = await materialize(id, `?limit=100&cursor=${first.body.next_cursor}`);
    expect(rest.body.items).toHaveLength(10);
    expect(rest.body.next_cursor).toBeNull();
    expect([...first.body.items, ...rest.body.items].map((o: { id: string }) => o.id)).toEqual(
      idsOf('person', 'pedestrian', 'child'),
    );
  });

  it('lists saved slices newest first, a page at a time', async () => {
    const total = await db.slice.count();
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const res = await call(
        'GET',
        `/api/curation/slices?limit=7${cursor ? `&cursor=${cursor}` : ''}`,
        undefined,
        stack.annotator,
      );
      expect(res.status).toBe(200);
      seen.push(...res.body.items.map((s: { id: string }) => s.id));
      cursor = res.body.next_cursor;
    } while (cursor);
    const newestFirst = (await db.slice.findMany({ orderBy: [{ createdAt: 'desc' }, { id: 'desc' }] })).map(
      (s) => s.id,
    );
    expect(seen).toHaveLength(total);
    expect(seen).toEqual(newestFirst);
  });

  it('refuses unknown class names, l1 and lighting values by name, and malformed input, saving nothing', async () => {
    const before = await db.slice.count();
    const unknown = await call('POST', '/api/curation/slices', {
      name: 'typo',
      predicate: { classes: ['person', 'unicorn'], l1: ['vru', 'robots'], context: { lighting: 'dusk' } },
    });
    expect(unknown.status).toBe(422);
    expect(unknown.headers.get('content-type')).toMatch(/application\/problem\+json/);
    expect(unknown.body.detail).toMatch(/class "unicorn".*l1 "robots".*lighting "dusk"/);
    expect(unknown.body.errors.map((e: { field: string }) => e.field)).toEqual([
      'body.predicate.classes.1',
      'body.predicate.l1.1',
      'body.predicate.context.lighting',
    ]);
    const malformed = await call('POST', '/api/curation/slices', {
      name: '',
      predicate: { states: ['maybe'], colour: 'red' },
    });
    expect(malformed.status).toBe(422);
    expect(malformed.body.errors.map((e: { field: string }) => e.field).sort()).toEqual([
      'body.name',
      'body.predicate.colour',
      'body.predicate.states.0',
    ]);
    expect((await call('POST', '/api/curation/slices', { name: 'x' })).status).toBe(422);
    expect(
      (await call('POST', '/api/curation/slices', { name: 'x', predicate: {} }, stack.annotator)).status,
    ).toBe(403);
    expect(await db.slice.count()).toBe(before);

    const badCursor = await call('GET', '/api/curation/slices?cursor=garbage', undefined, stack.annotator);
    expect(badCursor.status).toBe(422);
    expect(badCursor.body.errors[0].field).toBe('query.cursor');
    expect((await materialize('not-a-uuid')).body.errors[0].field).toBe('path.slice_id');
    expect((await materialize(randomUUID())).status).toBe(404);
    const id = await newSlice({});
    expect((await materialize(id, '?cursor=nope')).status).toBe(422);
    expect((await materialize(id, '?limit=0')).status).toBe(422);
  });
});

describe('summary', () => {
  it('shows the corpus at a glance', async () => {
    const res = await call('GET', '/api/curation/summary?top=2', undefined, stack.annotator);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      sessions: 3,
      frames: {
        total: 9,
        pii_audited: 2,
        redacted: 7,
        hashed: 9,
        by_lighting: { dark: 1, normal: 4, bright: 1, unknown: 3 },
      },
      objects: {
        total: 200,
        by_state: { auto_accept: 150, accepted: 44, review: 5, rejected: 1 },
        by_l1: { vehicle: 183, vru: 16, animal: 1 },
        by_class: [
          { class_name: 'car', l1: 'vehicle', count: 150, share: 0.75, band: 'common' },
          { class_name: 'bus', l1: 'vehicle', count: 33, share: 0.165, band: 'common' },
        ],
        classes_present: 6,
        by_rarity_band: {
          common: { classes: 2, objects: 183 },
          uncommon: { classes: 2, objects: 15 },
          rare: { classes: 2, objects: 2 },
        },
        by_lighting: { dark: 3, normal: 109, bright: 33, unknown: 55 },
        by_source: { fused: 155, human: 45 },
      },
      rarity_share: { rare: 0.01, common: 0.1 },
      slices: await db.slice.count(),
    });
    expect(Object.keys(res.body.objects.by_l1)).toEqual(['vehicle', 'vru', 'animal']);
    expect((await call('GET', '/api/curation/summary?top=0', undefined, stack.annotator)).status).toBe(422);
  });
});

const dedup = (body: Record<string, unknown>) => call('POST', '/api/curation/dedup', body);
const members = (cluster: { frames: Array<{ frame_id: string }> }) => cluster.frames.map((f) => f.frame_id);

describe('dedup', () => {
  it('clusters near-duplicate frames across sessions at the default threshold 6, largest first', async () => {
    const res = await dedup({});
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      threshold: 6,
      method: { name: 'multi-index hashing' },
      frames_considered: 9,
      frames_without_hash: 0,
      frame_cap: 100_000,
      clusters_total: 2,
      truncated: false,
    });
    expect(res.body.clusters).toEqual([
      {
        frames: [
          { frame_id: frames.s1[1]!.id, session_id: sessions.s1, index: 1 },
          { frame_id: frames.s2[1]!.id, session_id: sessions.s2, index: 1 },
          { frame_id: frames.s3[0]!.id, session_id: sessions.s3, index: 0 },
        ].sort((a, b) => (a.session_id < b.session_id ? -1 : 1)),
        sessions: 3,
        max_distance: 6,
      },
      {
        frames: [
          { frame_id: frames.s1[0]!.id, session_id: sessions.s1, index: 0 },
          { frame_id: frames.s2[0]!.id, session_id: sessions.s2, index: 0 },
        ].sort((a, b) => (a.session_id < b.session_id ? -1 : 1)),
        sessions: 2,
        max_distance: 3,
      },
    ]);
  });

  it('follows the threshold, the sessions named and the cluster limit', async () => {
    const tight = await dedup({ threshold: 2 });
    expect(tight.body.clusters.map(members)).toEqual([
      [frames.s1[1]!.id, frames.s3[0]!.id].sort((a, b) => (frameSession(a) < frameSession(b) ? -1 : 1)),
    ]);
    const loose = await dedup({ threshold: 9, limit_clusters: 2 });
    expect(loose.body).toMatchObject({ clusters_total: 3, truncated: true });
    expect(loose.body.clusters).toHaveLength(2);
    const wide = await dedup({ threshold: 9 });
    expect(wide.body.clusters[2]).toMatchObject({ sessions: 2, max_distance: 9 });
    const two = await dedup({ session_ids: [sessions.s1, sessions.s2] });
    expect(two.body.frames_considered).toBe(7);
    expect(two.body.clusters.map((c: { frames: unknown[] }) => c.frames.length)).toEqual([2, 2]);
    expect(two.body.clusters.flatMap(members)).not.toContain(frames.s3[0]!.id);
  });

  it('answers bad input with problem+json', async () => {
    const bad = await dedup({ threshold: 17, session_ids: ['nope'], limit_clusters: 0, extra: 1 });
    expect(bad.status).toBe(422);
    expect(bad.body.errors.map((e: { field: string }) => e.field).sort()).toEqual([
      'body.extra',
      'body.limit_clusters',
      'body.session_ids.0',
      'body.threshold',
    ]);
    const missing = await dedup({ session_ids: [sessions.s1, randomUUID()] });
    expect(missing.status).toBe(404);
    expect(missing.body.missing_session_ids).toHaveLength(1);
    expect((await dedup({ threshold: 2.5 })).status).toBe(422);
    expect((await call('POST', '/api/curation/dedup', {}, stack.annotator)).status).toBe(403);
  });
});

const frameSession = (frameId: string) =>
  [...frames.s1, ...frames.s2, ...frames.s3].find((f) => f.id === frameId)!.sessionId;

/** The descriptor computed here from the stored redacted bytes, apart from the activity. */
async function expectedVector(frame: Frame): Promise<Float32Array> {
  const { storage } = stack.api.deps;
  const bytes = await readObject(storage, objectLocation(storage, frame.redactedUri!, 'redacted'));
  const rgb = await sharp(bytes).removeAlpha().resize(16, 12, { fit: 'fill' }).raw().toBuffer();
  return tinyImageDescriptor(rgb, EMBEDDING_MODELS[MODEL]);
}

const embed = (body: Record<string, unknown> = {}) => call('POST', '/api/curation/embed', body);

describe('embedding', () => {
  it('embeds every redacted frame in a workflow, skips and counts the others, and reports to the jobs stream', async () => {
    // One redacted copy goes missing from storage: that frame is skipped, not the run.
    const { storage } = stack.api.deps;
    const gone = objectLocation(storage, frames.s2[2]!.redactedUri!, 'redacted');
    await storage.client.removeObject(gone.bucket, gone.key);
    const seen: StreamEvent[] = [];
    const unsubscribe = stack.api.deps.events.subscribe('jobs', (e) => {
      if (e.data.workflow_id === `curation-embed-${MODEL}`) seen.push(e);
    });
    try {
      const res = await embed();
      expect(res.status).toBe(202);
      expect(res.headers.get('location')).toBe('/api/curation/summary');
      expect(res.body).toMatchObject({
        workflow_id: `curation-embed-${MODEL}`,
        model: MODEL,
        session_ids: null,
        events_url: '/api/events/jobs',
      });
      const handle = stack.env.client.workflow.getHandle(res.body.workflow_id, res.body.run_id);
      expect(await handle.result()).toEqual({
        model: MODEL,
        session_ids: null,
        considered: 9,
        embedded: 6,
        skipped_unredacted: 2,
        skipped_unreadable: 1,
      });
      const rows = await db.frameEmbedding.findMany();
      expect(rows).toHaveLength(6);
      expect(rows.every((r) => r.model === MODEL && r.vector.length === 576)).toBe(true);
      const s1f0 = rows.find((r) => r.frameId === frames.s1[0]!.id)!;
      const expected = await expectedVector(frames.s1[0]!);
      s1f0.vector.forEach((v, i) => expect(v).toBeCloseTo(expected[i]!, 6));
      expect(Math.hypot(...s1f0.vector)).toBeCloseTo(1, 5);

      const summary = await stack.api.call('GET', res.headers.get('location')!, { token: stack.annotator });
      expect(summary.body.frames.embedded).toEqual({ [MODEL]: 6 });
      const audit = await db.auditLog.findFirstOrThrow({ where: { action: 'curation.embedded' } });
      expect(audit.detail).toMatchObject({ embedded: 6, workflow_id: `curation-embed-${MODEL}` });
      for (let i = 0; i < 50 && !seen.some((e) => e.type === 'curation.embed.completed'); i++)
        await new Promise((r) => setTimeout(r, 100));
      expect(seen.map((e) => e.type)).toEqual([
        'curation.embed.started',
        'curation.embed.progress',
        'curation.embed.completed',
      ]);

      const history = await handle.fetchHistory();
      expect(scheduledActivities(history)).toEqual(['embedFrames']);
      await recordHistoryIfAsked(HISTORY, () => Promise.resolve(history));
    } finally {
      unsubscribe();
    }
  });

  it('replays its recorded history against the current workflow code', async () => {
    await expect(
      replayRecordedHistory(HISTORY, require.resolve('../workflows'), 'recorded'),
    ).resolves.toBeUndefined();
  });

  it('embeds only what lacks an embedding on a second run, for the sessions named', async () => {
    const res = await embed({ session_ids: [sessions.s2, sessions.s3] });
    expect(res.status).toBe(202);
    const tally = await stack.env.client.workflow.getHandle(res.body.workflow_id, res.body.run_id).result();
    expect(tally).toEqual({
      model: MODEL,
      session_ids: [sessions.s2, sessions.s3],
      considered: 3,
      embedded: 0,
      skipped_unredacted: 2,
      skipped_unreadable: 1,
    });
  });

  it('answers 409 while a run of the same model is going, and bad input with problem+json', async () => {
    const parked = await stack.env.client.workflow.start('curationEmbedWorkflow', {
      taskQueue: 'nobody-polls',
      workflowId: `curation-embed-${MODEL}`,
      args: [{ model: MODEL, sessionIds: null, actorId: null, requestId: null }],
    });
    try {
      const res = await embed();
      expect(res.status).toBe(409);
      expect(res.body.detail).toMatch(new RegExp(`already running.*curation-embed-${MODEL}`));
    } finally {
      await parked.terminate('test over');
    }
    const bad = await embed({ model: 'clip', session_ids: [] });
    expect(bad.status).toBe(422);
    expect(bad.body.errors.map((e: { field: string }) => e.field).sort()).toEqual([
      'body.model',
      'body.session_ids',
    ]);
    expect((await embed({ session_ids: [randomUUID()] })).status).toBe(404);
    expect((await call('POST', '/api/curation/embed', {}, stack.annotator)).status).toBe(403);
  });

  it('resumes a retried run after the cursor its heartbeat carries, counting each frame once', async () => {
    await db.frameEmbedding.deleteMany({ where: { frame: { sessionId: sessions.s1 } } });
    const { embedFrames } = createCurationEmbedActivities({
      db,
      storage: stack.api.deps.storage,
      events: stack.api.deps.events,
    });
    const input = {
      model: MODEL,
      sessionIds: [sessions.s1],
      actorId: null,
      requestId: null,
      pageSize: 2,
    } as const;
    const quiet = { logger: new DefaultLogger('ERROR') }; // the dead attempt is logged as a warning
    const info = {
      workflowExecution: { workflowId: `curation-embed-${MODEL}`, runId: randomUUID() },
      scheduledTimestampMs: Date.now() - 1000,
    };
    // The first attempt writes both pages of s1, but its worker dies before the second page's heartbeat gets through.
    const beats: CurationEmbedHeartbeat[] = [];
    const first = new MockActivityEnvironment({ ...info, attempt: 1 }, quiet);
    first.on('heartbeat', (d: CurationEmbedHeartbeat) => {
      if (d.considered === 4) throw new Error('worker died');
      beats.push({ ...d });
    });
    await expect(first.run(embedFrames, { ...input, sessionIds: [...input.sessionIds] })).rejects.toThrow(
      'worker died',
    );
    const reported = beats.at(-1)!;
    expect(reported).toMatchObject({ considered: 2, embedded: 2 });
    expect(await db.frameEmbedding.count({ where: { frame: { sessionId: sessions.s1 } } })).toBe(4);

    const retry = new MockActivityEnvironment({ ...info, attempt: 2, heartbeatDetails: reported }, quiet);
    const tally = await retry.run(embedFrames, { ...input, sessionIds: [...input.sessionIds] });
    // Not the first page again, and the second page, written by the dead attempt, still counts as this run's.
    expect(tally).toEqual({
      model: MODEL,
      session_ids: [sessions.s1],
      considered: 4,
      embedded: 4,
      skipped_unredacted: 0,
      skipped_unreadable: 0,
    });
    expect(await db.frameEmbedding.count()).toBe(6);
  });
});

const diverse = (query: string) => call('GET', `/api/curation/diverse${query}`, undefined, stack.annotator);

/** The picks computed here from the stored vectors, apart from the route. */
async function referencePicks(frameIds: string[] | null, k: number) {
  const rows = await db.frameEmbedding.findMany({
    where: { model: MODEL, ...(frameIds ? { frameId: { in: frameIds } } : {}) },
  });
  return kCenterGreedy(
    rows.map((r) => ({ id: r.frameId, vector: Float32Array.from(r.vector) })),
    k,
  );
}

describe('diverse subset', () => {
  it('picks k frames by k-center greedy on the stored embeddings, deterministically, with each pick’s radius', async () => {
    const res = await diverse('?k=4');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ model: MODEL, k: 4, candidates: 6, frames_without_embedding: 3 });
    const reference = await referencePicks(null, 4);
    expect(res.body.picks.map((p: { frame_id: string }) => p.frame_id)).toEqual(reference.map((p) => p.id));
    res.body.picks.forEach((p: any, i: number) => {
      expect(p).toMatchObject({
        rank: i + 1,
        session_id: frameSession(p.frame_id),
        index: expect.any(Number),
      });
      expect(p.distance).toBeCloseTo(reference[i]!.distance, 9);
      expect(p.covering_radius).toBeCloseTo(reference[i]!.covering_radius, 9);
    });
    expect(res.body.covering_radius).toBe(res.body.picks[3].covering_radius);
    expect((await diverse('?k=4')).body).toEqual(res.body);
  });

  it('narrows to a slice’s frames and to sessions, and answers every candidate when k exceeds them', async () => {
    const people = await newSlice({ classes: ['person'] });
    const bySlice = await diverse(`?k=50&slice_id=${people}`);
    expect(bySlice.status).toBe(200);
    const personFrames = [frames.s1[0]!, frames.s1[1]!, frames.s1[3]!, frames.s2[0]!, frames.s2[1]!].map(
      (f) => f.id,
    );
    expect(bySlice.body.candidates).toBe(5);
    expect(bySlice.body.picks.map((p: { frame_id: string }) => p.frame_id)).toEqual(
      (await referencePicks(personFrames, 50)).map((p) => p.id),
    );
    const unembedded = await diverse(`?k=3&session_ids=${sessions.s3}`);
    expect(unembedded.body).toMatchObject({
      candidates: 0,
      frames_without_embedding: 2,
      picks: [],
      covering_radius: null,
    });
    const two = await diverse(`?k=2&session_ids=${sessions.s1.toUpperCase()},${sessions.s2}`);
    expect(two.body.candidates).toBe(6);
  });

  it('answers bad input with problem+json', async () => {
    const bad = await diverse('?k=0&session_ids=abc&model=clip');
    expect(bad.status).toBe(422);
    expect(bad.body.errors.map((e: { field: string }) => e.field).sort()).toEqual([
      'query.k',
      'query.model',
      'query.session_ids',
    ]);
    expect((await diverse(`?slice_id=${randomUUID()}`)).status).toBe(404);
    expect((await diverse(`?session_ids=${randomUUID()}`)).status).toBe(404);
  });
});

const extract = (body: Record<string, unknown>) => call('POST', '/api/curation/extract', body);

describe('extract', () => {
  it('makes a slice’s frames and objects a new asset set: an image per redacted frame, an accepted box per object', async () => {
    const people = await newSlice({ classes: ['person'] }, 'people to extract');
    const res = await extract({ slice_id: people, project_id: 'people-set' });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      project_id: 'people-set',
      slice_id: people,
      assets: 5,
      annotations: 16,
      frames_matched: 5,
      frames_skipped_unredacted: 0,
      truncated: false,
    });
    const assets = await db.asset.findMany({
      where: { projectId: 'people-set' },
      include: { annotations: true },
    });
    expect(assets).toHaveLength(5);
    const onS1f3 = assets.find((a) => (a.meta as { frame_id: string }).frame_id === frames.s1[3]!.id)!;
    expect(onS1f3).toMatchObject({
      kind: 'image',
      uri: frames.s1[3]!.redactedUri,
      state: 'new',
      meta: {
        frame_id: frames.s1[3]!.id,
        session_id: sessions.s1,
        width: 64,
        height: 48,
        source: 'curation.extract',
        slice_id: people,
      },
    });
    expect(onS1f3.annotations).toHaveLength(5);
    const object = await db.annoObject.findFirstOrThrow({ where: { frameId: frames.s1[3]!.id } });
    expect(
      onS1f3.annotations.find((a) => (a.provenance as { object_id: string }).object_id === object.id),
    ).toMatchObject({
      kind: 'bbox',
      label: 'person',
      conf: 0.4,
      source: 'imported',
      state: 'accepted',
      payload: { bbox: object.bbox, rot_deg: 0, polyline: null, keypoints: null, mask_uri: null },
      provenance: { object_id: object.id, source: 'fused', state: 'review', conf: 0.4 },
    });
    const all = assets.flatMap((a) =>
      a.annotations.map((n) => (n.provenance as { object_id: string }).object_id),
    );
    expect(all.sort()).toEqual(idsOf('person', 'pedestrian', 'child'));
    const audit = await db.auditLog.findFirstOrThrow({ where: { action: 'curation.extracted' } });
    expect(audit).toMatchObject({
      subjectId: 'people-set',
      detail: expect.objectContaining({ assets: 5, annotations: 16 }),
    });
  });

  it('takes an inline predicate, leaves out frames without a redacted copy, and stops at the limit', async () => {
    const cars = await extract({ predicate: { classes: ['car'] }, project_id: 'cars' });
    expect(cars.status).toBe(201);
    expect(cars.body).toMatchObject({
      slice_id: null,
      assets: 2,
      annotations: 100,
      frames_matched: 3,
      frames_skipped_unredacted: 1,
      truncated: false,
    });
    const one = await extract({ predicate: { classes: ['car'] }, project_id: 'one-car-frame', limit: 1 });
    expect(one.body).toMatchObject({ assets: 1, annotations: 50, truncated: true });
  });

  it('writes nothing when a write fails, or the project’s label config refuses a class', async () => {
    await db.$executeRawUnsafe(`
      CREATE FUNCTION fail_bus() RETURNS trigger AS $$
      BEGIN IF NEW.label = 'bus' THEN RAISE EXCEPTION 'no buses'; END IF; RETURN NEW; END $$ LANGUAGE plpgsql`);
    await db.$executeRawUnsafe(
      `CREATE TRIGGER fail_bus BEFORE INSERT ON annotations FOR EACH ROW EXECUTE FUNCTION fail_bus()`,
    );
    try {
      const failed = await extract({ predicate: { l1: ['vehicle'] }, project_id: 'doomed' });
      expect(failed.status).toBe(500);
      expect(await db.asset.count({ where: { projectId: 'doomed' } })).toBe(0);
      expect(await db.auditLog.count({ where: { action: 'curation.extracted', subjectId: 'doomed' } })).toBe(
        0,
      );
    } finally {
      await db.$executeRawUnsafe('DROP TRIGGER fail_bus ON annotations');
      await db.$executeRawUnsafe('DROP FUNCTION fail_bus()');
    }
    await call('POST', '/api/projects/cars-only/label-config', { labels: ['car'] });
    const refused = await extract({
      predicate: { classes: ['vehicle_fallback', 'car', 'bus'] },
      project_id: 'cars-only',
    });
    expect(refused.status).toBe(422);
    expect(refused.body.detail).toMatch(/does not allow the classes bus/);
    expect(await db.asset.count({ where: { projectId: 'cars-only' } })).toBe(0);
  });

  it('answers bad input with problem+json', async () => {
    const slice = await newSlice({});
    const both = await extract({ slice_id: slice, predicate: {}, project_id: 'x' });
    expect(both.status).toBe(422);
    expect(both.body.errors[0]).toMatchObject({ field: 'body.predicate', message: /exactly one/ });
    expect((await extract({ project_id: 'x' })).body.errors[0].field).toBe('body.slice_id');
    const unknown = await extract({ predicate: { classes: ['unicorn'] }, project_id: 'x' });
    expect(unknown.status).toBe(422);
    expect(unknown.body.errors[0].field).toBe('body.predicate.classes.0');
    const limits = await extract({ slice_id: slice, project_id: ' ', limit: 10_001 });
    expect(limits.body.errors.map((e: { field: string }) => e.field).sort()).toEqual([
      'body.limit',
      'body.project_id',
    ]);
    expect((await extract({ slice_id: randomUUID(), project_id: 'x' })).status).toBe(404);
    expect(
      (await call('POST', '/api/curation/extract', { slice_id: slice, project_id: 'x' }, stack.annotator))
        .status,
    ).toBe(403);
    expect(await db.asset.count({ where: { projectId: 'x' } })).toBe(0);
  });
});

describe('caps', () => {
  let bulk: string;
  beforeAll(async () => {
    bulk = (await db.session.create({ data: { name: 'bulk', sourceKind: 'frames' } })).id;
    // 30 000 frames with md5-derived hashes: near duplicates of nothing, far more than the threshold-16 cap.
    await db.$executeRaw`
      INSERT INTO frames (id, session_id, index, timestamp_ms, width, height, uri, phash)
      SELECT gen_random_uuid(), ${bulk}::uuid, g, g * 333, 64, 48, 'bulk/' || g, substr(md5(g::text), 1, 16)
        FROM generate_series(0, 29999) g`;
    await db.$executeRaw`
      INSERT INTO frame_embeddings (frame_id, model, vector)
      SELECT f.id, ${MODEL}, ARRAY(SELECT (random() - 0.5)::real FROM generate_series(1, 576) WHERE f.id IS NOT NULL)
        FROM frames f WHERE f.session_id = ${bulk}::uuid ORDER BY f.index LIMIT 2100`;
  });
  afterAll(async () => {
    await db.session.delete({ where: { id: bulk } });
  });

  it('clusters 30 000 frames at threshold 6 and refuses them at 16, naming the cap', async () => {
    const ok = await dedup({});
    expect(ok.status).toBe(200);
    expect(ok.body.frames_considered).toBe(30_009);
    // At this size the cheapest plan is four 16-bit bands searched at radius 1.
    expect(ok.body.method).toMatchObject({ band_bits: [16, 16, 16, 16], band_radius: 1 });
    expect(ok.body.clusters.map((c: { frames: unknown[] }) => c.frames.length)).toEqual([3, 2]);
    const refused = await dedup({ threshold: 16 });
    expect(refused.status).toBe(422);
    expect(refused.body).toMatchObject({
      type: 'urn:drivelab:problem:refused',
      frames: 30_009,
      threshold: 16,
    });
    expect(refused.body.frame_cap).toBeLessThan(30_009);
    expect(refused.body.detail).toMatch(/more than the \d+ one request may cluster at threshold 16/);
  });

  it('selects from 2 100 embedded frames, and refuses k × frames over the budget', async () => {
    const res = await diverse(`?k=20&session_ids=${bulk}`);
    expect(res.status).toBe(200);
    expect(res.body.candidates).toBe(2100);
    const ids = (await db.frame.findMany({ where: { sessionId: bulk }, select: { id: true } })).map(
      (f) => f.id,
    );
    expect(res.body.picks.map((p: { frame_id: string }) => p.frame_id)).toEqual(
      (await referencePicks(ids, 20)).map((p) => p.id),
    );
    const refused = await diverse(`?k=1000&session_ids=${bulk}`);
    expect(refused.status).toBe(422);
    expect(refused.body).toMatchObject({ candidates: 2100, k: 1000, work_budget: 1_000_000 });
  });
});
