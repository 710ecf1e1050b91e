import { randomUUID } from 'node:crypto';
import type { SlicePredicate } from '../../core/curation/slice';
import { InputError } from '../../core/errors';
import type { Prisma } from '../../generated/prisma/client';
import type { Actor } from '../annotations/objects';
import { recordAudit } from '../audit';
import type { Db } from '../db';
import { sliceQuery } from './slice-query';

export const EXTRACT_DEFAULT_FRAMES = 1000;
export const EXTRACT_MAX_FRAMES = 10_000;
/** Where extracted assets say they came from (`meta.source`). */
export const EXTRACT_SOURCE = 'curation.extract';

export interface ExtractRequest {
  projectId: string;
  predicate: SlicePredicate;
  sliceId: string | null;
  /** Frames (assets) at most. */
  limit: number;
}

interface FrameRow {
  id: string;
  session_id: string;
  index: number;
  width: number;
  height: number;
  redacted_uri: string;
}

interface ObjectRow {
  id: string;
  frame_id: string;
  class_name: string;
  bbox: number[];
  rot_deg: number;
  polyline: Prisma.JsonValue;
  keypoints: Prisma.JsonValue;
  mask_uri: string | null;
  attrs: Prisma.JsonValue;
  source: string;
  state: string;
  conf: number | null;
}

/** The project's label config (POST /api/projects/{id}/label-config) may narrow kinds and labels. */
async function checkLabelConfig(tx: Prisma.TransactionClient, projectId: string, labels: Set<string>) {
  const row = await tx.projectLabelConfig.findUnique({ where: { projectId } });
  const config = (row?.config ?? {}) as { kinds?: string[]; labels?: string[] };
  if (config.kinds?.length && !config.kinds.includes('bbox'))
    throw new InputError(`project ${projectId}'s label config does not allow the annotation kind bbox`, [
      { field: 'body.project_id', message: 'its label config does not allow bbox' },
    ]);
  const refused = config.labels?.length ? [...labels].filter((l) => !config.labels!.includes(l)) : [];
  if (refused.length)
    throw new InputError(
      `project ${projectId}'s label config does not allow the classes ${refused.sort().join(', ')}`,
      [{ field: 'body.project_id', message: 'its label config does not allow every class of the slice' }],
    );
}

/**
 * A slice's frames and objects as a new asset set: one `image` asset per frame (its redacted copy;
 * frames without one are left out and counted), one accepted `bbox` annotation per selected object
 * on it. Frames are taken in session and index order, at most `limit`. Everything is written in
 * one transaction, so a failure leaves nothing.
 */
export async function extractSlice(
  db: Db,
  request: ExtractRequest,
  actor: Pick<Actor, 'userId' | 'requestId'>,
) {
  const q = sliceQuery(request.predicate);
  const selected = `SELECT o.frame_id FROM ${q.from} WHERE ${q.where}`;
  return db.$transaction(
    async (tx) => {
      const [matched] = await q.rows<{ frames: bigint; unredacted: bigint }>(
        tx,
        () => `SELECT count(*) AS frames, count(*) FILTER (WHERE fr.redacted_uri IS NULL) AS unredacted
                 FROM frames fr WHERE fr.id IN (${selected})`,
      );
      const frames = await q.rows<FrameRow>(
        tx,
        (param) => `SELECT fr.id::text, fr.session_id::text, fr.index, fr.width, fr.height, fr.redacted_uri
                      FROM frames fr
                     WHERE fr.id IN (${selected}) AND fr.redacted_uri IS NOT NULL
                     ORDER BY fr.session_id, fr.index, fr.id
                     LIMIT ${param(request.limit)}::int`,
      );
      const objects = frames.length
        ? await q.rows<ObjectRow>(
            tx,
            (
              param,
            ) => `SELECT o.id::text, o.frame_id::text, c.name AS class_name, o.bbox, o.rot_deg, o.polyline,
                               o.keypoints, o.mask_uri, o.attrs, o.source, o.state, o.conf
                          FROM ${q.from}
                         WHERE ${q.where} AND o.frame_id = ANY(${param(frames.map((f) => f.id))}::uuid[])
                         ORDER BY o.frame_id, o.id`,
          )
        : [];
      await checkLabelConfig(tx, request.projectId, new Set(objects.map((o) => o.class_name)));

      const assetOf = new Map(frames.map((f) => [f.id, randomUUID()]));
      await tx.asset.createMany({
        data: frames.map((f) => ({
          id: assetOf.get(f.id)!,
          projectId: request.projectId,
          kind: 'image',
          uri: f.redacted_uri,
          meta: {
            frame_id: f.id,
            session_id: f.session_id,
            index: f.index,
            width: f.width,
            height: f.height,
            source: EXTRACT_SOURCE,
            slice_id: request.sliceId,
          },
          createdBy: actor.userId,
        })),
      });
      await tx.annotation.createMany({
        data: objects.map((o) => ({
          assetId: assetOf.get(o.frame_id)!,
          kind: 'bbox',
          label: o.class_name,
          conf: o.conf,
          fields: o.attrs ?? {},
          payload: {
            bbox: o.bbox,
            rot_deg: o.rot_deg,
            polyline: o.polyline,
            keypoints: o.keypoints,
            mask_uri: o.mask_uri,
          },
          provenance: { object_id: o.id, source: o.source, state: o.state, conf: o.conf },
          source: 'imported',
          state: 'accepted',
          createdBy: actor.userId,
        })),
      });
      const outcome = {
        project_id: request.projectId,
        slice_id: request.sliceId,
        assets: frames.length,
        annotations: objects.length,
        frames_matched: Number(matched!.frames),
        frames_skipped_unredacted: Number(matched!.unredacted),
        truncated: Number(matched!.frames) - Number(matched!.unredacted) > frames.length,
      };
      await recordAudit(tx, {
        actorId: actor.userId,
        action: 'curation.extracted',
        subjectType: 'project',
        subjectId: request.projectId,
        detail: { ...outcome, predicate: request.predicate as Prisma.InputJsonValue },
        requestId: actor.requestId,
      });
      return outcome;
    },
    // Up to 10 000 assets and their objects' annotations in one transaction.
    { timeout: 120_000, maxWait: 10_000 },
  );
}
