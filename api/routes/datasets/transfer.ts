import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Request, Response } from 'express';
import type { Logger } from 'pino';
import { z } from 'zod';
import { recordAudit } from '../../../activities/audit';
import { commitFiles, commitIdSchema, findCommit } from '../../../activities/datasets/read';
import { MAX_SHARD_SAMPLES, writeCommitShards } from '../../../activities/datasets/shards';
import {
  commitArchive,
  commitArchiveBytes,
  commitKey,
  contentTypeOf,
  openStored,
} from '../../../activities/datasets/transfer';
import { assertConsentAllows } from '../../../activities/govern/consent';
import { isMissingObject } from '../../../activities/inspector/frame-objects';
import { checkedBytes, type ByteSource } from '../../../core/datasets/tar';
import { NotFoundError } from '../../../core/errors';
import type { AppDeps } from '../../deps';
import { sendProblem } from '../../http/problem';
import { RouteGroup } from '../../http/route-group';

/**
 * Moving dataset commits out of the platform, in the `datasets` group (docs/datasets-release.md):
 * the whole commit as a deterministic ustar archive with byte ranges, one file of it, and
 * WebDataset shards. Downloading a whole dataset and writing shards need `reviewer`, like
 * exporting; one file is an `annotator` read like the rest of the group's reads, whose previews
 * link their thumbnails to it.
 */

const BlobQuery = z.strictObject({
  commit_id: commitIdSchema,
  path: z.string().min(1).max(1024).meta({ description: "a path of the commit's file list" }),
});

const ShardsIn = z.strictObject({
  commit_id: commitIdSchema,
  split: z
    .string()
    .regex(/^[a-z0-9_]{1,32}$/, 'a split name: lower-case letters, digits and _')
    .default('train'),
  samples_per_shard: z.number().int().min(1).max(100_000).default(1000),
});

/** What a stored representation is recognised by: a resumed download's If-Range names one of them. */
interface Validators {
  etag: string;
  lastModified: string;
}

/** A single byte range [start, end) of a representation, as RFC 9110 §14 lets the origin answer. */
type RangeAnswer = { start: number; end: number } | 'unsatisfiable' | undefined;

/**
 * The range to answer: `If-Range` must name the current ETag or Last-Modified, else the whole
 * representation is sent. A malformed Range, or several ranges, also get the whole of it, as RFC
 * 9110 allows; a resumed download asks for one.
 */
function requestedRange(req: Request, size: number, validators: Validators): RangeAnswer {
  if (req.get('range') === undefined) return undefined;
  const ifRange = req.get('if-range');
  if (ifRange !== undefined && ifRange !== validators.etag && ifRange !== validators.lastModified)
    return undefined;
  const ranges = req.range(size, { combine: true });
  if (ranges === -1) return 'unsatisfiable';
  if (!Array.isArray(ranges) || ranges.type !== 'bytes' || ranges.length !== 1) return undefined;
  return { start: ranges[0]!.start, end: ranges[0]!.end + 1 };
}

/**
 * Writes the validators, length and status of a representation of `size` bytes, or the whole 416
 * answer when the range lies outside it. The bytes to send, or null when the answer is written.
 */
function answerRange(
  res: Response,
  size: number,
  validators: Validators,
  range: RangeAnswer,
): { start: number; end: number } | null {
  res.setHeader('ETag', validators.etag);
  res.setHeader('Last-Modified', validators.lastModified);
  res.setHeader('Accept-Ranges', 'bytes');
  if (range === 'unsatisfiable') {
    res.setHeader('Content-Range', `bytes */${size}`);
    sendProblem(res, {
      status: 416,
      title: 'Range Not Satisfiable',
      type: 'urn:drivelab:problem:range-not-satisfiable',
      detail: `the representation has ${size} bytes; no part of the requested range lies inside it`,
    });
    return null;
  }
  if (range) {
    res.status(206);
    res.setHeader('Content-Range', `bytes ${range.start}-${range.end - 1}/${size}`);
  }
  const bytes = range ?? { start: 0, end: size };
  res.setHeader('Content-Length', String(bytes.end - bytes.start));
  return bytes;
}

/**
 * Streams the body with back-pressure. Once the headers are out an error can only cut the
 * response short, which the client sees as a length mismatch rather than a wrong file; it is
 * logged, except a client that hung up.
 */
async function sendBody(
  req: Request,
  res: Response,
  chunks: AsyncIterable<Uint8Array>,
  logger: Logger,
  what: Record<string, unknown>,
): Promise<void> {
  if (req.method === 'HEAD') {
    res.end();
    return;
  }
  try {
    await pipeline(Readable.from(chunks, { objectMode: false }), res);
  } catch (err) {
    if ((err as { code?: string }).code !== 'ERR_STREAM_PREMATURE_CLOSE')
      logger.error({ err, req_id: req.id, ...what }, 'dataset transfer cut short');
  }
}

/** A file name for Content-Disposition: the dataset's name without anything a header could misread. */
const archiveName = (name: string, version: number): string =>
  `${name.replace(/[^A-Za-z0-9._-]+/g, '_')}-v${version}.tar`;

