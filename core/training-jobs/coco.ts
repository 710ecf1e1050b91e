import { z } from 'zod';
import { COCO_CLASSES, COCO_TO_ONTOLOGY } from '../detect/coco-ontology';

/**
 * A dataset commit's COCO split (docs/datasets.md: `annotations/instances_<split>.json`, category
 * ids are ontology class ids, names are ontology names) read as training data for a COCO-80
 * parent: each ontology class maps back to the one COCO class the parent outputs for it; boxes of
 * a class the parent cannot output are counted and reported, never trained.
 */

export const CocoSplitFile = z.object({
  images: z.array(z.object({ id: z.number(), file_name: z.string().min(1).max(512) })),
  annotations: z.array(
    z.object({ image_id: z.number(), category_id: z.number(), bbox: z.array(z.number()).length(4) }),
  ),
  categories: z.array(z.object({ id: z.number(), name: z.string() })),
});
export type CocoSplitFile = z.infer<typeof CocoSplitFile>;

const cocoIndicesByOntology = new Map<string, number[]>();
for (const [coco, ontology] of Object.entries(COCO_TO_ONTOLOGY)) {
  const index = (COCO_CLASSES as readonly string[]).indexOf(coco);
  cocoIndicesByOntology.set(ontology, [...(cocoIndicesByOntology.get(ontology) ?? []), index]);
}

/**
 * The parent's output index for an ontology class, or why there is none: the parent has no COCO
 * class for it, or several (`animal` stands for bear, zebra and giraffe, and training one of them
 * on every animal would teach it the others' pictures).
 */
export function parentClassIndex(className: string): { index: number } | { reason: string } {
  const indices = cocoIndicesByOntology.get(className) ?? [];
  if (indices.length === 1) return { index: indices[0]! };
  if (indices.length === 0) return { reason: 'the parent (COCO-80) has no class for it' };
  return {
    reason: `ambiguous: the parent outputs it as ${indices.map((i) => COCO_CLASSES[i]).join(', ')}`,
  };
}

/** Category name → the parent's class index, for the categories of the files that have one. */
export function classMapOf(files: readonly CocoSplitFile[]): {
  classMap: Record<string, number>;
  unmapped: Record<string, string>;
} {
  const classMap: Record<string, number> = {};
  const unmapped: Record<string, string> = {};
  for (const c of files.flatMap((f) => f.categories)) {
    const mapped = parentClassIndex(c.name);
    if ('index' in mapped) classMap[c.name] = mapped.index;
    else unmapped[c.name] = mapped.reason;
  }
  return { classMap, unmapped };
}

export interface TrainingItem {
  fileName: string;
  /** Boxes in image pixels [x1, y1, x2, y2], with the parent's class index. */
  boxes: Array<{ bbox: [number, number, number, number]; classIndex: number }>;
}

/**
 * The split's images with their trainable boxes. Images without one stay (they teach the
 * objectness head what background looks like); boxes of unmapped classes and boxes without area
 * are counted by category name.
 */
export function trainingItems(
  file: CocoSplitFile,
  classMap: Readonly<Record<string, number>>,
): { items: TrainingItem[]; boxes: number; skipped: Record<string, number> } {
  const names = new Map(file.categories.map((c) => [c.id, c.name]));
  const items = new Map<number, TrainingItem>(
    file.images.map((im) => [im.id, { fileName: im.file_name, boxes: [] }]),
  );
  const skipped: Record<string, number> = {};
  let boxes = 0;
  for (const a of file.annotations) {
    const name = names.get(a.category_id) ?? `category ${a.category_id}`;
    const item = items.get(a.image_id);
    const classIndex = classMap[name];
    const [x, y, w, h] = a.bbox as [number, number, number, number];
    if (!item || classIndex === undefined || !(w > 0 && h > 0)) {
      const why = !item ? `${name} (no such image)` : classIndex === undefined ? name : `${name} (no area)`;
      skipped[why] = (skipped[why] ?? 0) + 1;
      continue;
    }
    item.boxes.push({ bbox: [x, y, x + w, y + h], classIndex });
    boxes++;
  }
  return { items: [...items.values()], boxes, skipped };
}
