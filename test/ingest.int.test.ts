import fs from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import { makeDriveVideo, DRIVE_LAYOUT, SEGMENTS_MS } from '../testkit/media/video';
import {
  ingestAndWait,
  objectKeys,
  startIngestStack,
  uploadDrive,
  type IngestStack,
} from '../testkit/media/harness';
import { makeZip } from '../testkit/media/zip';
import { recordHistoryIfAsked, replayRecordedHistory, scheduledActivities } from '../testkit/temporal';

/**
 * Ingest end to end on the real stack: a drive uploaded through the upload routes becomes a
 * session of deduplicated, gated, redacted frames, each with one PII audit; the Temporal history
 * reads as the business steps; progress shows on the jobs stream and the imports routes.
 */
let stack: IngestStack;
let video: Buffer;

beforeAll(async () => {
  // The drive's plate sign stands on a test pattern, on no vehicle: only the whole-frame search
  // looks there (docs/pii.md "Search"); the other ingest tests run the default.
  stack = await startIngestStack({ env: { APP_PII__SEARCH: 'frame' } });
  video = fs.readFileSync(makeDriveVideo(stack.dir));
});
afterAll(() => stack?.close());

async function readJobEvents(
  token: string,
  until: (text: string) => boolean,
): Promise<{ text: string; stop: () => void; done: Promise<string> }> {
  const controller = new AbortController();
  const res = await fetch(`${stack.api.url}/api/events/jobs?token=${token}`, { signal: controller.signal });
  expect(res.status).toBe(200);
  const state = { text: '', stop: () => controller.abort(), done: Promise.resolve('') };
  state.done = (async () => {
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    try {
      while (!until(state.text)) {
        const { value, done } = await reader.read();
        if (done) break;
        state.text += decoder.decode(value);
      }
    } catch {
      // aborted
    }
    controller.abort();
    return state.text;
  })();
  return state;
}