export function createDatasetTransferRoutes(deps: AppDeps): RouteGroup {
  const { db, storage, logger } = deps;
  return new RouteGroup('datasets')
    .get(
      '/api/datasets/blob',
      {
        summary:
          "One file of a commit, streamed with its content type; ETag is the file's SHA-256, single byte ranges are answered (206/416). Only paths of the commit's file list are served",
        access: 'annotator',
        query: BlobQuery,
        respondsItself: { contentType: 'application/octet-stream' },
        statuses: {
          404: 'no such commit, no such path in its file list, or the stored file is gone',
          416: 'range not satisfiable',
        },
      },
      async ({ req, res, query }) => {
        const commit = await findCommit(db, query.commit_id);
        // Looked up in the file list, never joined onto the prefix as given: no key outside the commit is read.
        const file = commitFiles(commit).find((f) => f.path === query.path);
        if (!file)
          throw new NotFoundError(`commit ${commit.commitId} has no file ${JSON.stringify(query.path)}`);
        const validators = { etag: `"${file.sha256}"`, lastModified: commit.createdAt.toUTCString() };
        const range = requestedRange(req, file.size, validators);
        const { start, end } = range && range !== 'unsatisfiable' ? range : { start: 0, end: file.size };
        // Opened before any header is written, so a file gone from storage is a 404, not a cut-off body.
        let source: ByteSource = Readable.from([]);
        if (range !== 'unsatisfiable' && end > start) {
          try {
            source = await openStored(storage, commitKey(commit, file.path), start, end - start);
          } catch (err) {
            if (isMissingObject(err))
              throw new NotFoundError(
                `file ${file.path} of commit ${commit.commitId} is missing from storage`,
              );
            throw err;
          }
        }
        res.type(contentTypeOf(file.path));
        if (!answerRange(res, file.size, validators, range)) return;
        // HEAD sends no body: release the store's connection instead of leaving it unread.
        if (req.method === 'HEAD') source.destroy?.();
        const whole = start === 0 && end === file.size;
        const bytes = checkedBytes(source, {
          what: file.path,
          length: end - start,
          sha256: whole ? file.sha256 : undefined,
        });
        await sendBody(req, res, bytes, logger, { commit_id: commit.commitId, path: file.path });
      },
    )
    .post(
      '/api/datasets/shards',
      {
        summary: `Writes WebDataset tar shards of a commit's split (<frame_id>.jpg + <frame_id>.json per sample) beside the commit and records them; at most ${MAX_SHARD_SAMPLES} samples a split, written within the request`,
        access: 'reviewer',
        body: { name: 'ShardsIn', schema: ShardsIn },
        successStatus: 201,
        statuses: {
          404: 'no such commit',
          409: 'shards of this split are being written by another request',
          422: `the commit has no images for the split, or more than ${MAX_SHARD_SAMPLES}, or it holds a session whose consent blocks export`,
        },
      },
      async ({ req, body, principal }) => {
        const commit = await findCommit(db, body.commit_id);
        await assertConsentAllows(db, deps.config.consent, 'export', commit.sessionIds);
        const shards = await writeCommitShards({ db, storage, logger }, commit, {
          split: body.split,
          samplesPerShard: body.samples_per_shard,
        });
        const samples = shards.reduce((n, s) => n + s.samples, 0);
        await recordAudit(db, {
          actorId: principal.userId,
          action: 'dataset.shards_written',
          subjectType: 'dataset_commit',
          subjectId: commit.commitId,
          detail: {
            split: body.split,
            samples_per_shard: body.samples_per_shard,
            shards: shards.length,
            samples,
          },
          requestId: req.id as string,
        });
        return {
          commit_id: commit.commitId,
          split: body.split,
          samples_per_shard: body.samples_per_shard,
          samples,
          shards,
        };
      },
    )
    .get(
      '/api/datasets/{commit_id}/download',
      {
        summary:
          'The whole commit as a POSIX ustar archive in file-list order, streamed; the same bytes every time (ETag is the commit id), so a single byte range (206/416, If-Range) resumes a download',
        access: 'reviewer',
        params: z.object({ commit_id: commitIdSchema }),
        respondsItself: { contentType: 'application/x-tar' },
        statuses: {
          404: 'no such commit',
          416: 'range not satisfiable',
          422: 'the commit holds a session whose consent blocks export',
        },
      },
      async ({ req, res, params }) => {
        const commit = await findCommit(db, params.commit_id);
        await assertConsentAllows(db, deps.config.consent, 'export', commit.sessionIds);
        const layout = commitArchive(commit);
        res.type('application/x-tar');
        res.setHeader(
          'Content-Disposition',
          `attachment; filename="${archiveName(commit.name, commit.version)}"`,
        );
        const validators = { etag: `"${commit.commitId}"`, lastModified: commit.createdAt.toUTCString() };
        const range = answerRange(res, layout.size, validators, requestedRange(req, layout.size, validators));
        if (!range) return;
        await sendBody(req, res, commitArchiveBytes(storage, commit, layout, range), logger, {
          commit_id: commit.commitId,
        });
      },
    );
}
