import { ConflictError, InputError, NotFoundError, RefusedError } from '../../core/errors';
import { iou, type Box } from '../../core/geometry';
import {
  GOLD_MAX_OBJECTS,
  goldContentHash,
  canonicalGoldItem,
  goldOrigin,
  unverifiedReason,
  type GoldItemContent,
} from '../../core/quality/gold';
import { measureAgainstGold, type MeasureOptions } from '../../core/quality/gold-measure';
import type { GoldItem, GoldSet, Prisma } from '../../generated/prisma/client';
import type { MaskStore } from '../annotations/masks';
import type { Actor } from '../annotations/objects';
import { recordAudit } from '../audit';
import type { Db } from '../db';
import { measurableRun } from './inference-runs';
import { recordRunGoldOperation } from './operations';

/**
 * Gold sets in the store (docs/quality.md): sealing copies the accepted objects of human-verified
 * frames into gold items, with the content hash, in one transaction.
 */

export interface SealInput {
  name: string;
  note?: string | null | undefined;
  object_ids?: string[] | undefined;
  frame_ids?: string[] | undefined;
  session_id?: string | undefined;
}

export const goldSetOut = (g: GoldSet, extra: Record<string, unknown> = {}) => ({
  id: g.id,
  name: g.name,
  note: g.note,
  sealed: g.sealedAt !== null,
  sealed_at: g.sealedAt?.toISOString() ?? null,
  content_hash: g.contentHash,
  objects: g.objectIds.length,
  frames: g.frameIds.length,
  session_ids: g.sessionIds,
  created_at: g.createdAt.toISOString(),
  ...extra,
});

type FrameObject = { id: string; frameId: string; source: string; state: string };

const byFrameOf = (objects: readonly FrameObject[]) => {
  const out = new Map<string, FrameObject[]>();
  for (const o of objects) {
    const list = out.get(o.frameId);
    if (list) list.push(o);
    else out.set(o.frameId, [o]);
  }
  return out;
};

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

/** Which frames a seal covers, refusing frames that are not human-verified (422 naming them). */
async function goldFrames(db: Db, input: SealInput): Promise<{ frameIds: string[]; objects: FrameObject[] }> {
  const select = { id: true, frameId: true, source: true, state: true } as const;
  const named = [input.object_ids, input.frame_ids, input.session_id].filter((v) => v !== undefined).length;
  if (named !== 1)
    throw new InputError('name exactly one of object_ids, frame_ids or session_id', [
      { field: 'body', message: 'exactly one of object_ids, frame_ids, session_id' },
    ]);
  let frameIds: string[];
  if (input.session_id) {
    const session = await db.session.findUnique({ where: { id: input.session_id }, select: { id: true } });
    if (!session) throw new NotFoundError(`no session ${input.session_id}`);
    const objects = await db.annoObject.findMany({ where: { frame: { sessionId: session.id } }, select });
    // A session's gold is its verified frames; frames still under review are left out, not refused.
    const verified = new Set(
      [...byFrameOf(objects)].filter(([, objs]) => unverifiedReason(objs) === null).map(([id]) => id),
    );
    if (!verified.size) throw new RefusedError(`session ${session.id} has no human-verified frame`);
    return { frameIds: [...verified], objects: objects.filter((o) => verified.has(o.frameId)) };
  }
  if (input.object_ids) {
    const listed = await db.annoObject.findMany({ where: { id: { in: input.object_ids } }, select });
    const found = new Set(listed.map((o) => o.id));
    const missing = input.object_ids.filter((id) => !found.has(id));
    if (missing.length)
      throw new NotFoundError(`${plural(missing.length, 'object')} do not exist`, { missing });
    frameIds = [...new Set(listed.map((o) => o.frameId))];
  } else {
    frameIds = [...new Set(input.frame_ids!)];
    const found = new Set(
      (await db.frame.findMany({ where: { id: { in: frameIds } }, select: { id: true } })).map((f) => f.id),
    );
    const missing = frameIds.filter((id) => !found.has(id));
    if (missing.length)
      throw new NotFoundError(`${plural(missing.length, 'frame')} do not exist`, { missing });
  }
  const objects = await db.annoObject.findMany({ where: { frameId: { in: frameIds } }, select });
  const byFrame = byFrameOf(objects);
  const unverified = frameIds
    .map((id) => ({ frame_id: id, reason: unverifiedReason(byFrame.get(id) ?? []) }))
    .filter((f) => f.reason !== null);
  if (unverified.length)
    throw new RefusedError(
      `${plural(unverified.length, 'frame')} ${unverified.length === 1 ? 'is' : 'are'} not human-verified: a gold set takes only frames whose every object a human decided`,
      { unverified: unverified.slice(0, 100) },
    );
  if (input.object_ids) {
    // A gold frame is whole: an accepted object left out would count its detections as false positives.
    const listed = new Set(input.object_ids);
    const notAccepted = objects.filter((o) => listed.has(o.id) && o.state !== 'accepted').map((o) => o.id);
    if (notAccepted.length)
      throw new RefusedError(
        `${plural(notAccepted.length, 'object')} ${notAccepted.length === 1 ? 'is' : 'are'} not accepted`,
        {
          not_accepted: notAccepted,
        },
      );
    const leftOut = objects.filter((o) => o.state === 'accepted' && !listed.has(o.id)).map((o) => o.id);
    if (leftOut.length)
      throw new RefusedError(
        `the frames of the listed objects hold ${plural(leftOut.length, 'more accepted object')}: a gold frame is sealed whole (list them, or seal by frame_ids)`,
        { left_out: leftOut.slice(0, 100) },
      );
  }
  return { frameIds, objects };
}

