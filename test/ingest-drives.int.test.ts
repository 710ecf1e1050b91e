import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import { header, writeMcap, writeRos1Bag, type BagMessage } from '../testkit/media/bag';
import {
  ingestAndWait,
  objectKeys,
  startIngestStack,
  uploadDrive,
  type IngestStack,
} from '../testkit/media/harness';
import { makeDriveVideo } from '../testkit/media/video';
import { makeZip } from '../testkit/media/zip';
import { startTestApi } from '../testkit/api';
import { testConfig } from '../testkit/stack';

/**
 * Bags (ROS 1 and MCAP) in, and every kind of bad drive refused with a clear error on the session
 * and on the job, leaving nothing half-written: no frame, audit, rejected or candidate rows and no
 * stored objects for the session.
 */
let stack: IngestStack;
let videoPath: string;
/** Nine distinct 640×360 JPEG frames cut from the test drive's moving segment. */
let jpegs: Buffer[];

beforeAll(async () => {
  stack = await startIngestStack();
  videoPath = makeDriveVideo(stack.dir);
  const cut = path.join(stack.dir, 'cut');
  fs.mkdirSync(cut);
  execFileSync('/usr/bin/ffmpeg', [
    '-v',
    'error',
    '-i',
    videoPath,
    '-vf',
    'fps=3',
    '-t',
    '3',
    path.join(cut, '%02d.jpg'),
  ]);
  jpegs = fs
    .readdirSync(cut)
    .sort()
    .map((f) => fs.readFileSync(path.join(cut, f)));
});
afterAll(() => stack?.close());

const NS = 1_000_000_000n;
const T0 = 1_700_000_000n * NS;

/** 10 Hz for 3 s; every message of a 1/3-s bucket shows that bucket's frame. */
async function cameraMessages(
  topic: string,
  type: 'sensor_msgs/Image' | 'sensor_msgs/CompressedImage',
): Promise<BagMessage[]> {
  const raws =
    type === 'sensor_msgs/Image'
      ? await Promise.all(jpegs.map((j) => sharp(j).resize(320, 240).removeAlpha().raw().toBuffer()))
      : [];
  return Array.from({ length: 30 }, (_, i) => {
    const timeNs = T0 + BigInt(i) * 100_000_000n;
    const frame = Math.floor((i * 100) / (1000 / 3));
    const message =
      type === 'sensor_msgs/Image'
        ? {
            header: header(timeNs, i),
            height: 240,
            width: 320,
            encoding: 'rgb8',
            is_bigendian: 0,
            step: 960,
            data: raws[frame]!,
          }
        : { header: header(timeNs, i), format: 'jpeg', data: jpegs[frame]! };
    return { topic, type, timeNs, message };
  });
}

const chatter = (n: number): BagMessage[] =>
  Array.from({ length: n }, (_, i) => ({
    topic: '/chatter',
    type: 'std_msgs/String' as const,
    timeNs: T0 + BigInt(i) * 50_000_000n,
    message: { data: `hello ${i}` },
  }));

async function expectFrames(body: Record<string, unknown>, n: number) {
  const { started, outcome } = await ingestAndWait(stack, body);
  if (!outcome.ok) throw outcome.error;
  const frames = await stack.api.deps.db.frame.findMany({
    where: { sessionId: started.session_id },
    orderBy: { index: 'asc' },
    include: { piiAudit: true },
  });
  expect(frames).toHaveLength(n);
  expect(frames.every((f) => f.piiAudit?.examined)).toBe(true);
  return { started, frames };
}

describe('bags', () => {
  it('ingests a ROS 1 bag, choosing the image topic by name among several, raw rgb8 images encoded as JPEG', async () => {
    const bag = writeRos1Bag([
      ...(await cameraMessages('/camera/front', 'sensor_msgs/Image')),
      ...(await cameraMessages('/camera/rear', 'sensor_msgs/CompressedImage')),
      ...chatter(40),
    ]);
    const uploadId = await uploadDrive(stack, 'drive.bag', bag);
    // Two image topics and no choice: refused by name, listing them.
    const unchosen = await ingestAndWait(stack, { upload_id: uploadId, kind: 'bag' });
    expect(unchosen.outcome.ok).toBe(false);
    const job = await stack.api.call('GET', `/api/imports/${unchosen.started.job_id}`, {
      token: stack.reviewer,
    });
    expect(job.body.error).toMatch(/several image topics.*\/camera\/front, \/camera\/rear/);

    const { frames, started } = await expectFrames(
      { upload_id: uploadId, kind: 'bag', topic: '/camera/front' },
      9,
    );
    expect(frames.map((f) => Math.round(f.timestampMs))).toEqual([
      0, 400, 700, 1000, 1400, 1700, 2000, 2400, 2700,
    ]);
    expect(frames[0]).toMatchObject({ width: 320, height: 240 });
    const session = await stack.api.deps.db.session.findUniqueOrThrow({ where: { id: started.session_id } });
    expect(session.sourceMeta).toMatchObject({
      kind: 'bag',
      format: 'ros1',
      topic: '/camera/front',
      durationMs: 2900,
    });
    expect(session.presentSensors).toEqual(['/camera/front']);
  });

  it('ingests an MCAP file with zstd chunks and CompressedImage messages', async () => {
    const mcap = await writeMcap([
      ...(await cameraMessages('/cam', 'sensor_msgs/CompressedImage')),
      ...chatter(10),
    ]);
    const uploadId = await uploadDrive(stack, 'drive.mcap', mcap);
    const dry = await stack.api.call('POST', '/api/imports/dry-run', {
      token: stack.reviewer,
      body: { upload_id: uploadId, kind: 'bag' },
    });
    expect(dry.body).toMatchObject({
      ok: true,
      problem: null,
      probe: {
        format: 'mcap',
        topic: '/cam',
        imageTopics: [{ topic: '/cam', type: 'sensor_msgs/CompressedImage', messages: 30 }],
      },
    });
    const { frames } = await expectFrames({ upload_id: uploadId, kind: 'bag' }, 9);
    expect(frames[0]).toMatchObject({ width: 640, height: 360 });
  });
});

