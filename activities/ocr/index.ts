import type { AppConfig } from '../../core/config';
import { InputError, NotFoundError } from '../../core/errors';
import type { Box } from '../../core/geometry';
import { loadFrameImage } from '../annotations/crops';
import type { Db } from '../db';
import { decodeFrame, type FrameImage } from '../detect/frame-image';
import type { ObjectStore } from '../storage/object-store';
import { readRegion, type TextLine } from './reader';

export { readRegion, type TextLine } from './reader';

/** Ontology groups whose objects carry licence plates: cars, buses, trucks… and two-wheelers. */
export const PLATE_BEARING_L1 = ['vehicle', 'two_wheeler'] as const;

interface OcrDeps {
  db: Db;
  storage: ObjectStore;
  config: Pick<AppConfig, 'ocr'>;
}

/**
 * A frame's original pixels. OCR reads the original, not the redacted copy, because reading the
 * plates the redaction blurs is the point; nothing read is stored.
 */
export async function loadFrame(deps: Pick<OcrDeps, 'db' | 'storage'>, frameId: string) {
  const frame = await deps.db.frame.findUnique({ where: { id: frameId } });
  if (!frame) throw new NotFoundError(`no frame ${frameId}`);
  const image = await decodeFrame(await loadFrameImage(deps.storage, { ...frame, redactedUri: null }));
  return { frame, image };
}

/** A box checked against the frame: inside it, with room for a character. */
export function boxOnFrame(box: readonly number[], frame: Pick<FrameImage, 'width' | 'height'>): Box {
  const [x1, y1, x2, y2] = box as Box;
  const clipped: Box = [
    Math.max(0, x1),
    Math.max(0, y1),
    Math.min(frame.width, x2),
    Math.min(frame.height, y2),
  ];
  if (clipped[2] - clipped[0] < 4 || clipped[3] - clipped[1] < 4)
    throw new InputError(
      `box [${box.join(', ')}] leaves less than 4×4 px inside the ${frame.width}×${frame.height} frame`,
    );
  return clipped;
}

export async function ocrRegion(deps: OcrDeps, frameId: string, box: readonly number[]) {
  const { image } = await loadFrame(deps, frameId);
  const region = boxOnFrame(box, image);
  return { frame_id: frameId, box: region, lines: await readRegion(deps.config.ocr, image, region) };
}

export interface VehicleRead {
  object_id: string;
  class: string;
  box: Box;
  lines: TextLine[];
  /** The plate-shaped reads' characters, most confident first. */
  plates: string[];
}

/** Text on each vehicle of the frame (its objects of plate-bearing classes), the largest boxes first. */
export async function ocrVehicles(deps: OcrDeps, frameId: string) {
  const { image } = await loadFrame(deps, frameId);
  const objects = await deps.db.annoObject.findMany({
    where: { frameId, class: { l1: { in: [...PLATE_BEARING_L1] } } },
    select: { id: true, bbox: true, class: { select: { name: true } } },
  });
  const area = (b: number[]) => (b[2]! - b[0]!) * (b[3]! - b[1]!);
  const chosen = objects.sort((a, b) => area(b.bbox) - area(a.bbox)).slice(0, deps.config.ocr.maxVehicles);
  const vehicles: VehicleRead[] = [];
  for (const o of chosen) {
    const box = boxOnFrame(o.bbox, image);
    const lines = await readRegion(deps.config.ocr, image, box);
    const plates = lines
      .filter((l) => l.plate)
      .sort((a, b) => b.confidence - a.confidence)
      .map((l) => l.plate_text!);
    vehicles.push({ object_id: o.id, class: o.class.name, box, lines, plates });
  }
  return { frame_id: frameId, vehicles_on_frame: objects.length, vehicles };
}
