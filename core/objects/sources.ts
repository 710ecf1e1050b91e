/**
 * The one enumeration of object `source` (the column stays varchar(16) as the spec says; writers
 * use these values). `human`: drawn or last touched by a person (a review makes any object
 * human). `imported`: brought in from outside with unknown provenance, kept like human work.
 * The machine sources are what an auto-label re-run or redetect-all may delete and regenerate:
 * `fused` (the auto-labeller), `interpolated` and `propagated` (filled between or carried from
 * keyframes), `relabel` (a corpus relabel), `recall` (recall mining).
 */
export const OBJECT_SOURCES = [
  'human',
  'imported',
  'fused',
  'interpolated',
  'propagated',
  'relabel',
  'recall',
] as const;
export type ObjectSource = (typeof OBJECT_SOURCES)[number];

export const MACHINE_SOURCES: readonly ObjectSource[] = [
  'fused',
  'interpolated',
  'propagated',
  'relabel',
  'recall',
];

/**
 * Spellings older producers wrote: `interp` (a second interpolator) and `auto_accept` (a state
 * written into the source column by the old auto-labeller, whose objects are fused ones).
 */
export const LEGACY_SOURCES: Readonly<Record<string, ObjectSource>> = {
  interp: 'interpolated',
  auto_accept: 'fused',
};

/** The canonical source for a stored or imported value; null for a value no producer is known to write. */
export function normaliseSource(value: string): ObjectSource | null {
  if ((OBJECT_SOURCES as readonly string[]).includes(value)) return value as ObjectSource;
  return LEGACY_SOURCES[value] ?? null;
}

export function isMachineSource(value: string): boolean {
  const s = normaliseSource(value);
  return s !== null && MACHINE_SOURCES.includes(s);
}

/** Every stored spelling that counts as machine-source (for a database filter). */
export const MACHINE_SOURCE_SPELLINGS: readonly string[] = [
  ...MACHINE_SOURCES,
  ...Object.keys(LEGACY_SOURCES).filter((k) => MACHINE_SOURCES.includes(LEGACY_SOURCES[k]!)),
];