describe('a dashcam video', () => {
  let result: Awaited<ReturnType<typeof ingestAndWait>>;
  let events: Awaited<ReturnType<typeof readJobEvents>>;

  beforeAll(async () => {
    events = await readJobEvents(stack.annotator, (t) => /event: ingest\.completed/.test(t));
    const uploadId = await uploadDrive(stack, 'drive.mp4', video);
    result = await ingestAndWait(stack, {
      upload_id: uploadId,
      kind: 'video',
      name: 'dashcam 1',
      vehicle_id: 'car-7',
    });
  });

  it('answers 202 with the session, the workflow ingest-<session_id> and a Location to watch', () => {
    expect(result.started.workflow_id).toBe(`ingest-${result.started.session_id}`);
    expect(result.location).toBe(`/api/imports/${result.started.job_id}`);
    if (!result.outcome.ok) throw result.outcome.error;
  });

  it('keeps the distinct, usable frames with their source timestamps; drops the duplicates; rejects blur and dark with reasons', async () => {
    const { db } = stack.api.deps;
    const sessionId = result.started.session_id;
    const session = await db.session.findUniqueOrThrow({ where: { id: sessionId } });
    expect(session).toMatchObject({
      state: 'ready',
      frameCount: DRIVE_LAYOUT.accepted,
      duplicateCount: DRIVE_LAYOUT.duplicates,
      rejectedCount: DRIVE_LAYOUT.blur + DRIVE_LAYOUT.underexposed,
      durationMs: 8000,
      targetFps: 3,
      name: 'dashcam 1',
      vehicleId: 'car-7',
    });
    const frames = await db.frame.findMany({ where: { sessionId }, orderBy: { index: 'asc' } });
    expect(frames.map((f) => f.index)).toEqual([...Array(DRIVE_LAYOUT.accepted).keys()]);
    // Source timestamps: multiples of 1/3 s (30 fps source, first frame of each bucket), increasing.
    const ts = frames.map((f) => f.timestampMs);
    expect(ts).toEqual([...ts].sort((a, b) => a - b));
    for (const t of ts) expect(Math.abs(t - Math.round(t / (1000 / 3)) * (1000 / 3))).toBeLessThan(1);
    const inSegment = (seg: readonly [number, number]) => ts.filter((t) => t >= seg[0] && t < seg[1]).length;
    expect(inSegment(SEGMENTS_MS.moving)).toBe(9);
    expect(inSegment(SEGMENTS_MS.still)).toBe(1);
    expect(inSegment(SEGMENTS_MS.blur) + inSegment(SEGMENTS_MS.dark)).toBe(0);
    expect(inSegment(SEGMENTS_MS.movingAgain)).toBe(3);
    expect(frames.every((f) => f.width === 640 && f.height === 360)).toBe(true);

    const rejected = await db.rejectedFrame.findMany({ where: { sessionId }, orderBy: { seq: 'asc' } });
    expect(rejected.map((r) => r.reason)).toEqual([
      ...Array(DRIVE_LAYOUT.blur).fill('blur'),
      ...Array(DRIVE_LAYOUT.underexposed).fill('underexposed'),
    ]);
    expect(
      rejected.every((r) => r.timestampMs >= SEGMENTS_MS.blur[0] && r.timestampMs < SEGMENTS_MS.dark[1]),
    ).toBe(true);
    // No candidate rows stay behind.
    expect(await db.ingestCandidate.count({ where: { sessionId } })).toBe(0);
  });

  it('gives every frame exactly one PII audit and a redacted copy; the faces and the plate are found and pixelated', async () => {
    const { db, storage } = stack.api.deps;
    const sessionId = result.started.session_id;
    const frames = await db.frame.findMany({
      where: { sessionId },
      orderBy: { index: 'asc' },
      include: { piiAudit: true },
    });
    expect(frames.every((f) => f.piiAudit?.examined === true && f.redactedUri === f.uri)).toBe(true);
    expect(await db.piiAudit.count({ where: { frame: { sessionId } } })).toBe(frames.length);
    const moving = frames.filter((f) => f.timestampMs < SEGMENTS_MS.moving[1]);
    // The astronaut's face is in every frame of the moving segment, the plate sign too.
    expect(moving.filter((f) => f.piiAudit!.nFaces >= 1).length).toBeGreaterThanOrEqual(8);
    expect(moving.filter((f) => f.piiAudit!.nPlates >= 1).length).toBeGreaterThanOrEqual(8);

    // The redacted copy differs from the original inside each region and is the same frame outside.
    const f = moving.find((x) => x.piiAudit!.nFaces >= 1)!;
    const regions = f.piiAudit!.regions as Array<{ kind: string; bbox: [number, number, number, number] }>;
    const read = async (bucket: string) => {
      const parts: Buffer[] = [];
      for await (const c of await storage.client.getObject(bucket, f.uri)) parts.push(c as Buffer);
      return sharp(Buffer.concat(parts)).removeAlpha().raw().toBuffer();
    };
    const [orig, red] = await Promise.all([read(storage.bucket('frames')), read(storage.bucket('redacted'))]);
    const meanDiff = ([x1, y1, x2, y2]: number[]) => {
      let sum = 0;
      let n = 0;
      for (let y = y1!; y < y2!; y++)
        for (let x = x1!; x < x2!; x++)
          for (let c = 0; c < 3; c++, n++)
            sum += Math.abs(orig[(y * 640 + x) * 3 + c]! - red[(y * 640 + x) * 3 + c]!);
      return sum / n;
    };
    const face = regions.find((r) => r.kind === 'face')!;
    expect(meanDiff(face.bbox)).toBeGreaterThan(8);
    expect(meanDiff([0, 340, 100, 360])).toBeLessThan(4); // a corner without PII: only re-encoding noise
  });

  it('stores exactly the frames: the object keys under the session equal the frame rows, in both buckets', async () => {
    const sessionId = result.started.session_id;
    const uris = (await stack.api.deps.db.frame.findMany({ where: { sessionId }, select: { uri: true } }))
      .map((f) => f.uri)
      .sort();
    expect(await objectKeys(stack, 'frames', `${sessionId}/`)).toEqual(uris);
    expect(await objectKeys(stack, 'redacted', `${sessionId}/`)).toEqual(uris);
  });

  it('reads as the business steps in the Temporal history, scores the session health, and replays deterministically', async () => {
    const history = await stack.env.client.workflow.getHandle(result.started.workflow_id).fetchHistory();
    expect(scheduledActivities(history)).toEqual([
      'probeDrive',
      'extractFrames',
      'gateFrameQuality',
      'dropNearDuplicates',
      'registerFrames',
      'redactPii',
      'inspectSessionHealth',
      'completeIngest',
    ]);
    expect(
      await stack.api.deps.db.sessionHealth.count({ where: { sessionId: result.started.session_id } }),
    ).toBe(1);

    // Recorded on RECORD_HISTORIES=1; the replay guards the workflow's determinism.
    const file = path.join(__dirname, 'histories/ingest.json');
    await recordHistoryIfAsked(file, () => Promise.resolve(history));
    await expect(
      replayRecordedHistory(file, require.resolve('../workflows'), 'recorded'),
    ).resolves.toBeUndefined();
  });

  it('shows the job on the imports routes, the progress route and the jobs stream', async () => {
    const job = await stack.api.call('GET', result.location!, { token: stack.annotator });
    expect(job.status).toBe(200);
    expect(job.body).toMatchObject({
      job_id: result.started.job_id,
      state: 'completed',
      stage: 'completed',
      progress: 1,
      frames_extracted: DRIVE_LAYOUT.extracted,
      frames_rejected: 6,
      frames_duplicate: DRIVE_LAYOUT.duplicates,
      frames_accepted: DRIVE_LAYOUT.accepted,
      frames_redacted: DRIVE_LAYOUT.accepted,
      session: { state: 'ready', frame_count: DRIVE_LAYOUT.accepted },
    });
    expect(job.body.temporal_ui).toContain(result.started.workflow_id);
    const progress = await stack.api.call(
      'GET',
      `/api/ingest/progress?session_id=${result.started.session_id}`,
      { token: stack.annotator },
    );
    expect(progress.body.recent[0]).toMatchObject({ job_id: result.started.job_id, state: 'completed' });
    const list = await stack.api.call('GET', '/api/imports?state=completed', { token: stack.annotator });
    expect(list.body.items.map((j: { job_id: string }) => j.job_id)).toContain(result.started.job_id);

    const text = await events.done;
    for (const type of ['ingest.queued', 'ingest.started', 'ingest.progress', 'ingest.completed'])
      expect(text).toContain(`event: ${type}`);
    expect(text).toContain(result.started.session_id);
  });

  it('recognises the same drive uploaded again: 409 naming the first session, no second session', async () => {
    const again = await uploadDrive(stack, 'copy-of-drive.mp4', video);
    const res = await stack.api.call('POST', '/api/ingest', {
      token: stack.reviewer,
      body: { upload_id: again, kind: 'video' },
    });
    expect(res.status).toBe(409);
    expect(res.body).toMatchObject({
      type: 'urn:drivelab:problem:conflict',
      session_id: result.started.session_id,
      workflow_id: result.started.workflow_id,
      session_state: 'ready',
    });
    expect(await stack.api.deps.db.session.count({ where: { contentHash: { not: null } } })).toBe(1);
    const dry = await stack.api.call('POST', '/api/imports/dry-run', {
      token: stack.reviewer,
      body: { upload_id: again, kind: 'video' },
    });
    expect(dry.body).toMatchObject({
      ok: false,
      duplicate_of: { session_id: result.started.session_id },
      probe: { kind: 'video', width: 640, height: 360, estimatedFrames: 24 },
    });
  });
});