describe('bad drives end with a clear error on the session and the job, nothing half-written', () => {
  const truncated = () => {
    const faststart = path.join(stack.dir, 'faststart.mp4');
    execFileSync('/usr/bin/ffmpeg', [
      '-v',
      'error',
      '-y',
      '-i',
      videoPath,
      '-c',
      'copy',
      '-movflags',
      '+faststart',
      faststart,
    ]);
    const bytes = fs.readFileSync(faststart);
    return bytes.subarray(0, Math.floor(bytes.length * 0.6));
  };
  const cases: Array<[string, () => Buffer | Promise<Buffer>, string, RegExp]> = [
    [
      'a corrupt video',
      () =>
        Buffer.concat([Buffer.from([0, 0, 0, 0x18]), Buffer.from('ftypmp42'), Buffer.alloc(40_000, 0x5a)]),
      'video',
      /not a readable video/,
    ],
    [
      'a truncated video (frames were already extracted when it broke)',
      truncated,
      'video',
      /ffmpeg stopped after [1-9]\d* frames/,
    ],
    [
      'a non-media file',
      () => Buffer.from('%PDF-1.4\n' + 'lorem ipsum '.repeat(2000)),
      'video',
      /not a readable video/,
    ],
    [
      'a bag with no image topic',
      () => writeRos1Bag(chatter(20)),
      'bag',
      /no image topic.*\/chatter \(std_msgs\/String\)/,
    ],
    ['an empty zip', () => makeZip([]), 'frames', /holds no frames/],
    [
      'a zip with path traversal entries',
      () =>
        makeZip([
          { name: 'ok/0001.jpg', data: jpegs[0]! },
          { name: '../../evil.jpg', data: jpegs[1]! },
        ]),
      'frames',
      /unsafe entry "\.\.\/\.\.\/evil\.jpg" \(path traversal/,
    ],
    [
      'a bag declared as a video',
      () => writeRos1Bag(chatter(5)),
      'video',
      /declared as kind "video" but the file is a bag/,
    ],
  ];

  it.each(cases)('%s', async (_what, make, kind, error) => {
    const uploadId = await uploadDrive(stack, `bad-${kind}`, await make());
    const { started, outcome } = await ingestAndWait(stack, { upload_id: uploadId, kind });
    expect(outcome.ok).toBe(false);
    const { db } = stack.api.deps;
    const session = await db.session.findUniqueOrThrow({ where: { id: started.session_id } });
    expect(session.state).toBe('failed');
    expect(session.error).toMatch(error);
    expect(session.contentHash).toBeNull(); // the drive may be tried again
    const job = await stack.api.call('GET', `/api/imports/${started.job_id}`, { token: stack.annotator });
    expect(job.body).toMatchObject({ state: 'failed', stage: 'failed', error: session.error });
    const where = { sessionId: started.session_id };
    expect([
      await db.frame.count({ where }),
      await db.rejectedFrame.count({ where }),
      await db.ingestCandidate.count({ where }),
      await db.piiAudit.count({ where: { frame: where } }),
    ]).toEqual([0, 0, 0, 0]);
    expect(await objectKeys(stack, 'frames', `${started.session_id}/`)).toEqual([]);
    expect(await objectKeys(stack, 'redacted', `${started.session_id}/`)).toEqual([]);
    // The Temporal history shows the failure, not retries of a drive that cannot get better.
    const history = await stack.env.client.workflow.getHandle(started.workflow_id).fetchHistory();
    const attempts = (history.events ?? [])
      .filter((e) => e.activityTaskStartedEventAttributes)
      .map((e) => e.activityTaskStartedEventAttributes!.attempt ?? 0);
    expect(Math.max(...attempts)).toBe(1);
  });
});

describe('Temporal not answering', () => {
  it('answers 503 and keeps no session, so the drive can be ingested later', async () => {
    const uploadId = await uploadDrive(stack, 'later.zip', makeZip([{ name: 'a.jpg', data: jpegs[0]! }]));
    const deaf = await startTestApi(
      testConfig({ DATABASE_URL: stack.db.url, APP_TEMPORAL__ADDRESS: '127.0.0.1:9' }),
    );
    try {
      const before = await stack.api.deps.db.session.count();
      const res = await deaf.call('POST', '/api/ingest', {
        token: stack.reviewer,
        body: { upload_id: uploadId, kind: 'frames' },
      });
      expect(res.status).toBe(503);
      expect(res.body.detail).toMatch(/could not be started.*nothing was kept/);
      expect(await stack.api.deps.db.session.count()).toBe(before);
      expect(
        await stack.api.deps.db.ingestJob.count({
          where: { source: { path: ['upload_id'], equals: uploadId } },
        }),
      ).toBe(0);
    } finally {
      await deaf.close();
    }
    const { outcome } = await ingestAndWait(stack, { upload_id: uploadId, kind: 'frames' });
    expect(outcome.ok).toBe(true);
  });
});
