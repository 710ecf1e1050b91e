import { matchAnnotations, type AgreementIn } from './agreement';

/**
 * Per-class agreement beside computeAgreement's pooled figures (docs/quality-measure.md), on the
 * same matching and units:
 *
 * - `units`: units (real-world objects) at least two annotators marked where one of them said the
 *   class; `agreed`: those where every one of them said it; `agreement` = agreed / units (null
 *   without units). This is the class's specific agreement: 1 when nobody ever disputed the class.
 * - `unmatched`: objects of the class that no other annotator matched (units of one).
 * - `mean_iou`: mean IoU of the pairwise matches whose two objects both have the class.
 *
 * Classes are keyed by their label as text (the input's `class`, a name or an id).
 */
export interface ClassAgreement {
  units: number;
  agreed: number;
  agreement: number | null;
  unmatched: number;
  mean_iou: number | null;
}

export function agreementByClass(input: AgreementIn): Record<string, ClassAgreement> {
  const matching = matchAnnotations(input);
  const all = input.annotations;
  const label = (i: number) => String(all[i]!.class);
  const out = new Map<string, ClassAgreement & { iouSum: number; matches: number }>();
  const entry = (name: string) => {
    let e = out.get(name);
    if (!e) {
      e = { units: 0, agreed: 0, agreement: null, unmatched: 0, mean_iou: null, iouSum: 0, matches: 0 };
      out.set(name, e);
    }
    return e;
  };
  for (const unit of matching.units) {
    const labels = unit.members.map(label);
    if (labels.length < 2) {
      entry(labels[0]!).unmatched++;
      continue;
    }
    for (const name of new Set(labels)) {
      const e = entry(name);
      e.units++;
      if (labels.every((l) => l === name)) e.agreed++;
    }
  }
  for (const pair of matching.pairs) {
    for (const m of pair.matches) {
      if (label(m.a) !== label(m.b)) continue;
      const e = entry(label(m.a));
      e.iouSum += m.iou;
      e.matches++;
    }
  }
  return Object.fromEntries(
    [...out.entries()]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([name, { iouSum, matches, ...e }]) => [
        name,
        { ...e, agreement: e.units ? e.agreed / e.units : null, mean_iou: matches ? iouSum / matches : null },
      ]),
  );
}
