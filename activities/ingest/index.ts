import { ApplicationFailure, Context } from '@temporalio/activity';
import { DomainError, UnavailableError } from '../../core/errors';
import { DriveRefusedError } from '../../core/media/errors';
import { markNearDuplicates } from '../../core/media/phash';
import { judgeQuality, type QualityMetrics } from '../../core/media/quality';
import { Prisma } from '../../generated/prisma/client';
import type { ActivityDeps } from '../deps';
import { recordAudit } from '../audit';
import { emitJobEvent } from '../events/jobs';
import { readObject } from '../inspector/frame-objects';
import { copySourceObject, readableSource } from '../sources';
import { driveFrames, probeDriveMedia } from '../media/drive';
import { driveEgoStreams } from '../media/ego';
import { egoSpeedsAt, storeEgoStreams } from '../ego/streams';
import type { DriveProbe } from '../media/frame-source';
import { detectPii } from '../pii/detector';
import { PII_IN_FLIGHT, runInFlight } from '../pii/in-flight';
import { redactFrame } from '../pii/redact';
import { analyseFrame } from './analyse';
import { hashServerDrive } from './hash';
import { reportJob, throttled } from './progress';
import { frameObjectKey, listKeys, removeKeys, removeSourceCopy } from './storage';
import type { IngestStepInput, IngestWorkflowInput } from './types';

/**
 * The ingest steps, one activity each, named as the business steps they are so a workflow
 * history reads as the ingest did. Every step is idempotent: a retry after a crashed worker
 * finds what the crashed attempt wrote (candidate rows, frame rows by (session, index), audits by
 * frame) and continues without duplicating it.
 */

/** Turns domain refusals into non-retryable failures; everything else is retried. */
async function step<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    if (err instanceof DriveRefusedError) throw ApplicationFailure.nonRetryable(err.message, 'DriveRefused');
    if (err instanceof UnavailableError)
      throw ApplicationFailure.nonRetryable(err.message, 'ModelUnavailable');
    throw err;
  }
}

const PROGRESS_MS = 1000;
/** How often probeDrive heartbeats while it hashes and probes (its heartbeat timeout is 15 s). */
const HEARTBEAT_MS = 3000;

/**
 * What a frame row keeps from ingest: its place in the drive, its measured exposure and sharpness
 * (read by the inspector) and, where the drive has a speed stream, the ego speed at the frame
 * (read by the critic's motion check; docs/ego-state.md).
 */
const frameContext = (seq: number, m: QualityMetrics, egoSpeed: number | null) => ({
  seq,
  exposure: { mean_luma: m.meanLuma, clipped_dark: m.clippedDark, clipped_bright: m.clippedBright },
  sharpness: m.laplacianVariance,
  ...(egoSpeed === null ? {} : { ego_speed_mps: egoSpeed }),
});
/** Frames analysed and stored concurrently while ffmpeg keeps decoding. */
const IN_FLIGHT = 4;
/** Candidate rows per insert. */
const ROW_BATCH = 16;

