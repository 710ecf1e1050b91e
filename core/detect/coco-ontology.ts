/**
 * The closed-set detector speaks COCO-80; the platform speaks its ontology (core/ontology). Each
 * COCO class that names something on or beside a road maps to the ontology class that means the
 * same; indoor and handheld things (cups, laptops, umbrellas...) have no class there and are
 * dropped, and the drop is counted so a run can say what it left out.
 */
export const COCO_CLASSES = [
  'person',
  'bicycle',
  'car',
  'motorcycle',
  'airplane',
  'bus',
  'train',
  'truck',
  'boat',
  'traffic light',
  'fire hydrant',
  'stop sign',
  'parking meter',
  'bench',
  'bird',
  'cat',
  'dog',
  'horse',
  'sheep',
  'cow',
  'elephant',
  'bear',
  'zebra',
  'giraffe',
  'backpack',
  'umbrella',
  'handbag',
  'tie',
  'suitcase',
  'frisbee',
  'skis',
  'snowboard',
  'sports ball',
  'kite',
  'baseball bat',
  'baseball glove',
  'skateboard',
  'surfboard',
  'tennis racket',
  'bottle',
  'wine glass',
  'cup',
  'fork',
  'knife',
  'spoon',
  'bowl',
  'banana',
  'apple',
  'sandwich',
  'orange',
  'broccoli',
  'carrot',
  'hot dog',
  'pizza',
  'donut',
  'cake',
  'chair',
  'couch',
  'potted plant',
  'bed',
  'dining table',
  'toilet',
  'tv',
  'laptop',
  'mouse',
  'remote',
  'keyboard',
  'cell phone',
  'microwave',
  'oven',
  'toaster',
  'sink',
  'refrigerator',
  'book',
  'clock',
  'vase',
  'scissors',
  'teddy bear',
  'hair drier',
  'toothbrush',
] as const;
export type CocoClass = (typeof COCO_CLASSES)[number];

/** COCO name → ontology class name. Wild animals without a class of their own fall to `animal`. */
export const COCO_TO_ONTOLOGY: Readonly<Partial<Record<CocoClass, string>>> = {
  person: 'person',
  bicycle: 'bicycle',
  car: 'car',
  motorcycle: 'motorcycle',
  bus: 'bus',
  train: 'train',
  truck: 'truck',
  boat: 'boat',
  'traffic light': 'traffic_light',
  'fire hydrant': 'fire_hydrant',
  'stop sign': 'traffic_sign',
  'parking meter': 'parking_meter',
  bench: 'bench',
  bird: 'bird',
  cat: 'cat',
  dog: 'dog',
  horse: 'horse',
  sheep: 'sheep',
  cow: 'cow',
  elephant: 'elephant',
  bear: 'animal',
  zebra: 'animal',
  giraffe: 'animal',
};

export interface MappedDetections<T> {
  mapped: Array<T & { className: string; cocoClass: CocoClass }>;
  /** Dropped detections by COCO class name. */
  dropped: Record<string, number>;
}

/** Maps detections carrying a COCO class index onto ontology class names; the rest are dropped and counted. */
export function mapCocoDetections<T extends { classIndex: number }>(
  detections: readonly T[],
): MappedDetections<T> {
  const out: MappedDetections<T> = { mapped: [], dropped: {} };
  for (const d of detections) {
    const coco = COCO_CLASSES[d.classIndex];
    if (coco === undefined)
      throw new Error(`COCO class index ${d.classIndex} is outside 0–${COCO_CLASSES.length - 1}`);
    const className = COCO_TO_ONTOLOGY[coco];
    if (className) out.mapped.push({ ...d, className, cocoClass: coco });
    else out.dropped[coco] = (out.dropped[coco] ?? 0) + 1;
  }
  return out;
}
