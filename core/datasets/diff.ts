import type { ObjectRow } from '../export/parquet-tables';

/**
 * The object diff of two dataset commits (docs/datasets-read.md): objects are matched by
 * `object_id` between the two objects tables; an object in both is changed when its version,
 * class, state or box differs, the box compared at 0.01 px so that float noise from a re-export
 * is not a change.
 *
 * Only one side is held in memory, and compactly: the object id (the Map key) and seven 32-bit
 * fields in typed arrays, about 100 bytes an object; the other side streams past it part by part.
 * The caller holds the smaller commit.
 */

/** The columns of an objects table the diff reads. */
export const DIFF_COLUMNS = ['object_id', 'class_name', 'version', 'state', 'x1', 'y1', 'x2', 'y2'] as const;
export type DiffRow = Pick<ObjectRow, (typeof DIFF_COLUMNS)[number]>;

export type DiffKind = 'added' | 'removed' | 'changed';
export type ClassDiff = Record<DiffKind, number>;

export interface ObjectDiff {
  totals: ClassDiff & { unchanged: number };
  /** Per class: added and changed objects under their class in b, removed ones under their class in a. */
  by_class: Record<string, ClassDiff>;
  /** The first ids of each kind, in table order. */
  samples: Record<DiffKind, string[]>;
}

export const DIFF_SAMPLE_LIMIT = 50;

/** version, class, state, x1, y1, x2, y2 */
const FIELDS = 7;

/** Small integers for the few distinct class names and states, so a slot holds numbers only. */
class Codes {
  private readonly byName = new Map<string, number>();
  readonly names: string[] = [];
  code(name: string): number {
    let code = this.byName.get(name);
    if (code === undefined) {
      code = this.names.length;
      this.byName.set(name, code);
      this.names.push(name);
    }
    return code;
  }
}

/**
 * The box at 0.01 px. Int32 storage wraps past ±21 million px, equally on both sides, so equal
 * boxes stay equal.
 */
const centiPixels = (v: number): number => Math.round(v * 100);

/** One commit's objects, held for matching. */
class ObjectIndex {
  private readonly codes = new Codes();
  private readonly slots = new Map<string, number>();
  private fields = new Int32Array(1024 * FIELDS);
  private matched = new Uint8Array(1024);

  /** Packs a row as the index stores it; a probe row is packed the same way to compare. */
  pack(row: DiffRow, into: Int32Array, at: number): void {
    into[at] = row.version;
    into[at + 1] = this.codes.code(row.class_name);
    into[at + 2] = this.codes.code(row.state);
    into[at + 3] = centiPixels(row.x1);
    into[at + 4] = centiPixels(row.y1);
    into[at + 5] = centiPixels(row.x2);
    into[at + 6] = centiPixels(row.y2);
  }

  /** Adds an object; a second row with the same id is ignored (a table holds each object once). */
  add(row: DiffRow): void {
    if (this.slots.has(row.object_id)) return;
    const slot = this.slots.size;
    if ((slot + 1) * FIELDS > this.fields.length) {
      const grown = new Int32Array(this.fields.length * 2);
      grown.set(this.fields);
      this.fields = grown;
      const matched = new Uint8Array(this.matched.length * 2);
      matched.set(this.matched);
      this.matched = matched;
    }
    this.slots.set(row.object_id, slot);
    this.pack(row, this.fields, slot * FIELDS);
  }

  /**
   * Matches a row of the other side: undefined when this side lacks the object, else whether it
   * differs and this side's class. Each slot remembers it was matched.
   */
  match(row: DiffRow, probe: Int32Array): { changed: boolean; className: string } | undefined {
    const slot = this.slots.get(row.object_id);
    if (slot === undefined) return undefined;
    this.matched[slot] = 1;
    this.pack(row, probe, 0);
    const at = slot * FIELDS;
    let changed = false;
    for (let i = 0; i < FIELDS && !changed; i++) changed = probe[i] !== this.fields[at + i];
    return { changed, className: this.codes.names[this.fields[at + 1]!]! };
  }

  /** The objects no row of the other side matched, in insertion order, with their class. */
  *unmatched(): Generator<{ objectId: string; className: string }> {
    for (const [objectId, slot] of this.slots)
      if (!this.matched[slot])
        yield { objectId, className: this.codes.names[this.fields[slot * FIELDS + 1]!]! };
  }
}

/** Counts and samples as the diff finds them. */
class DiffTally {
  readonly totals = { added: 0, removed: 0, changed: 0, unchanged: 0 };
  readonly byClass: Record<string, ClassDiff> = {};
  readonly samples: Record<DiffKind, string[]> = { added: [], removed: [], changed: [] };

  constructor(private readonly sampleLimit: number) {}

  count(kind: DiffKind | 'unchanged', className: string, objectId: string): void {
    this.totals[kind]++;
    if (kind === 'unchanged') return;
    (this.byClass[className] ??= { added: 0, removed: 0, changed: 0 })[kind]++;
    if (this.samples[kind].length < this.sampleLimit) this.samples[kind].push(objectId);
  }

  result(): ObjectDiff {
    const byClass = Object.fromEntries(
      Object.keys(this.byClass)
        .sort()
        .map((name) => [name, this.byClass[name]!]),
    );
    return { totals: this.totals, by_class: byClass, samples: this.samples };
  }
}

/**
 * Diffs commit a against commit b. `held` is read whole into an index first, `streamed` is then
 * matched against it batch by batch; `heldSide` says which commit `held` is, so the caller can
 * hold whichever side is smaller and the answer is the same.
 */
export async function diffObjects(
  held: AsyncIterable<readonly DiffRow[]> | Iterable<readonly DiffRow[]>,
  streamed: AsyncIterable<readonly DiffRow[]> | Iterable<readonly DiffRow[]>,
  heldSide: 'a' | 'b',
  sampleLimit = DIFF_SAMPLE_LIMIT,
): Promise<ObjectDiff> {
  const index = new ObjectIndex();
  for await (const batch of held) for (const row of batch) index.add(row);

  const tally = new DiffTally(sampleLimit);
  // Missing from the held side: added when the held side is a, removed when it is b.
  const missingKind: DiffKind = heldSide === 'a' ? 'added' : 'removed';
  const leftOverKind: DiffKind = heldSide === 'a' ? 'removed' : 'added';
  const probe = new Int32Array(FIELDS);
  for await (const batch of streamed)
    for (const row of batch) {
      const found = index.match(row, probe);
      if (!found) tally.count(missingKind, row.class_name, row.object_id);
      else
        tally.count(
          found.changed ? 'changed' : 'unchanged',
          heldSide === 'b' ? found.className : row.class_name,
          row.object_id,
        );
    }
  for (const { objectId, className } of index.unmatched()) tally.count(leftOverKind, className, objectId);
  return tally.result();
}
