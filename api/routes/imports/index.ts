import { jobOut } from '../../../activities/ingest/progress';
import { idCursorArgs, idPage } from '../../../core/pagination';
import { probeDriveMedia } from '../../../activities/media/drive';
import { judgeSourceObject } from '../../../activities/sources';
import { sourceVerdictProblem } from '../../../core/sources/ingest';
import { DriveRefusedError } from '../../../core/media/errors';
import { FRAME_FILE_EXTENSIONS } from '../../../core/media/frame-files';
import { SUPPORTED_ROS_ENCODINGS } from '../../../core/media/ros-image';
import { ConflictError, DomainError, NotFoundError, RefusedError } from '../../../core/errors';
import type { Prisma } from '../../../generated/prisma/client';
import type { AppDeps } from '../../deps';
import { RouteGroup, uuidParams } from '../../http/route-group';
import { resolveDrive } from './drive-request';
import { startIngest } from './start-ingest';
import { ImportStartIn, ImportsQuery, IngestIn, ProgressQuery } from './validators';

/** How long dry-run waits for its probe (docs/ingest.md). */
const DRY_RUN_PROBE_MS = 10_000;
/** Finished jobs the progress board still shows. */
const RECENT = 10;

/**
 * The `imports` group, and POST /api/ingest beside it (the spec states that route but lists it in
 * no group; docs/api.md). A drive is ingested by IngestWorkflow; its job row is what these routes
 * show (docs/ingest.md).
 */
