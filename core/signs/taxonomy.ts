/**
 * The GTSRB classifier's 43 classes mapped onto the ontology. The ontology has no class per sign
 * type: every GTSRB class is the face of a standing sign, so each maps to `traffic_sign` (the
 * front; `traffic_sign_back` has no legend to classify) and keeps its GTSRB type and its
 * category (the German StVO grouping the dataset follows) as attributes. Road works signs are
 * mostly permanent signs as well, so they are not forced into `temporary_sign`.
 */
export const SIGN_ONTOLOGY_CLASS = 'traffic_sign';

/** Ontology classes whose objects are sign faces the classifier can read. */
export const SIGN_FACE_CLASSES = [
  'traffic_sign',
  'direction_sign',
  'temporary_sign',
  'ambiguous_sign',
] as const;

export type SignCategory =
  'speed_limit' | 'end_of_restriction' | 'prohibitory' | 'priority' | 'warning' | 'mandatory';

// Index order of the GTSRB class ids 0–42.
const CATEGORIES: readonly SignCategory[] = [
  ...Array<SignCategory>(6).fill('speed_limit'), // 0–5: 20, 30, 50, 60, 70, 80 km/h
  'end_of_restriction', // 6: end of 80 km/h
  'speed_limit', // 7: 100
  'speed_limit', // 8: 120
  'prohibitory', // 9: no passing
  'prohibitory', // 10: no passing for vehicles over 3.5 t
  'warning', // 11: right of way at the next intersection
  'priority', // 12: priority road
  'priority', // 13: yield
  'priority', // 14: stop
  'prohibitory', // 15: no vehicles
  'prohibitory', // 16: vehicles over 3.5 t prohibited
  'prohibitory', // 17: no entry
  ...Array<SignCategory>(14).fill('warning'), // 18–31: general caution … wild animals
  'end_of_restriction', // 32: end of all speed and passing limits
  ...Array<SignCategory>(8).fill('mandatory'), // 33–40: turn right ahead … roundabout
  'end_of_restriction', // 41: end of no passing
  'end_of_restriction', // 42: end of no passing for vehicles over 3.5 t
];
export const GTSRB_CLASSES = CATEGORIES.length;

export interface SignClassInfo {
  gtsrb_id: number;
  label: string;
  category: SignCategory;
  ontology_class: typeof SIGN_ONTOLOGY_CLASS;
}

/** The taxonomy from the model's label file, which must name exactly the 43 GTSRB classes. */
export function signTaxonomy(labels: readonly string[]): SignClassInfo[] {
  if (labels.length !== GTSRB_CLASSES)
    throw new Error(
      `the sign label file names ${labels.length} classes; the GTSRB mapping has ${GTSRB_CLASSES}`,
    );
  return labels.map((label, gtsrb_id) => ({
    gtsrb_id,
    label,
    category: CATEGORIES[gtsrb_id]!,
    ontology_class: SIGN_ONTOLOGY_CLASS,
  }));
}

export type SignVerdict =
  ({ status: 'recognized'; confidence: number } & SignClassInfo) | { status: 'unknown'; confidence: number };

/** Top-1 of one crop's probabilities; below the floor the answer is `unknown`, never a guess. */
export function decideSign(
  probs: ArrayLike<number>,
  offset: number,
  taxonomy: readonly SignClassInfo[],
  floor: number,
): SignVerdict {
  let best = 0;
  for (let c = 1; c < taxonomy.length; c++) if (probs[offset + c]! > probs[offset + best]!) best = c;
  const confidence = probs[offset + best]!;
  if (confidence < floor) return { status: 'unknown', confidence };
  return { status: 'recognized', confidence, ...taxonomy[best]! };
}

/** GTSRB crops hold the sign with a margin of about 10% of its size on each side (at least 5 px). */
export const SIGN_CROP_PAD = 0.1;
export const SIGN_INPUT_SIDE = 30;

/** Packed RGB (side×side) to the classifier's NHWC float RGB / 255, written at `offset`. */
export function signTensor(rgb: Uint8Array, out: Float32Array, offset: number): void {
  for (let i = 0; i < rgb.length; i++) out[offset + i] = rgb[i]! / 255;
}