/** Seals a gold set: the accepted objects of the chosen human-verified frames, frozen with their content hash. */
export async function sealGold(db: Db, masks: MaskStore, input: SealInput, actor: Actor): Promise<GoldSet> {
  const { frameIds, objects } = await goldFrames(db, input);
  const acceptedIds = objects.filter((o) => o.state === 'accepted').map((o) => o.id);
  if (acceptedIds.length > GOLD_MAX_OBJECTS)
    throw new RefusedError(
      `a gold set holds at most ${GOLD_MAX_OBJECTS} objects; this one would hold ${acceptedIds.length}`,
    );
  const [accepted, firstReviews] = await Promise.all([
    db.annoObject.findMany({
      where: { id: { in: acceptedIds } },
      include: { frame: { select: { sessionId: true } } },
    }),
    db.review.findMany({
      where: { objectId: { in: acceptedIds } },
      orderBy: { createdAt: 'asc' },
      distinct: ['objectId'],
      select: { objectId: true, before: true },
    }),
  ]);
  const firstBy = new Map(firstReviews.map((r) => [r.objectId, r]));
  const items = await Promise.all(
    accepted.map(async (o) => {
      const { origin, proposed } = goldOrigin(
        (firstBy.get(o.id) as { before: Record<string, unknown> } | undefined) ?? null,
      );
      const polygons = o.maskUri ? (await masks.read(o.maskUri)).polygons : null;
      return {
        content: canonicalGoldItem({
          object_id: o.id,
          frame_id: o.frameId,
          class_id: o.classId,
          bbox: o.bbox,
          rot_deg: o.rotDeg,
          polygons,
          polyline: o.polyline,
        }),
        sessionId: o.frame.sessionId,
        origin,
        proposed,
      };
    }),
  );
  const contentHash = goldContentHash(items.map((i) => i.content));
  const sessionIds = [...new Set(items.map((i) => i.sessionId))].sort();
  return db.$transaction(async (tx) => {
    const gold = await tx.goldSet.create({
      data: {
        name: input.name,
        note: input.note ?? null,
        objectIds: items.map((i) => i.content.object_id),
        frameIds,
        sessionIds,
        contentHash,
        sealedAt: new Date(),
        createdBy: actor.userId,
      },
    });
    await tx.goldItem.createMany({
      data: items.map(({ content: c, sessionId, origin, proposed }) => ({
        goldId: gold.id,
        objectId: c.object_id,
        frameId: c.frame_id,
        sessionId,
        classId: c.class_id,
        bbox: [...c.bbox],
        rotDeg: c.rot_deg,
        polygons: (c.polygons as Prisma.InputJsonValue) ?? undefined,
        polyline: (c.polyline as Prisma.InputJsonValue) ?? undefined,
        origin,
        proposed: proposed ?? undefined,
      })),
    });
    await recordAudit(tx, {
      actorId: actor.userId,
      action: 'gold.seal',
      subjectType: 'gold_set',
      subjectId: gold.id,
      detail: { objects: items.length, frames: frameIds.length, content_hash: contentHash },
      requestId: actor.requestId,
    });
    return gold;
  });
}

export async function findGold(db: Db, id: string): Promise<GoldSet> {
  const gold = await db.goldSet.findUnique({ where: { id } });
  if (!gold) throw new NotFoundError(`no gold set ${id}`);
  if (!gold.sealedAt || !gold.contentHash) throw new ConflictError(`gold set ${id} is not sealed`);
  return gold;
}