export function createImportsRoutes(deps: AppDeps): RouteGroup {
  const { db } = deps;
  const jobWithSession = async (jobId: string) => {
    const job = await db.ingestJob.findUnique({ where: { id: jobId }, include: { session: true } });
    if (!job) throw new NotFoundError(`no import job ${jobId}`);
    const s = job.session;
    return {
      ...jobOut(job),
      session: {
        id: s.id,
        name: s.name,
        state: s.state,
        error: s.error,
        quarantined: s.quarantined,
        frame_count: s.frameCount,
        duplicate_count: s.duplicateCount,
        rejected_count: s.rejectedCount,
        duration_ms: s.durationMs,
        source_meta: s.sourceMeta,
      },
      temporal_ui: `${deps.config.temporal.uiUrl}/namespaces/${deps.config.temporal.namespace}/workflows/${job.workflowId}`,
    };
  };

  return new RouteGroup('imports')
    .post(
      '/api/ingest',
      {
        summary:
          'Ingest a drive (video, ROS 1 bag or MCAP, zip or folder of frames): starts IngestWorkflow ingest-<session_id>; 202 with a Location to watch',
        access: 'reviewer',
        body: { name: 'IngestIn', schema: IngestIn },
        successStatus: 202,
        statuses: {
          403: 'a server path needs the admin role',
          404: 'no such source, or no such key in its bucket',
          409: 'the same uploaded drive (SHA-256) already has a session (the body names it); or the upload is still being hashed',
          503: "Temporal did not take the workflow, or a source's bucket did not answer; nothing was kept",
        },
      },
      async ({ body, principal, req, res }) => {
        const started = await startIngest(deps, body, principal, String(req.id));
        res.status(202).location(started.status_url);
        return started;
      },
    )
    .get(
      '/api/imports',
      { summary: 'Import jobs, newest first (cursor pagination)', access: 'annotator', query: ImportsQuery },
      async ({ query }) => {
        const where: Prisma.IngestJobWhereInput = {
          ...(query.state ? { state: query.state } : {}),
          ...(query.kind ? { kind: query.kind } : {}),
        };
        const rows = await db.ingestJob.findMany({
          where,
          orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
          ...idCursorArgs(query),
        });
        const { page, next_cursor } = idPage(rows, query.limit);
        return { items: page.map(jobOut), next_cursor };
      },
    )
    .post(
      '/api/imports/dry-run',
      {
        summary: `Check a drive without ingesting it: what it is (a probe bounded to ${DRY_RUN_PROBE_MS / 1000} s), what ingest would take from it, whether an upload was ingested before`,
        access: 'reviewer',
        body: { name: 'IngestIn', schema: IngestIn },
        statuses: {
          404: 'no such source, or no such key in its bucket',
          409: 'the upload is still being hashed',
        },
      },
      async ({ body, principal }) => {
        // Cheap by design: a server path is checked (roots, exists, file or folder), never hashed here.
        const resolved = await resolveDrive(deps, body, principal);
        const existing = resolved.contentHash
          ? await db.session.findUnique({
              where: { contentHash: resolved.contentHash },
              select: { id: true, state: true },
            })
          : null;
        const answer = {
          duplicate_of: existing ? { session_id: existing.id, state: existing.state } : null,
          sha256: resolved.contentHash,
          size_bytes: resolved.sizeBytes,
          target_fps: deps.config.ingest.targetFps,
        };
        if (resolved.sourceObject) {
          // Judged by its first bytes as the preview judges it; the ingest probes its copy.
          const { source, key } = resolved.sourceObject;
          const verdict = await judgeSourceObject(deps, source, key, resolved.sizeBytes ?? 0);
          const problem = sourceVerdictProblem(body.kind, verdict);
          return { ok: problem === null, problem, probe_timed_out: false, ...answer, probe: null };
        }
        let probe = null;
        let problem: string | null = null;
        let timedOut = false;
        const probing = probeDriveMedia(deps, resolved.drive);
        // The probe reads headers and indexes only; should one still outlast the bound, it ends on
        // its own and its outcome is dropped.
        probing.catch(() => undefined);
        let timer: NodeJS.Timeout | undefined;
        const bound = new Promise<'timeout'>((resolve) => {
          timer = setTimeout(() => resolve('timeout'), DRY_RUN_PROBE_MS);
        });
        try {
          const outcome = await Promise.race([probing, bound]);
          if (outcome === 'timeout') {
            timedOut = true;
            problem = `the probe did not finish within ${DRY_RUN_PROBE_MS / 1000} s; ingest probes without this bound`;
          } else probe = outcome;
        } catch (err) {
          if (!(err instanceof DriveRefusedError)) throw err;
          problem = err.message;
        } finally {
          clearTimeout(timer);
        }
        return { ok: problem === null && !existing, problem, probe_timed_out: timedOut, ...answer, probe };
      },
    )
    .get(
      '/api/imports/formats',
      { summary: 'Drive kinds and formats ingest reads, and the ingest settings', access: 'annotator' },
      () => ({
        target_fps: deps.config.ingest.targetFps,
        kinds: [
          {
            kind: 'video',
            formats:
              'any container and codec the configured ffmpeg decodes (mp4, mov, mkv, avi, ...); the first video stream',
          },
          {
            kind: 'bag',
            formats: [
              'ROS 1 .bag (uncompressed, bz2 or lz4 chunks)',
              'MCAP (uncompressed, zstd or lz4 chunks; ros1 message encoding)',
            ],
            message_types: ['sensor_msgs/Image', 'sensor_msgs/CompressedImage'],
            image_encodings: SUPPORTED_ROS_ENCODINGS,
          },
          {
            kind: 'frames',
            formats: ['zip', 'server folder (admin, inside APP_INGEST__ALLOWED_ROOTS)'],
            extensions: FRAME_FILE_EXTENSIONS,
          },
        ],
        sources: ['upload_id (upload routes)', 'path (admin)'],
        server_folders_allowed: deps.config.ingest.allowedRoots.length > 0,
        quality_gate: {
          blur_min_laplacian_variance: deps.config.ingest.blurMinLaplacianVariance,
          exposure_min_mean: deps.config.ingest.exposureMinMean,
          exposure_max_mean: deps.config.ingest.exposureMaxMean,
          exposure_max_clipped_fraction: deps.config.ingest.exposureMaxClippedFraction,
          min_width: deps.config.ingest.minWidth,
          min_height: deps.config.ingest.minHeight,
        },
        dedup_max_distance: deps.config.ingest.dedupMaxDistance,
      }),
    )
    .post(
      '/api/imports/start',
      {
        summary:
          'Ingest several drives; each starts its own session and IngestWorkflow. 202 with one result per drive',
        access: 'reviewer',
        body: { name: 'ImportStartIn', schema: ImportStartIn },
        successStatus: 202,
        statuses: {
          409: 'every drive is one already ingested (results name each)',
          422: 'no drive could be started (results say why for each)',
        },
      },
      async ({ body, principal, req, res }) => {
        const results = [];
        for (const [index, drive] of body.drives.entries()) {
          try {
            results.push({
              index,
              status: 'started',
              ...(await startIngest(deps, drive, principal, String(req.id))),
            });
          } catch (err) {
            // One refused drive does not stop the others; each result says what happened to it.
            if (!(err instanceof DomainError)) throw err;
            const status = err instanceof ConflictError ? 'duplicate' : 'refused';
            results.push({ index, status, detail: err.message, ...(err.details ?? {}) });
          }
        }
        // 202 only when something started: a batch whose every drive was refused did nothing.
        if (!results.some((r) => r.status === 'started')) {
          if (results.every((r) => r.status === 'duplicate'))
            throw new ConflictError('every drive of the batch is already ingested', { results });
          throw new RefusedError('no drive of the batch could be started', { results });
        }
        res.location('/api/ingest/progress');
        return { results };
      },
    )
    .get(
      '/api/imports/{job_id}',
      {
        summary: 'One import job: stage, counters, error, its session and the Temporal UI link',
        access: 'annotator',
        params: uuidParams('job_id'),
        statuses: { 404: 'no such job' },
      },
      ({ params }) => jobWithSession(params.job_id),
    )
    .get(
      '/api/ingest/progress',
      {
        summary: "Ingests in progress and the latest finished ones; or one session's ingest",
        access: 'annotator',
        query: ProgressQuery,
        statuses: { 404: 'the session has no ingest' },
      },
      async ({ query }) => {
        if (query.session_id) {
          const job = await db.ingestJob.findUnique({ where: { sessionId: query.session_id } });
          if (!job) throw new NotFoundError(`session ${query.session_id} has no ingest`);
          return { active: job.finishedAt ? [] : [jobOut(job)], recent: job.finishedAt ? [jobOut(job)] : [] };
        }
        const [active, recent] = await Promise.all([
          db.ingestJob.findMany({
            where: { state: { in: ['queued', 'running'] } },
            orderBy: { createdAt: 'asc' },
          }),
          db.ingestJob.findMany({
            where: { state: { in: ['completed', 'failed'] } },
            orderBy: { finishedAt: 'desc' },
            take: RECENT,
          }),
        ]);
        return { active: active.map(jobOut), recent: recent.map(jobOut) };
      },
    );
}