describe('folders of frames', () => {
  /** Frames cut from the test video with plain ffmpeg, named so that natural order matters. */
  let frameFiles: Array<{ name: string; data: Buffer }>;
  beforeAll(async () => {
    const out = path.join(stack.dir, 'cut');
    fs.mkdirSync(out);
    const { execFileSync } = await import('node:child_process');
    execFileSync('/usr/bin/ffmpeg', [
      '-v',
      'error',
      '-i',
      path.join(stack.dir, 'drive.mp4'),
      '-vf',
      'fps=3',
      '-t',
      '3',
      path.join(out, 'f%d.jpg'),
    ]);
    frameFiles = fs
      .readdirSync(out)
      .map((name) => ({ name: `drive/${name}`, data: fs.readFileSync(path.join(out, name)) }));
    fs.rmSync(out, { recursive: true });
  });

  it('ingests an uploaded zip of frames in natural name order, at the given capture rate', async () => {
    const zip = makeZip([...frameFiles, { name: 'drive/README.txt', data: Buffer.from('not a frame') }]);
    const uploadId = await uploadDrive(stack, 'frames.zip', zip);
    const { started, outcome } = await ingestAndWait(stack, {
      upload_id: uploadId,
      kind: 'frames',
      frame_rate: 3,
    });
    if (!outcome.ok) throw outcome.error;
    const frames = await stack.api.deps.db.frame.findMany({
      where: { sessionId: started.session_id },
      orderBy: { index: 'asc' },
    });
    expect(frames).toHaveLength(9);
    expect(frames.map((f) => Math.round(f.timestampMs))).toEqual([
      0, 333, 667, 1000, 1333, 1667, 2000, 2333, 2667,
    ]);
    const session = await stack.api.deps.db.session.findUniqueOrThrow({ where: { id: started.session_id } });
    expect(session.sourceMeta).toMatchObject({ format: 'zip', frameFiles: 9, ignoredFiles: 1 });
  });

  it('samples a faster sequence down to the target rate', async () => {
    const zip = makeZip(
      frameFiles.map((f, i) => ({ name: `fast/${String(i).padStart(3, '0')}.jpg`, data: f.data })),
    );
    const uploadId = await uploadDrive(stack, 'fast.zip', zip);
    // 9 frames at 9 fps span 1 s: buckets of 1/3 s keep every third.
    const { started, outcome } = await ingestAndWait(stack, {
      upload_id: uploadId,
      kind: 'frames',
      frame_rate: 9,
    });
    if (!outcome.ok) throw outcome.error;
    const frames = await stack.api.deps.db.frame.findMany({
      where: { sessionId: started.session_id },
      orderBy: { index: 'asc' },
    });
    expect(frames.map((f) => (f.context as { seq: number }).seq)).toEqual([0, 1, 2]);
    expect(frames.map((f) => Math.round(f.timestampMs))).toEqual([0, 333, 667]);
  });

  it('ingests a server folder for an admin only, inside the allowed roots', async () => {
    const folder = path.join(stack.dir, 'folder');
    fs.mkdirSync(folder);
    for (const f of frameFiles.slice(0, 6))
      fs.writeFileSync(path.join(folder, path.basename(f.name)), f.data);
    const asReviewer = await stack.api.call('POST', '/api/ingest', {
      token: stack.reviewer,
      body: { path: folder, kind: 'frames' },
    });
    expect(asReviewer.status).toBe(403);
    const outside = await stack.api.call('POST', '/api/ingest', {
      token: stack.admin,
      body: { path: '/etc', kind: 'frames' },
    });
    expect(outside.status).toBe(422);
    expect(outside.body.detail).toMatch(/outside the folders allowed/);
    const escape = await stack.api.call('POST', '/api/ingest', {
      token: stack.admin,
      body: { path: `${folder}/../../../etc`, kind: 'frames' },
    });
    expect(escape.status).toBe(422);
    const { started, outcome } = await ingestAndWait(stack, { path: folder, kind: 'frames' }, stack.admin);
    if (!outcome.ok) throw outcome.error;
    expect(await stack.api.deps.db.frame.count({ where: { sessionId: started.session_id } })).toBe(6);
    const session = await stack.api.deps.db.session.findUniqueOrThrow({ where: { id: started.session_id } });
    expect(session.sourceUri).toBe(fs.realpathSync(folder));
    // The workflow's first step hashed the folder (the request did not read it).
    expect(session.contentHash).toMatch(/^[0-9a-f]{64}$/);
    expect(
      await stack.api.deps.db.auditLog.count({
        where: { action: 'ingest.hashed', subjectId: started.session_id },
      }),
    ).toBe(1);
  });

  it('hashes a server path in the workflow: the same folder again is accepted (202), then its job fails naming the first session', async () => {
    const folder = path.join(stack.dir, 'folder');
    const first = await stack.api.deps.db.session.findFirstOrThrow({
      where: { sourceUri: fs.realpathSync(folder), state: 'ready' },
    });
    // The dry-run stays cheap for a path: no hash, a bounded probe.
    const dry = await stack.api.call('POST', '/api/imports/dry-run', {
      token: stack.admin,
      body: { path: folder, kind: 'frames' },
    });
    expect(dry.status).toBe(200);
    expect(dry.body).toMatchObject({
      ok: true,
      sha256: null,
      duplicate_of: null,
      probe_timed_out: false,
      probe: { kind: 'frames' },
    });
    const { started, outcome } = await ingestAndWait(stack, { path: folder, kind: 'frames' }, stack.admin);
    expect(outcome.ok).toBe(false);
    const job = await stack.api.call('GET', `/api/imports/${started.job_id}`, { token: stack.annotator });
    expect(job.body).toMatchObject({ state: 'failed', stage: 'failed' });
    expect(job.body.error).toMatch(new RegExp(`already ingested as session ${first.id} \\(ready\\)`));
    const session = await stack.api.deps.db.session.findUniqueOrThrow({ where: { id: started.session_id } });
    expect(session).toMatchObject({ state: 'failed', contentHash: null, frameCount: 0 });
  });
});

