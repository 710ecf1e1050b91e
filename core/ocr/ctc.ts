/**
 * Greedy CTC decoding of a PaddleOCR recognition head: per time step the most probable class;
 * repeats collapse and class 0 (the CTC blank) separates characters. Classes 1..n are the
 * dictionary's lines in order, and the last class is a space (PaddleOCR's `use_space_char`).
 */
export interface CtcRead {
  text: string;
  /** Mean probability of the emitted characters; 0 when none was emitted. */
  confidence: number;
}

/** The character list from the dictionary file's text: one character a line, plus the space. */
export function parseDictionary(text: string): string[] {
  const lines = text.split(/\r?\n/);
  if (lines.at(-1) === '') lines.pop();
  return [...lines, ' '];
}

export function ctcDecode(
  probs: ArrayLike<number>,
  steps: number,
  classes: number,
  charset: readonly string[],
  offset = 0,
): CtcRead {
  if (classes !== charset.length + 1)
    throw new Error(`recognizer has ${classes} classes; the dictionary gives ${charset.length} + blank`);
  let text = '';
  let sum = 0;
  let emitted = 0;
  let previous = -1;
  for (let t = 0; t < steps; t++) {
    const base = offset + t * classes;
    let best = 0;
    for (let c = 1; c < classes; c++) if (probs[base + c]! > probs[base + best]!) best = c;
    if (best !== 0 && best !== previous) {
      text += charset[best - 1]!;
      sum += probs[base + best]!;
      emitted++;
    }
    previous = best;
  }
  return { text: text.trim(), confidence: emitted ? sum / emitted : 0 };
}