const itemContent = (i: GoldItem): GoldItemContent => ({
  object_id: i.objectId,
  frame_id: i.frameId,
  class_id: i.classId,
  bbox: i.bbox,
  rot_deg: i.rotDeg,
  polygons: (i.polygons as number[][] | null) ?? null,
  polyline: i.polyline ?? null,
});

/** Whether the frozen items still hash to the sealed content hash. */
export async function verifyGold(db: Db, gold: GoldSet): Promise<boolean> {
  const items = await db.goldItem.findMany({ where: { goldId: gold.id } });
  return goldContentHash(items.map(itemContent)) === gold.contentHash;
}

export async function listGoldSets(db: Db, opts: { verify: boolean }) {
  const sets = await db.goldSet.findMany({ orderBy: [{ createdAt: 'desc' }, { id: 'desc' }] });
  return Promise.all(
    sets.map(async (g) =>
      goldSetOut(g, opts.verify && g.contentHash ? { intact: await verifyGold(db, g) } : {}),
    ),
  );
}

/**
 * A run's predictions (or, with no run, nothing else: the caller chose) against the frozen gold
 * items, recorded as an eval operation. A reconstructed run is refused by name.
 */
export async function measureGold(
  db: Db,
  goldId: string,
  input: { run_id: string } & MeasureOptions,
  actor: Actor,
) {
  const gold = await findGold(db, goldId);
  const run = await measurableRun(db, input.run_id);
  const [items, predictions] = await Promise.all([
    db.goldItem.findMany({
      where: { goldId: gold.id },
      select: { frameId: true, classId: true, bbox: true },
    }),
    db.prediction.findMany({
      where: { runId: run.id, frameId: { in: gold.frameIds } },
      select: { frameId: true, classId: true, conf: true, bbox: true },
    }),
  ]);
  const { iou_thr, alpha, n_boot, seed } = input;
  const result = measureAgainstGold(
    items.map((i) => ({ frame_id: i.frameId, class_id: i.classId, bbox: i.bbox as Box })),
    predictions.map((p) => ({ frame_id: p.frameId, class_id: p.classId, conf: p.conf, bbox: p.bbox as Box })),
    gold.frameIds,
    { iou_thr, alpha, n_boot, seed },
  );
  return recordRunGoldOperation(
    db,
    'gold_measure',
    { gold, run },
    { iou_thr, alpha, n_boot, seed },
    result,
    actor,
  );
}

/**
 * The spec's gold provenance split: detections a human confirmed (the machine proposed them)
 * against boxes drawn from scratch, per class, and for the confirmed ones how much the human changed
 * (class moved; box moved, as the IoU between the proposal and the gold box).
 */
export async function goldProvenance(db: Db, goldId: string) {
  const gold = await findGold(db, goldId);
  const items = await db.goldItem.findMany({
    where: { goldId: gold.id },
    include: { gold: false },
    orderBy: { objectId: 'asc' },
  });
  const names = new Map(
    (await db.ontologyClass.findMany({ select: { id: true, name: true } })).map((c) => [c.id, c.name]),
  );
  const part = (origin: 'confirmed' | 'drawn') => {
    const mine = items.filter((i) => i.origin === origin);
    const byClass: Record<string, number> = {};
    for (const i of mine) {
      const name = names.get(i.classId) ?? String(i.classId);
      byClass[name] = (byClass[name] ?? 0) + 1;
    }
    return {
      mine,
      summary: {
        objects: mine.length,
        share: items.length ? mine.length / items.length : null,
        by_class: byClass,
      },
    };
  };
  const confirmed = part('confirmed');
  const drawn = part('drawn');
  const proposals = confirmed.mine.map((i) => ({
    item: i,
    proposed: i.proposed as { class_id: number | null; conf: number | null; bbox: number[] | null } | null,
  }));
  const relabelled = proposals.filter(
    (p) => p.proposed?.class_id != null && p.proposed.class_id !== p.item.classId,
  );
  const ious = proposals
    .filter((p) => p.proposed?.bbox)
    .map((p) => iou(p.proposed!.bbox as Box, p.item.bbox as Box));
  return {
    gold_id: gold.id,
    objects: items.length,
    confirmed: {
      ...confirmed.summary,
      relabelled: relabelled.length,
      box_iou_mean: ious.length ? ious.reduce((s, v) => s + v, 0) / ious.length : null,
      box_moved: ious.filter((v) => v < 0.95).length,
      object_ids: confirmed.mine.map((i) => i.objectId),
    },
    drawn: { ...drawn.summary, object_ids: drawn.mine.map((i) => i.objectId) },
  };
}