describe('the imports routes', () => {
  it('lists formats, validates bodies naming the fields, and starts a batch with one result per drive', async () => {
    const formats = await stack.api.call('GET', '/api/imports/formats', { token: stack.annotator });
    expect(formats.body).toMatchObject({ target_fps: 3, server_folders_allowed: true });
    expect(formats.body.kinds.map((k: { kind: string }) => k.kind)).toEqual(['video', 'bag', 'frames']);

    const both = await stack.api.call('POST', '/api/ingest', {
      token: stack.reviewer,
      body: { upload_id: '00000000-0000-4000-8000-000000000000', path: '/x', kind: 'video' },
    });
    expect(both.status).toBe(422);
    expect(both.body.errors.map((e: { field: string }) => e.field)).toContain('body.upload_id');
    const topic = await stack.api.call('POST', '/api/ingest', {
      token: stack.reviewer,
      body: { upload_id: '00000000-0000-4000-8000-000000000000', kind: 'video', topic: '/cam' },
    });
    expect(topic.body.errors.map((e: { field: string }) => e.field)).toContain('body.topic');
    const unknown = await stack.api.call('POST', '/api/ingest', {
      token: stack.reviewer,
      body: { upload_id: '00000000-0000-4000-8000-000000000000', kind: 'video' },
    });
    expect(unknown.status).toBe(422);
    expect(unknown.body.detail).toMatch(/no upload/);
    const annotator = await stack.api.call('POST', '/api/ingest', {
      token: stack.annotator,
      body: { upload_id: '00000000-0000-4000-8000-000000000000', kind: 'video' },
    });
    expect(annotator.status).toBe(403);
    const missingJob = await stack.api.call('GET', '/api/imports/00000000-0000-4000-8000-000000000000', {
      token: stack.annotator,
    });
    expect(missingJob.status).toBe(404);

    const copy = await uploadDrive(stack, 'again.mp4', video);
    const batch = await stack.api.call('POST', '/api/imports/start', {
      token: stack.reviewer,
      body: {
        drives: [
          { upload_id: copy, kind: 'video' },
          { upload_id: '00000000-0000-4000-8000-000000000000', kind: 'video' },
        ],
      },
    });
    // Nothing started, so no 202: the answer says what happened to each drive.
    expect(batch.status).toBe(422);
    expect(batch.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(batch.body.results).toEqual([
      expect.objectContaining({ index: 0, status: 'duplicate', session_id: expect.any(String) }),
      expect.objectContaining({ index: 1, status: 'refused', detail: expect.stringMatching(/no upload/) }),
    ]);
    const duplicates = await stack.api.call('POST', '/api/imports/start', {
      token: stack.reviewer,
      body: { drives: [{ upload_id: copy, kind: 'video' }] },
    });
    expect(duplicates.status).toBe(409);
    expect(duplicates.body.results).toEqual([expect.objectContaining({ index: 0, status: 'duplicate' })]);
  });
});