export function createIngestActivities(deps: ActivityDeps) {
  const { db, storage, config } = deps;
  const framesBucket = storage.bucket('frames');
  const redactedBucket = storage.bucket('redacted');

  /** The probe proper, and what the session keeps of it. */
  const probeAndRecord = async (input: IngestWorkflowInput): Promise<DriveProbe> => {
    const probe = await probeDriveMedia(deps, input.drive);
    await db.session.update({
      where: { id: input.sessionId },
      data: {
        durationMs: probe.durationMs,
        targetFps: config.ingest.targetFps,
        sourceMeta: probe as unknown as Prisma.InputJsonValue,
        presentSensors: [probe.topic ?? 'camera'],
      },
    });
    await reportJob(deps, input.jobId, { stage: 'extracting', framesExpected: probe.estimatedFrames });
    return probe;
  };

  /**
   * Writes a drive's hash, read by this ingest (a server path, a source copy), on its session. The
   * unique sessions.content_hash decides between two ingests of the same drive: the loser is
   * refused naming the winner.
   */
  const claimDriveHash = async (
    sessionId: string,
    { sha256, size }: { sha256: string; size: number },
    from: Record<string, string>,
  ): Promise<void> => {
    try {
      await db.session.update({ where: { id: sessionId }, data: { contentHash: sha256 } });
    } catch (err) {
      if (!(err instanceof Prisma.PrismaClientKnownRequestError && err.code === 'P2002')) throw err;
      const existing = await db.session.findUnique({ where: { contentHash: sha256 } });
      throw new DriveRefusedError(
        `this drive (sha256 ${sha256}) was already ingested as session ${existing?.id ?? 'unknown'} (${existing?.state ?? 'gone'}); no second session is made`,
      );
    }
    await recordAudit(db, {
      actorId: null,
      action: 'ingest.hashed',
      subjectType: 'session',
      subjectId: sessionId,
      detail: { sha256, size, ...from },
    });
  };

  /** Hashes a server drive and claims the hash (a retry finds it written). */
  const claimServerDrive = async (sessionId: string, real: string): Promise<void> => {
    const session = await db.session.findUniqueOrThrow({ where: { id: sessionId } });
    if (session.contentHash) return;
    await claimDriveHash(sessionId, await hashServerDrive(real), { path: real });
  };

  /** Heartbeats every HEARTBEAT_MS with what `detail` says then, while `work` runs. */
  const heartbeating = async <T>(detail: () => unknown, work: () => Promise<T>): Promise<T> => {
    const ctx = Context.current();
    const beat = setInterval(() => ctx.heartbeat(detail()), HEARTBEAT_MS);
    try {
      return await work();
    } finally {
      clearInterval(beat);
    }
  };

  return {
    /**
     * Copies a registered source's object (IngestWorkflowInput.sourceObject) into the session's
     * folder of source copies, streamed and hashed, then claims the hash as a server drive's is
     * claimed: the rest of the ingest reads the copy as it reads an upload. A retry after the copy
     * landed and was claimed does nothing; one after a crash mid-copy copies again onto the same
     * key (a multipart copy left unfinished is removed with the copy when the ingest ends).
     */
    copySourceObject: (input: IngestWorkflowInput): Promise<{ size: number; sha256: string }> =>
      step(async () => {
        const from = input.sourceObject;
        const to = input.drive.source;
        if (!from || to.type !== 'upload')
          throw new Error('copySourceObject needs a source object and its copy');
        await reportJob(deps, input.jobId, { state: 'running', stage: 'copying' }, 'ingest.started');
        const session = await db.session.findUniqueOrThrow({ where: { id: input.sessionId } });
        const landed = await storage.client.statObject(to.bucket, to.key).catch(() => null);
        if (session.contentHash && landed) return { size: landed.size, sha256: session.contentHash };
        let copied = 0;
        const hashed = await heartbeating(
          () => ({ step: 'copy', bytes: copied }),
          async () => {
            // Deleted (or not readable) since the request: no retry brings it back.
            const source = await readableSource(db, from.sourceId).catch((err: unknown) => {
              throw err instanceof DomainError ? new DriveRefusedError(err.message) : err;
            });
            return copySourceObject(deps, source, from.key, to, {
              maxBytes: config.ingest.sourceMaxMb * 1024 * 1024,
              onBytes: (n) => void (copied = n),
            });
          },
        );
        await claimDriveHash(input.sessionId, hashed, { source_id: from.sourceId, key: from.key });
        return hashed;
      }),

    /**
     * Recognises and reads the drive's header or index: kind, length, size, image topic; refuses
     * what cannot be ingested. A server path is hashed here first (the request only checked that
     * it is there): the session claims the hash, and a drive already ingested fails the job naming
     * the earlier session. Heartbeats throughout (the hash reads every byte).
     */
    probeDrive: (input: IngestWorkflowInput): Promise<DriveProbe> =>
      step(() =>
        heartbeating(
          () => ({ step: 'probe' }),
          async () => {
            // A source copy started the job already (its first step).
            const started = input.sourceObject ? 'ingest.progress' : 'ingest.started';
            await reportJob(deps, input.jobId, { state: 'running', stage: 'probing' }, started);
            if (input.drive.source.type === 'path')
              await claimServerDrive(input.sessionId, input.drive.source.path);
            return probeAndRecord(input);
          },
        ),
      ),

    /**
     * Streams the drive's frames at the target rate, measuring each (perceptual hash, blur,
     * exposure) and storing it as a candidate. A retry skips the candidates already stored. Then
     * a bag's ego topics (IMU, GNSS, speed) are kept as the session's ego streams.
     */
    extractFrames: (
      input: IngestWorkflowInput & { probe: DriveProbe },
    ): Promise<{ extracted: number; ego: Awaited<ReturnType<typeof storeEgoStreams>> }> =>
      step(async () => {
        const ctx = Context.current();
        const stored = new Set(
          (
            await db.ingestCandidate.findMany({
              where: { sessionId: input.sessionId },
              select: { seq: true },
            })
          ).map((c) => c.seq),
        );
        let seq = 0;
        const progress = throttled(PROGRESS_MS, () => reportJob(deps, input.jobId, { framesExtracted: seq }));
        const inFlight: Array<Promise<void>> = [];
        // Stores run beside the decoder; the first failure is kept and rethrown, none goes unhandled.
        let failure: unknown;
        const track = (p: Promise<void>) => p.catch((err: unknown) => void (failure ??= err));
        const store = async (
          frameSeq: number,
          frame: { timestampMs: number; bytes: Buffer; contentType: string },
        ) => {
          const analysis = await analyseFrame(frame.bytes, frameSeq);
          const objectKey = frameObjectKey(input.sessionId, frameSeq, frame.contentType);
          await storage.client.putObject(framesBucket, objectKey, frame.bytes, frame.bytes.length, {
            'Content-Type': frame.contentType,
          });
          // Rows are written in batches (a row only ever follows its stored object).
          pendingRows.push({
            sessionId: input.sessionId,
            seq: frameSeq,
            timestampMs: frame.timestampMs,
            width: analysis.width,
            height: analysis.height,
            phash: analysis.phash,
            metrics: { ...analysis.metrics },
            objectKey,
            contentType: frame.contentType,
          });
        };
        const pendingRows: Prisma.IngestCandidateCreateManyInput[] = [];
        const flushRows = async () => {
          const rows = pendingRows.splice(0);
          if (rows.length) await db.ingestCandidate.createMany({ data: rows, skipDuplicates: true });
        };
        try {
          for await (const frame of driveFrames(deps, input.drive, input.probe)) {
            const frameSeq = seq++;
            ctx.heartbeat({ seq });
            if (stored.has(frameSeq)) continue;
            inFlight.push(track(store(frameSeq, frame)));
            if (inFlight.length >= IN_FLIGHT) await inFlight.shift();
            if (failure) throw failure;
            if (pendingRows.length >= ROW_BATCH) await flushRows();
            await progress.tick();
          }
        } finally {
          // Even when the drive breaks, no store may land after this attempt has ended (and been cleaned up).
          await Promise.all(inFlight);
        }
        if (failure) throw failure;
        await flushRows();
        if (seq === 0) throw new DriveRefusedError('the drive yielded no frames');
        await progress.flush();
        const ego = await driveEgoStreams(storage, input.drive, (read) => ctx.heartbeat({ seq, ego: read }));
        return { extracted: seq, ego: await storeEgoStreams(db, input.sessionId, ego) };
      }),

    /** Applies the quality gate; a refused frame gets a rejected-frames row with its reason and no frame row. */
    gateFrameQuality: (input: IngestStepInput): Promise<{ rejected: number; passed: number }> =>
      step(async () => {
        await reportJob(deps, input.jobId, { stage: 'gating' });
        const candidates = await db.ingestCandidate.findMany({
          where: { sessionId: input.sessionId },
          orderBy: { seq: 'asc' },
        });
        const rejected = candidates
          .map((c) => ({
            c,
            reasons: judgeQuality(
              { ...(c.metrics as unknown as QualityMetrics), width: c.width, height: c.height },
              config.ingest,
            ),
          }))
          .filter((r) => r.reasons.length);
        await db.$transaction([
          db.rejectedFrame.createMany({
            data: rejected.map(({ c, reasons }) => ({
              sessionId: c.sessionId,
              seq: c.seq,
              timestampMs: c.timestampMs,
              reason: reasons[0]!,
              reasons,
              metrics: c.metrics as Prisma.InputJsonValue,
            })),
            skipDuplicates: true,
          }),
          db.ingestCandidate.updateMany({
            where: { sessionId: input.sessionId, seq: { in: rejected.map((r) => r.c.seq) } },
            data: { verdict: 'rejected' },
          }),
          db.session.update({ where: { id: input.sessionId }, data: { rejectedCount: rejected.length } }),
        ]);
        await removeKeys(
          storage,
          framesBucket,
          rejected.map((r) => r.c.objectKey),
        );
        await reportJob(deps, input.jobId, { framesRejected: rejected.length });
        return { rejected: rejected.length, passed: candidates.length - rejected.length };
      }),

    /** Drops frames whose perceptual hash is within ingest.dedupMaxDistance bits of the last kept frame. */
    dropNearDuplicates: (input: IngestStepInput): Promise<{ duplicates: number; kept: number }> =>
      step(async () => {
        await reportJob(deps, input.jobId, { stage: 'deduplicating' });
        const candidates = await db.ingestCandidate.findMany({
          where: { sessionId: input.sessionId, OR: [{ verdict: null }, { verdict: { not: 'rejected' } }] },
          orderBy: { seq: 'asc' },
        });
        const duplicate = markNearDuplicates(
          candidates.map((c) => c.phash),
          config.ingest.dedupMaxDistance,
        );
        const dupSeqs = candidates.filter((_, i) => duplicate[i]).map((c) => c.seq);
        const keptSeqs = candidates.filter((_, i) => !duplicate[i]).map((c) => c.seq);
        await db.$transaction([
          db.ingestCandidate.updateMany({
            where: { sessionId: input.sessionId, seq: { in: dupSeqs } },
            data: { verdict: 'duplicate' },
          }),
          db.ingestCandidate.updateMany({
            where: { sessionId: input.sessionId, seq: { in: keptSeqs } },
            data: { verdict: 'accepted' },
          }),
          db.session.update({ where: { id: input.sessionId }, data: { duplicateCount: dupSeqs.length } }),
        ]);
        await removeKeys(
          storage,
          framesBucket,
          candidates.filter((_, i) => duplicate[i]).map((c) => c.objectKey),
        );
        await reportJob(deps, input.jobId, {
          framesDuplicate: dupSeqs.length,
          framesAccepted: keptSeqs.length,
        });
        return { duplicates: dupSeqs.length, kept: keptSeqs.length };
      }),

    /** Makes the accepted candidates the session's frames, indexed 0..n-1 in drive order. */
    registerFrames: (input: IngestStepInput): Promise<{ frames: number }> =>
      step(async () => {
        await reportJob(deps, input.jobId, { stage: 'registering' });
        const accepted = await db.ingestCandidate.findMany({
          where: { sessionId: input.sessionId, verdict: 'accepted' },
          orderBy: { seq: 'asc' },
        });
        if (!accepted.length) {
          const session = await db.session.findUniqueOrThrow({ where: { id: input.sessionId } });
          throw new DriveRefusedError(
            `no frame passed the quality gate and the duplicate check (${session.rejectedCount} rejected, ${session.duplicateCount} near-duplicates)`,
          );
        }
        const speeds = await egoSpeedsAt(
          db,
          input.sessionId,
          accepted.map((c) => c.timestampMs),
        );
        await db.$transaction([
          db.frame.createMany({
            data: accepted.map((c, index) => ({
              sessionId: c.sessionId,
              index,
              timestampMs: c.timestampMs,
              width: c.width,
              height: c.height,
              uri: c.objectKey,
              phash: c.phash,
              context: frameContext(c.seq, c.metrics as unknown as QualityMetrics, speeds[index] ?? null),
            })),
            skipDuplicates: true,
          }),
          db.session.update({ where: { id: input.sessionId }, data: { frameCount: accepted.length } }),
        ]);
        return { frames: accepted.length };
      }),

    /**
     * The PII pass: faces and licence plates on every frame, a redacted copy in the redacted
     * bucket and exactly one PiiAudit per frame. A retry continues with the frames lacking one.
     */
    redactPii: (input: IngestStepInput): Promise<{ redacted: number; faces: number; plates: number }> =>
      step(async () => {
        const ctx = Context.current();
        await reportJob(deps, input.jobId, { stage: 'redacting' });
        const todo = await db.frame.findMany({
          where: { sessionId: input.sessionId, piiAudit: null },
          orderBy: { index: 'asc' },
        });
        const total = await db.frame.count({ where: { sessionId: input.sessionId } });
        let done = total - todo.length;
        let faces = 0;
        let plates = 0;
        const progress = throttled(PROGRESS_MS, () => reportJob(deps, input.jobId, { framesRedacted: done }));
        // Frames in flight: one's read, decode, redacted copy and writes overlap the others' models.
        await runInFlight(todo, PII_IN_FLIGHT, async (frame) => {
          const original = await readObject(storage, { bucket: framesBucket, key: frame.uri });
          const found = await detectPii(config, original);
          const redacted = await redactFrame(found.rgb, found.width, found.height, found.regions);
          await storage.client.putObject(redactedBucket, frame.uri, redacted, redacted.length, {
            'Content-Type': 'image/jpeg',
          });
          const audit = {
            nFaces: found.faces.length,
            nPlates: found.plates.length,
            regions: found.regions as unknown as Prisma.InputJsonValue,
            examined: true,
            modelVersions: found.versions,
          };
          await db.$transaction([
            db.piiAudit.upsert({
              where: { frameId: frame.id },
              create: { frameId: frame.id, ...audit },
              update: audit,
            }),
            db.frame.update({ where: { id: frame.id }, data: { redactedUri: frame.uri } }),
          ]);
          faces += found.faces.length;
          plates += found.plates.length;
          done++;
          ctx.heartbeat({ done });
          await progress.tick();
        });
        await progress.flush();
        return { redacted: done, faces, plates };
      }),

    /** Marks the session ready and the job completed; the staging rows and any source copy go. */
    completeIngest: (
      input: IngestStepInput & { health: { passed: boolean; score: number } },
    ): Promise<void> =>
      step(async () => {
        await removeSourceCopy(storage, input.sessionId);
        const job = await db.ingestJob.findUniqueOrThrow({ where: { id: input.jobId } });
        await db.$transaction([
          db.ingestCandidate.deleteMany({ where: { sessionId: input.sessionId } }),
          db.session.update({ where: { id: input.sessionId }, data: { state: 'ready', error: null } }),
        ]);
        await recordAudit(db, {
          actorId: job.createdBy,
          action: 'ingest.completed',
          subjectType: 'session',
          subjectId: input.sessionId,
          detail: { job_id: job.id, workflow_id: job.workflowId, health: input.health },
        });
        await emitJobEvent(
          db,
          { kind: 'ingest', id: job.id, startedBy: job.createdBy },
          { kind: 'job.completed', summary: { session_id: input.sessionId, health: input.health } },
        );
        await reportJob(
          deps,
          input.jobId,
          { state: 'completed', stage: 'completed', finishedAt: new Date() },
          'ingest.completed',
        );
      }),

    /**
     * Undoes a failed ingest so nothing half-written stays: frames, ego streams, audits, rejected rows,
     * candidates, every stored object of the session and its source copy go; the session keeps the error and
     * releases its content hash (the same drive may be tried again).
     */
    failIngest: (input: IngestStepInput & { error: string }): Promise<void> =>
      step(async () => {
        for (const bucket of [framesBucket, redactedBucket])
          await removeKeys(storage, bucket, await listKeys(storage, bucket, `${input.sessionId}/`));
        await removeSourceCopy(storage, input.sessionId);
        const job = await db.ingestJob.findUniqueOrThrow({ where: { id: input.jobId } });
        await db.$transaction([
          db.frame.deleteMany({ where: { sessionId: input.sessionId } }),
          db.egoStream.deleteMany({ where: { sessionId: input.sessionId } }),
          db.rejectedFrame.deleteMany({ where: { sessionId: input.sessionId } }),
          db.ingestCandidate.deleteMany({ where: { sessionId: input.sessionId } }),
          db.session.update({
            where: { id: input.sessionId },
            data: {
              state: 'failed',
              error: input.error,
              contentHash: null,
              frameCount: 0,
              duplicateCount: 0,
              rejectedCount: 0,
            },
          }),
        ]);
        await recordAudit(db, {
          actorId: job.createdBy,
          action: 'ingest.failed',
          subjectType: 'session',
          subjectId: input.sessionId,
          detail: { job_id: job.id, workflow_id: job.workflowId, error: input.error },
        });
        await emitJobEvent(
          db,
          { kind: 'ingest', id: job.id, startedBy: job.createdBy },
          { kind: 'job.failed', reason: input.error },
        );
        await reportJob(
          deps,
          input.jobId,
          { state: 'failed', stage: 'failed', error: input.error, finishedAt: new Date() },
          'ingest.failed',
        );
      }),
  };
}
