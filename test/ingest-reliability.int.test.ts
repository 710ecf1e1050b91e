import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import {
  ingestAndWait,
  objectKeys,
  startIngestStack,
  uploadDrive,
  type IngestStack,
} from '../testkit/media/harness';
import { makePatternVideo } from '../testkit/media/video';
import { REPO_ROOT, localStackEnv } from '../testkit/stack';

/**
 * The cpu worker is killed (SIGKILL, no draining) in the middle of extractFrames and again in the
 * middle of redactPii; fresh workers take over. The ingest completes with the same frames as an
 * uninterrupted ingest of the same content, no duplicate frames, one audit per frame, and no
 * object in MinIO that no frame row names.
 */
jest.setTimeout(420_000);

let stack: IngestStack;
const workers: ChildProcess[] = [];

beforeAll(async () => {
  stack = await startIngestStack({ worker: false });
});
afterAll(async () => {
  for (const w of workers) if (w.exitCode === null && w.signalCode === null) w.kill('SIGKILL');
  await stack?.close();
});

/** The real workers-cpu process on the test database and the private Temporal server. */
async function startWorker(): Promise<ChildProcess> {
  // tsx as a loader inside the one node process, so SIGKILL hits the worker itself (the tsx CLI would
  // leave its child running).
  const proc = spawn(process.execPath, ['--import', 'tsx', path.join(REPO_ROOT, 'workers-cpu/main.ts')], {
    cwd: REPO_ROOT,
    env: {
      ...process.env,
      ...localStackEnv(),
      APP_ENV: 'test',
      APP_LOG__LEVEL: 'info',
      DATABASE_URL: stack.db.url,
      APP_TEMPORAL__ADDRESS: stack.env.address,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  workers.push(proc);
  let output = '';
  proc.stdout!.on('data', (d) => (output += d));
  proc.stderr!.on('data', (d) => (output += d));
  for (let i = 0; i < 480 && !/workers-cpu polling/.test(output); i++)
    await new Promise((r) => setTimeout(r, 250));
  if (!/workers-cpu polling/.test(output)) throw new Error(`workers-cpu did not start:\n${output}`);
  return proc;
}

async function until(what: string, check: () => Promise<boolean>, ms = 120_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function killHard(proc: ChildProcess): Promise<void> {
  const exited = new Promise((r) => proc.once('exit', r));
  proc.kill('SIGKILL');
  await exited;
}

it('survives the worker being killed during extraction and during redaction', async () => {
  const { db } = stack.api.deps;
  const original = makePatternVideo(path.join(stack.dir, 'long.mp4'), {
    width: 1280,
    height: 720,
    seconds: 24,
  });
  // The same frames in different bytes (another container title): a second drive for the baseline.
  const twin = path.join(stack.dir, 'twin.mp4');
  execFileSync('/usr/bin/ffmpeg', [
    '-v',
    'error',
    '-y',
    '-i',
    original,
    '-c',
    'copy',
    '-metadata',
    'title=twin',
    twin,
  ]);

  let worker = await startWorker();
  const crashed = await stack.api.call('POST', '/api/ingest', {
    token: stack.reviewer,
    body: { upload_id: await uploadDrive(stack, 'long.mp4', fs.readFileSync(original)), kind: 'video' },
  });
  expect(crashed.status).toBe(202);
  const sessionId: string = crashed.body.session_id;

  await until(
    'extraction to be under way',
    async () => (await db.ingestCandidate.count({ where: { sessionId } })) >= 5,
  );
  const extractedAtKill = await db.ingestCandidate.count({ where: { sessionId } });
  await killHard(worker);
  worker = await startWorker();

  await until(
    'redaction to be under way',
    async () => (await db.piiAudit.count({ where: { frame: { sessionId } } })) >= 3,
    300_000,
  );
  await killHard(worker);
  worker = await startWorker();

  await stack.env.client.workflow.getHandle(crashed.body.workflow_id).result();
  const baseline = await ingestAndWait(stack, {
    upload_id: await uploadDrive(stack, 'twin.mp4', fs.readFileSync(twin)),
    kind: 'video',
  });
  if (!baseline.outcome.ok) throw baseline.outcome.error;

  // Both kills landed inside the steps: each step ran a second attempt.
  const history = await stack.env.client.workflow.getHandle(crashed.body.workflow_id).fetchHistory();
  const scheduled = new Map<string, string>();
  const attempts = new Map<string, number>();
  for (const e of history.events ?? []) {
    if (e.activityTaskScheduledEventAttributes)
      scheduled.set(String(e.eventId), e.activityTaskScheduledEventAttributes.activityType!.name!);
    const started = e.activityTaskStartedEventAttributes;
    if (started) {
      const name = scheduled.get(String(started.scheduledEventId))!;
      attempts.set(name, Math.max(attempts.get(name) ?? 0, started.attempt ?? 0));
    }
  }
  expect(extractedAtKill).toBeLessThan(72);
  expect(attempts.get('extractFrames')).toBeGreaterThanOrEqual(2);
  expect(attempts.get('redactPii')).toBeGreaterThanOrEqual(2);

  const framesOf = (id: string) =>
    db.frame.findMany({ where: { sessionId: id }, orderBy: { index: 'asc' }, include: { piiAudit: true } });
  const [frames, baselineFrames] = await Promise.all([
    framesOf(sessionId),
    framesOf(baseline.started.session_id),
  ]);
  expect(frames.length).toBeGreaterThan(10);
  expect(frames.length).toBe(baselineFrames.length);
  expect(frames.map((f) => f.timestampMs)).toEqual(baselineFrames.map((f) => f.timestampMs));
  expect(frames.map((f) => f.phash)).toEqual(baselineFrames.map((f) => f.phash));
  expect(new Set(frames.map((f) => f.uri)).size).toBe(frames.length);
  expect(frames.every((f) => f.piiAudit?.examined && f.redactedUri === f.uri)).toBe(true);
  expect(await db.piiAudit.count({ where: { frame: { sessionId } } })).toBe(frames.length);
  expect(frames.map((f) => f.piiAudit!.nFaces)).toEqual(baselineFrames.map((f) => f.piiAudit!.nFaces));

  const session = await db.session.findUniqueOrThrow({ where: { id: sessionId } });
  const baselineSession = await db.session.findUniqueOrThrow({ where: { id: baseline.started.session_id } });
  expect([session.state, session.frameCount, session.duplicateCount, session.rejectedCount]).toEqual([
    'ready',
    baselineSession.frameCount,
    baselineSession.duplicateCount,
    baselineSession.rejectedCount,
  ]);

  // No orphans: what MinIO holds under the session is exactly what the frame rows name.
  const uris = frames.map((f) => f.uri).sort();
  expect(await objectKeys(stack, 'frames', `${sessionId}/`)).toEqual(uris);
  expect(await objectKeys(stack, 'redacted', `${sessionId}/`)).toEqual(uris);
  expect(await db.ingestCandidate.count({ where: { sessionId } })).toBe(0);
  await killHard(worker);
});
