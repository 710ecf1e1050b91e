import { mapCocoDetections, COCO_CLASSES } from '../../core/detect/coco-ontology';
import { decodeYolox } from '../../core/detect/yolox';
import type { Box } from '../../core/geometry';
import { evaluateCoco, type CocoDetection, type CocoGroundTruth } from '../../core/metrics/coco';
import { RefusedError } from '../../core/errors';
import type { Db } from '../db';
import { decodeFrame, type FrameImage } from '../detect/frame-image';
import { loadGold } from '../evalgov/scope';
import { objectLocation, readObject } from '../inspector/frame-objects';
import type { ObjectStore } from '../storage/object-store';
import type { ModelRunner } from './runtime';

/**
 * The forge's accuracy check (docs/edgeforge.md): a model is run over a sealed gold set's frames,
 * its raw head decoded by the platform's YOLOX decoder and mapped to ontology classes as auto-label
 * does, and scored with the COCO evaluator: mAP@0.5 (COCOeval's AP50) over the gold set's classes.
 */

/** Most gold frames one accuracy check reads: every variant of an export runs over all of them. */
export const FORGE_MAX_GOLD_FRAMES = 100;
/** Detections kept for evaluation from this score up: COCO evaluation ranks them, a high cut would clip recall. */
export const EVAL_MIN_SCORE = 0.01;

export interface GoldFrames {
  goldId: string;
  frames: Array<{ id: string; image: FrameImage }>;
  groundTruth: CocoGroundTruth[];
  classIds: number[];
  /** Ontology class ids by name, for the detector's class names. */
  idOf: Map<string, number>;
}

const xywh = (b: Box): [number, number, number, number] => [b[0], b[1], b[2] - b[0], b[3] - b[1]];

/** A sealed gold set's boxes and its frames' pixels (refused beyond FORGE_MAX_GOLD_FRAMES or without boxes). */
export async function loadGoldFrames(
  deps: { db: Db; storage: ObjectStore },
  goldId: string,
): Promise<GoldFrames> {
  const { gold, boxes } = await loadGold(deps.db, goldId);
  if (gold.frameIds.length > FORGE_MAX_GOLD_FRAMES)
    throw new RefusedError(
      `gold set ${gold.id} has ${gold.frameIds.length} frames; the forge's accuracy check reads at most ${FORGE_MAX_GOLD_FRAMES}`,
    );
  if (!boxes.length) throw new RefusedError(`gold set ${gold.id} holds no box to check accuracy on`);
  const rows = await deps.db.frame.findMany({
    where: { id: { in: gold.frameIds } },
    select: { id: true, uri: true },
  });
  const uris = new Map(rows.map((r) => [r.id, r.uri]));
  const gone = gold.frameIds.filter((id) => !uris.has(id));
  if (gone.length)
    throw new RefusedError(
      `${gone.length} frame(s) of gold set ${gold.id} no longer exist, so their pixels cannot be read`,
      { gone: gone.slice(0, 20) },
    );
  const frames = await Promise.all(
    gold.frameIds.map(async (id) => ({
      id,
      image: await decodeFrame(
        await readObject(deps.storage, objectLocation(deps.storage, uris.get(id)!, 'frames')),
      ),
    })),
  );
  const imageOf = new Map(gold.frameIds.map((id, i) => [id, i + 1]));
  const groundTruth = boxes.map((b, i) => {
    const bbox = xywh(b.bbox);
    // COCOeval reads ground-truth id 0 as "no match": ids start at 1.
    return {
      id: i + 1,
      image_id: imageOf.get(b.frame_id)!,
      category_id: b.class_id,
      bbox,
      area: bbox[2] * bbox[3],
      iscrowd: 0,
    };
  });
  const classes = await deps.db.ontologyClass.findMany({
    where: { retiredAt: null },
    select: { id: true, name: true },
  });
  return {
    goldId: gold.id,
    frames,
    groundTruth,
    classIds: [...new Set(boxes.map((b) => b.class_id))].sort((a, b) => a - b),
    idOf: new Map(classes.map((c) => [c.name, c.id])),
  };
}

export interface GoldScore {
  map50: number;
  detections: number;
  per_class: Array<{ class_id: number; ap50: number }>;
}

/** The model's mAP@0.5 on the gold frames; `beat` is called after each frame. */
export async function scoreOnGold(
  runner: ModelRunner,
  gold: GoldFrames,
  opts: { nmsIou: number; beat: () => void },
): Promise<GoldScore> {
  const detections: CocoDetection[] = [];
  for (const [i, frame] of gold.frames.entries()) {
    const input = await runner.prepare(frame.image);
    const { head } = await runner.run(input.data);
    const boxes = decodeYolox(head, input.letterbox, COCO_CLASSES.length, {
      minScore: EVAL_MIN_SCORE,
      nmsIou: opts.nmsIou,
    });
    for (const d of mapCocoDetections(boxes).mapped) {
      const classId = gold.idOf.get(d.className);
      if (classId !== undefined)
        detections.push({ image_id: i + 1, category_id: classId, bbox: xywh(d.box), score: d.score });
    }
    opts.beat();
  }
  const evaluation = evaluateCoco({
    images: gold.frames.map((f, i) => ({ id: i + 1, width: f.image.width, height: f.image.height })),
    categories: gold.classIds.map((id) => ({ id })),
    groundTruth: gold.groundTruth,
    detections,
  });
  return {
    map50: Math.max(0, evaluation.stats[1]!),
    detections: detections.length,
    per_class: evaluation.perCategory.map((c) => ({ class_id: c.categoryId, ap50: c.ap50 })),
  };
}
