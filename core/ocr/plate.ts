/**
 * Whether a read looks like a licence plate, by rules rather than a model (docs/ocr-signs.md):
 * the text line's box is wider than tall within what plate lines measure (4 to 10 glyphs of about
 * 0.5–0.7 of their height each, with separators: from ~1.5:1 for a short row of a two-row plate
 * to ~12:1 for a long one-row plate read tightly), and its characters are what plates carry: 4 to
 * 10 letters and digits with at least one digit, separators (space, dash, dot, middle dot)
 * allowed, nothing else.
 */
export const PLATE_ASPECT = { min: 1.5, max: 12 } as const;
export const PLATE_CHARS = { min: 4, max: 10 } as const;

export interface PlateCheck {
  plate: boolean;
  /** The read with separators removed, upper case: the plate's characters. */
  normalized: string;
  /** Why it is not plate-shaped; empty when it is. */
  reasons: string[];
}

export function plateShape(text: string, box: readonly number[]): PlateCheck {
  const [x1, y1, x2, y2] = box as [number, number, number, number];
  const aspect = (x2 - x1) / Math.max(1e-6, y2 - y1);
  const upper = text.toUpperCase().trim();
  const normalized = upper.replace(/[\s\-.·]/g, '');
  const reasons: string[] = [];
  if (aspect < PLATE_ASPECT.min || aspect > PLATE_ASPECT.max)
    reasons.push(`aspect ${aspect.toFixed(2)} outside ${PLATE_ASPECT.min}–${PLATE_ASPECT.max}`);
  if (!/^[A-Z0-9]*$/.test(normalized)) reasons.push('characters other than letters, digits and separators');
  if (normalized.length < PLATE_CHARS.min || normalized.length > PLATE_CHARS.max)
    reasons.push(`${normalized.length} characters, not ${PLATE_CHARS.min}–${PLATE_CHARS.max}`);
  if (!/[0-9]/.test(normalized)) reasons.push('no digit');
  return { plate: reasons.length === 0, normalized, reasons };
}
