import { ConflictError, InputError } from '../errors';
import { L0_VALUES, type L0 } from './classes';

/**
 * The one authoritative safety-class set. The legacy code carried two (`vru`,`animal` and
 * `vru`,`animal`,`two_wheeler`); a rider's motorcycle is as safety-relevant as the rider, so the
 * wider set is the authoritative one. Every safety floor, gate and slice reads it from here.
 */
export const SAFETY_L1 = ['vru', 'animal', 'two_wheeler'] as const;
export type SafetyL1 = (typeof SAFETY_L1)[number];

export const isSafetyL1 = (l1: string): l1 is SafetyL1 => (SAFETY_L1 as readonly string[]).includes(l1);

/** Class and l1 names: lower snake case, so they read the same in URLs, exports and YOLO files. */
export const CLASS_NAME_PATTERN = /^[a-z][a-z0-9_]{0,63}$/;

export interface OntologyEntry {
  id: number;
  name: string;
  l0: string;
  l1: string;
  parentId: number | null;
}

/**
 * Invariants of an ontology: unique names, each l1 under exactly one l0, known l0 values, parents
 * that exist and form no cycle. Returns every violation (empty when sound).
 */
export function ontologyViolations(classes: readonly OntologyEntry[]): string[] {
  const out: string[] = [];
  const byId = new Map(classes.map((c) => [c.id, c]));
  const names = new Set<string>();
  const l0OfL1 = new Map<string, string>();
  for (const c of classes) {
    if (names.has(c.name)) out.push(`duplicate class name ${c.name}`);
    names.add(c.name);
    if (!(L0_VALUES as readonly string[]).includes(c.l0)) out.push(`class ${c.name}: unknown l0 ${c.l0}`);
    const seen = l0OfL1.get(c.l1);
    if (seen !== undefined && seen !== c.l0) out.push(`l1 ${c.l1} sits under both ${seen} and ${c.l0}`);
    l0OfL1.set(c.l1, c.l0);
    if (c.parentId !== null && !byId.has(c.parentId))
      out.push(`class ${c.name}: parent ${c.parentId} does not exist`);
  }
  for (const c of classes) {
    const visited = new Set<number>();
    let cur: OntologyEntry | undefined = c;
    while (cur && cur.parentId !== null) {
      if (visited.has(cur.id)) {
        out.push(`class ${c.name}: parent chain loops`);
        break;
      }
      visited.add(cur.id);
      cur = byId.get(cur.parentId);
    }
  }
  return out;
}

export interface NewClass {
  name: string;
  l0: L0;
  l1: string;
  parentId: number | null;
}

/** Refuses a class that would break the invariants: a taken name, an l1 already under another l0. */
export function checkNewClass(
  existing: readonly OntologyEntry[],
  candidate: NewClass,
  takenAliases: ReadonlySet<string>,
): void {
  if (existing.some((c) => c.name === candidate.name) || takenAliases.has(candidate.name)) {
    throw new ConflictError(
      `class name ${candidate.name} is taken (by a class or a former name kept as an alias)`,
    );
  }
  const other = existing.find((c) => c.l1 === candidate.l1 && c.l0 !== candidate.l0);
  if (other) {
    throw new InputError(`l1 ${candidate.l1} belongs to l0 ${other.l0}; each l1 sits under exactly one l0`, [
      { field: 'body.l1', message: `belongs to l0 ${other.l0}` },
    ]);
  }
  if (candidate.parentId !== null) {
    const parent = existing.find((c) => c.id === candidate.parentId);
    if (!parent)
      throw new InputError('parent class does not exist', [
        { field: 'body.parent', message: 'unknown class' },
      ]);
    if (parent.l0 !== candidate.l0) {
      throw new InputError(`parent ${parent.name} is ${parent.l0}, not ${candidate.l0}`, [
        { field: 'body.parent', message: 'parent must share the l0' },
      ]);
    }
  }
}
