import type { Request } from 'express';
import { z } from 'zod';
import { ConflictError, NotAllowedError, NotFoundError } from '../../../core/errors';
import { recordPiiAccess } from '../../../activities/inbox/pii-access';
import { isMissingObject, objectLocation } from '../../../activities/inspector/frame-objects';
import type { AppDeps } from '../../deps';
import { roleAtLeast, type Role } from '../../auth/principal';
import { sendProblem } from '../../http/problem';
import { RouteGroup, uuidParams } from '../../http/route-group';
import { frameOut } from '../../http/session-reads';

/** Roles that may see a frame's original, unredacted pixels; everyone else gets the redacted copy only. */
export const ORIGINAL_IMAGE_ROLE: Role = 'reviewer';

/** Browsers may reuse an image this long before revalidating; `private` because the answer depends on the caller's role. */
const IMAGE_CACHE_CONTROL = 'private, max-age=300';

/**
 * RFC 9110 §13.2.2 precondition order at the origin: If-None-Match decides when present (weak
 * comparison), else If-Modified-Since. A request's `Cache-Control: no-cache` speaks to caches and
 * does not stop the origin from answering 304 (fetch() adds it to every conditional request).
 */
function notModified(req: Request, etag: string, lastModified: Date): boolean {
  const ifNoneMatch = req.get('if-none-match');
  if (ifNoneMatch !== undefined) {
    const opaque = (tag: string) => tag.trim().replace(/^W\//, '');
    return ifNoneMatch.trim() === '*' || ifNoneMatch.split(',').some((tag) => opaque(tag) === opaque(etag));
  }
  const since = Date.parse(req.get('if-modified-since') ?? '');
  return Number.isFinite(since) && Math.floor(lastModified.getTime() / 1000) * 1000 <= since;
}

const ImageQuery = z.strictObject({ variant: z.enum(['redacted', 'original']).default('redacted') });

/** The frame reads of the `objects` group (the rest of the group lives beside this file). */
export function createFrameRoutes(deps: AppDeps): RouteGroup {
  const { db, storage } = deps;
  const findFrame = async (params: Record<string, string>) => {
    const id = params.frame_id;
    const frame = await db.frame.findUnique({ where: { id }, include: { piiAudit: true } });
    if (!frame) throw new NotFoundError(`no frame ${id}`);
    return frame;
  };

  return new RouteGroup('objects')
    .get(
      '/api/frames/{frame_id}',
      {
        summary: 'One frame: its place in the session, size, context and PII audit',
        access: 'annotator',
        params: uuidParams('frame_id'),
        statuses: { 404: 'no such frame' },
      },
      async ({ params }) => {
        const frame = await findFrame(params);
        const audit = frame.piiAudit;
        return {
          ...frameOut(frame),
          pii: audit
            ? {
                examined: audit.examined,
                n_faces: audit.nFaces,
                n_plates: audit.nPlates,
                regions: audit.regions,
              }
            : null,
        };
      },
    )
    .get(
      '/api/frames/{frame_id}/image',
      {
        summary: `The frame's JPEG: the redacted copy by default; ?variant=original for ${ORIGINAL_IMAGE_ROLE} and admin only. ETag/Last-Modified revalidation and single byte ranges (206/416)`,
        access: 'annotator',
        params: uuidParams('frame_id'),
        query: ImageQuery,
        mediaToken: true,
        statuses: {
          403: 'the original asked for by a role that sees only redacted frames',
          404: 'no such frame, or its image is gone from storage',
          409: 'no redacted copy yet; a redacted frame is never substituted by the original',
          416: 'range not satisfiable',
        },
        respondsItself: { contentType: 'image/jpeg' },
      },
      async ({ req, res, params, query, principal }) => {
        const frame = await findFrame(params);
        if (query.variant === 'original' && !roleAtLeast(principal.role, ORIGINAL_IMAGE_ROLE)) {
          throw new NotAllowedError(
            `a ${principal.role} is served only redacted frames; originals need the ${ORIGINAL_IMAGE_ROLE} role`,
          );
        }
        const uri = query.variant === 'original' ? frame.uri : frame.redactedUri;
        if (!uri)
          throw new ConflictError(
            `frame ${frame.id} has no redacted copy yet (the PII pass has not finished); it is not served until it has one`,
          );
        const at = objectLocation(storage, uri, query.variant === 'original' ? 'frames' : 'redacted');

        let stat;
        try {
          stat = await storage.client.statObject(at.bucket, at.key);
        } catch (err) {
          if (isMissingObject(err))
            throw new NotFoundError(
              `frame ${frame.id}'s ${query.variant} image is missing from object storage`,
            );
          throw err;
        }
        // The variant is part of the tag: the two copies of one frame are different representations.
        const etag = `"${query.variant}-${stat.etag}"`;
        res.setHeader('ETag', etag);
        res.setHeader('Last-Modified', stat.lastModified.toUTCString());
        res.setHeader('Cache-Control', IMAGE_CACHE_CONTROL);
        res.setHeader('Vary', 'Authorization');
        res.setHeader('Accept-Ranges', 'bytes');
        // A 304 shows the original as surely as a 200 does; HEAD shows nothing.
        if (query.variant === 'original' && req.method === 'GET')
          await recordPiiAccess(
            db,
            { userId: principal.userId, ip: req.ip },
            'GET /api/frames/{frame_id}/image',
            [frame],
          );
        if (notModified(req, etag, stat.lastModified)) {
          res.status(304).end();
          return;
        }

        const size = stat.size;
        const ifRange = req.get('if-range');
        const rangeApplies =
          req.get('range') !== undefined &&
          (ifRange === undefined || ifRange === etag || ifRange === stat.lastModified.toUTCString());
        const ranges = rangeApplies ? req.range(size, { combine: true }) : undefined;
        if (ranges === -1) {
          res.setHeader('Content-Range', `bytes */${size}`);
          sendProblem(res, {
            status: 416,
            title: 'Range Not Satisfiable',
            type: 'urn:drivelab:problem:range-not-satisfiable',
            detail: `the image has ${size} bytes; no part of the requested range lies inside it`,
          });
          return;
        }
        res.type((stat.metaData?.['content-type'] as string | undefined) ?? 'image/jpeg');
        // A malformed Range (-2) or several disjoint ranges are answered with the whole image, as RFC 9110 allows.
        const single =
          Array.isArray(ranges) && ranges.type === 'bytes' && ranges.length === 1 ? ranges[0]! : undefined;
        const body = single
          ? await storage.client.getPartialObject(
              at.bucket,
              at.key,
              single.start,
              single.end - single.start + 1,
            )
          : await storage.client.getObject(at.bucket, at.key);
        if (single) {
          res.status(206);
          res.setHeader('Content-Range', `bytes ${single.start}-${single.end}/${size}`);
          res.setHeader('Content-Length', String(single.end - single.start + 1));
        } else {
          res.setHeader('Content-Length', String(size));
        }
        if (req.method === 'HEAD') {
          body.destroy();
          res.end();
          return;
        }
        body.on('error', () => res.destroy());
        body.pipe(res);
      },
    );
}
