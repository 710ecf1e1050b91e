import { controlDraw, precisionReport, type PrecisionFigure } from '../control';

/**
 * The per-class precision audit (POST /api/platform/quality/audit, docs/quality-measure.md): a
 * seeded sample of each class's auto-accepted machine objects goes to human verdicts, and each
 * class's Laplace-smoothed precision is reported from MIN_CONTROL_SAMPLE verdicts up.
 *
 * The draw ranks a class's candidates by controlDraw(seed, key) — the control sample's own seeded
 * hash of the object's stable key (its auto-label idem key, else its id) — ties by object id, and
 * keeps the first `perClass`. The same seed over the same candidates gives the same sample
 * whatever order they come in; another seed gives an independent one.
 */

export interface AuditCandidate {
  object_id: string;
  /** The object's stable key: its idem key when it has one, else its id. */
  key: string;
  class_name: string;
}

export function drawAuditSample(
  candidates: readonly AuditCandidate[],
  seed: number,
  perClass: number,
): Map<string, AuditCandidate[]> {
  const byClass = new Map<string, Array<{ c: AuditCandidate; draw: number }>>();
  for (const c of candidates) {
    const list = byClass.get(c.class_name);
    const item = { c, draw: controlDraw(seed, c.key) };
    if (list) list.push(item);
    else byClass.set(c.class_name, [item]);
  }
  const out = new Map<string, AuditCandidate[]>();
  for (const name of [...byClass.keys()].sort()) {
    const ranked = byClass
      .get(name)!
      .sort((a, b) => a.draw - b.draw || (a.c.object_id < b.c.object_id ? -1 : 1))
      .slice(0, perClass)
      .map((x) => x.c);
    out.set(name, ranked);
  }
  return out;
}

/** One class's precision from its audited objects' verdicts (null: awaiting one). */
export function classPrecision(verdicts: ReadonlyArray<string | null>): PrecisionFigure {
  const { by_check: _none, ...figure } = precisionReport(
    verdicts.map((verdict) => ({ verdict, checks: [] })),
    [],
  );
  return figure;
}

/** The same figure from counts: `reviewed` verdicts of which `correct` were right, `pending` awaiting one. */
export function precisionFromCounts(reviewed: number, correct: number, pending: number): PrecisionFigure {
  const verdicts: Array<string | null> = [];
  for (let i = 0; i < correct; i++) verdicts.push('correct');
  for (let i = correct; i < reviewed; i++) verdicts.push('wrong');
  for (let i = 0; i < pending; i++) verdicts.push(null);
  return classPrecision(verdicts);
}
