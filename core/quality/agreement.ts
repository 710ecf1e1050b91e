import { munkres } from 'munkres';
import { InputError } from '../errors';
import { type Box, iou } from '../geometry/boxes';

/**
 * Inter-annotator agreement (IAA) on boxes: several annotators labelled the same frames, and we ask
 * how far they agree on what is there (class) and where (box).
 *
 * Matching. On each frame, each pair of annotators' objects is matched one-to-one by an optimal
 * assignment (munkres) that maximises the total IoU over pairs with IoU ≥ iou_thr; pairs below the
 * threshold are never matches. Greedy matching (best IoU first) can strand an object whose only
 * partner was taken by a slightly better pair; the optimum matches both. When assignments tie on
 * total IoU (copied or pre-labelled boxes are identical), each same-class pair adds 1e-9, so the tie
 * goes to the reading in which the annotators agree on class rather than to the solver's whim (the
 * weight only outbids IoU totals closer than 1e-9 per match). A tie left after that is the solver's
 * (munkres') pick; it matters only between assignments equal in IoU and in same-class count, e.g.
 * which of two identical copies is matched. Each annotator's objects on a frame are put in a
 * canonical order (box, then class, then input position) before solving, so the result does not
 * depend on the order of the input.
 *
 * Units. A unit is one real-world object as seen by the annotators who marked it (at most one object
 * of each). Units are the connected components of the pairwise matches, except that a component may
 * not hold two objects of one annotator: matches are merged strongest first (IoU descending; exact
 * ties in canonical order), and a match that would put an annotator twice into a unit is not merged
 * (constrained single linkage, Kruskal-style). A component without such a conflict is therefore
 * exactly the connected component; in a conflict (A-B and B-C matched, and C's object matched to a
 * different object of A) the weakest link is the one cut. The rule uses only the pairwise optimal
 * matches and a total order on them, so it is deterministic and independent of input order; a unit
 * holding a pair that was not matched directly is possible (A-B, B-C matched, A-C just under the
 * threshold) and is what "the same object" means transitively. Objects matched to nobody are units
 * of one.
 *
 * An annotator with no object on a frame that others annotated is taken as having found nothing
 * there (IAA tasks give every annotator every frame), so the others' objects count as unmatched.
 *
 * Class agreement, checked against sklearn/statsmodels/krippendorff (tools/reference/stats_reference.py):
 * - Cohen's kappa per annotator pair over that pair's matches, as sklearn.metrics.cohen_kappa_score.
 *   When expected agreement is 1 (both used one and the same class, so observed agreement is 1 too)
 *   or there are no matches, kappa is undefined: sklearn returns NaN (replace_undefined_by=np.nan),
 *   we return null; observed_agreement still says 1.
 * - Fleiss' kappa over the units every annotator rated (statsmodels fleiss_kappa on aggregate_raters);
 *   null when there are none or expected agreement is 1 (statsmodels' NaN).
 * - Krippendorff's alpha (nominal) over all units, missing ratings allowed (units of one add
 *   nothing); null where krippendorff.alpha raises or gives NaN (no unit with two ratings, or one
 *   class only).
 */

export interface AgreementAnnotation {
  annotator: string;
  frame_id: string;
  class: string | number;
  bbox: Box;
}

export interface AgreementIn {
  annotations: readonly AgreementAnnotation[];
  iou_thr?: number;
}

export const AGREEMENT_IOU_THR = 0.5;
/** Added per same-class pair: breaks exact ties in total IoU only. */
const CLASS_TIE_WEIGHT = 1e-9;

export type ClassLabel = string | number;

/** One pairwise match; `a`, `b` are indices into the input annotations, `a` of the earlier annotator. */
export interface AgreementMatch {
  a: number;
  b: number;
  iou: number;
}

/** One real-world object: indices into the input annotations, in annotator order. */
export interface AgreementUnit {
  frame_id: string;
  members: number[];
}

export interface AgreementMatching {
  /** Sorted; pairs and units refer to annotators in this order. */
  annotators: string[];
  frames: number;
  iou_thr: number;
  /** Matches of each annotator pair, pairs in order (0,1), (0,2), ..., (1,2), ... */
  pairs: Array<{ annotators: [string, string]; matches: AgreementMatch[] }>;
  units: AgreementUnit[];
}

export interface PairAgreement {
  annotators: [string, string];
  matches: number;
  /** Objects of each of the two annotators not matched to the other's. */
  unmatched: [number, number];
  /** Share of matches with the same class; null without matches. */
  observed_agreement: number | null;
  cohen_kappa: number | null;
  mean_iou: number | null;
}

export interface AnnotatorAgreement {
  annotator: string;
  objects: number;
  /** Objects matched to no other annotator's object. */
  unmatched: number;
}

export interface AgreementReport {
  iou_thr: number;
  counts: {
    frames: number;
    annotators: number;
    objects: number;
    /** All units, units of one included. */
    units: number;
    /** Units with two ratings or more (what alpha uses). */
    pairable_units: number;
    /** Units every annotator rated (what Fleiss' kappa uses). */
    complete_units: number;
    matches: number;
  };
  class_agreement: {
    fleiss_kappa: number | null;
    krippendorff_alpha: number | null;
  };
  localisation: {
    /** Mean IoU over every pairwise match; null without matches. */
    mean_iou: number | null;
  };
  pairs: PairAgreement[];
  annotators: AnnotatorAgreement[];
}

function compareLabels(x: ClassLabel, y: ClassLabel): number {
  if (typeof x === 'number' && typeof y === 'number') return x - y;
  if (typeof x === 'number') return -1;
  if (typeof y === 'number') return 1;
  return x < y ? -1 : x > y ? 1 : 0;
}

const compareNames = (x: string, y: string): number => (x < y ? -1 : x > y ? 1 : 0);

function checkInput(input: AgreementIn): number {
  const thr = input.iou_thr ?? AGREEMENT_IOU_THR;
  if (!(thr > 0 && thr <= 1)) {
    throw new InputError('iou_thr must lie in (0, 1]', [{ field: 'iou_thr', message: 'must lie in (0, 1]' }]);
  }
  input.annotations.forEach((a, i) => {
    if (a.bbox.length !== 4 || !a.bbox.every(Number.isFinite)) {
      throw new InputError('a box must be four finite numbers', [
        { field: `annotations[${i}].bbox`, message: 'must be [x1, y1, x2, y2] of finite numbers' },
      ]);
    }
  });
  return thr;
}

/**
 * Optimal one-to-one matches between two annotators' objects on one frame (lists in canonical
 * order), as [row, column, IoU] with IoU ≥ thr.
 */
function assignFrame(
  all: readonly AgreementAnnotation[],
  rows: readonly number[],
  cols: readonly number[],
  thr: number,
): Array<[number, number, number]> {
  const ious = rows.map((r) => cols.map((c) => iou(all[r]!.bbox, all[c]!.bbox)));
  if (!ious.some((row) => row.some((v) => v >= thr))) return [];
  const cost = ious.map((row, i) =>
    row.map((v, j) =>
      v >= thr ? -(v + (all[rows[i]!]!.class === all[cols[j]!]!.class ? CLASS_TIE_WEIGHT : 0)) : 0,
    ),
  );
  return munkres(cost)
    .map(([i, j]): [number, number, number] => [i, j, ious[i]![j]!])
    .filter(([, , v]) => v >= thr);
}

/** Pairwise optimal matches and multi-annotator units (the rules in the module comment). */
export function matchAnnotations(input: AgreementIn): AgreementMatching {
  const thr = checkInput(input);
  const all = input.annotations;
  const annotators = [...new Set(all.map((a) => a.annotator))].sort(compareNames);
  if (annotators.length < 2) {
    throw new InputError('agreement needs at least two annotators', [
      { field: 'annotations', message: `holds ${annotators.length} annotator(s); at least 2 are needed` },
    ]);
  }
  const annotatorIndex = new Map(annotators.map((name, i) => [name, i]));
  const byFrame = new Map<string, number[][]>();
  all.forEach((a, i) => {
    let lists = byFrame.get(a.frame_id);
    if (!lists) byFrame.set(a.frame_id, (lists = annotators.map(() => [])));
    lists[annotatorIndex.get(a.annotator)!]!.push(i);
  });
  const canonical = (i: number, j: number): number => {
    const x = all[i]!;
    const y = all[j]!;
    for (let k = 0; k < 4; k++) if (x.bbox[k] !== y.bbox[k]) return x.bbox[k]! - y.bbox[k]!;
    return compareLabels(x.class, y.class) || i - j;
  };

  const pairs: AgreementMatching['pairs'] = [];
  const pairIndex: number[][] = annotators.map(() => []);
  for (let p = 0; p < annotators.length; p++) {
    for (let q = p + 1; q < annotators.length; q++) {
      pairIndex[p]![q] = pairs.length;
      pairs.push({ annotators: [annotators[p]!, annotators[q]!], matches: [] });
    }
  }

  const units: AgreementUnit[] = [];
  const frameIds = [...byFrame.keys()].sort(compareNames);
  for (const frameId of frameIds) {
    const lists = byFrame.get(frameId)!;
    for (const list of lists) list.sort(canonical);
    // Edges of this frame: [annotator p, rank in p's list, annotator q, rank in q's list, IoU], p < q.
    const edges: Array<[number, number, number, number, number]> = [];
    for (let p = 0; p < lists.length; p++) {
      for (let q = p + 1; q < lists.length; q++) {
        if (!lists[p]!.length || !lists[q]!.length) continue;
        const matches = pairs[pairIndex[p]![q]!]!.matches;
        for (const [i, j, v] of assignFrame(all, lists[p]!, lists[q]!, thr)) {
          matches.push({ a: lists[p]![i]!, b: lists[q]![j]!, iou: v });
          edges.push([p, i, q, j, v]);
        }
      }
    }
    units.push(...frameUnits(frameId, lists, edges));
  }
  return { annotators, frames: frameIds.length, iou_thr: thr, pairs, units };
}

/** Constrained single linkage over one frame's matches (module comment, Units). */
function frameUnits(
  frameId: string,
  lists: readonly number[][],
  edges: Array<[number, number, number, number, number]>,
): AgreementUnit[] {
  // Node id of (annotator p, rank r): offsets[p] + r.
  const offsets: number[] = [];
  let nodes = 0;
  for (const list of lists) {
    offsets.push(nodes);
    nodes += list.length;
  }
  const parent = Array.from({ length: nodes }, (_, i) => i);
  const find = (x: number): number => {
    while (parent[x] !== x) x = parent[x] = parent[parent[x]!]!;
    return x;
  };
  // Annotators present in each root's unit.
  const holds = lists.flatMap((list, p) => list.map(() => new Set([p])));
  edges.sort((x, y) => y[4] - x[4] || x[0] - y[0] || x[1] - y[1] || x[2] - y[2] || x[3] - y[3]);
  for (const [p, i, q, j] of edges) {
    const u = find(offsets[p]! + i);
    const v = find(offsets[q]! + j);
    if (u === v) continue;
    const [small, large] = holds[u]!.size <= holds[v]!.size ? [u, v] : [v, u];
    if ([...holds[small]!].some((a) => holds[large]!.has(a))) continue;
    for (const a of holds[small]!) holds[large]!.add(a);
    parent[small] = large;
  }
  const byRoot = new Map<number, number[]>();
  // Nodes in annotator-then-rank order, so members come out in annotator order and units in order of their first member.
  lists.forEach((list, p) =>
    list.forEach((annotation, r) => {
      const root = find(offsets[p]! + r);
      const members = byRoot.get(root);
      if (members) members.push(annotation);
      else byRoot.set(root, [annotation]);
    }),
  );
  return [...byRoot.values()].map((members) => ({ frame_id: frameId, members }));
}

/** Cohen's kappa of two raters' labels on the same items, as sklearn's cohen_kappa_score; null where it gives NaN. */
export function cohenKappa(first: readonly ClassLabel[], second: readonly ClassLabel[]): number | null {
  const n = first.length;
  if (n === 0) return null;
  const rows = new Map<ClassLabel, number>();
  const cols = new Map<ClassLabel, number>();
  let same = 0;
  for (let i = 0; i < n; i++) {
    rows.set(first[i]!, (rows.get(first[i]!) ?? 0) + 1);
    cols.set(second[i]!, (cols.get(second[i]!) ?? 0) + 1);
    if (first[i] === second[i]) same++;
  }
  let chance = 0;
  for (const [label, count] of rows) chance += count * (cols.get(label) ?? 0);
  // sklearn's form: 1 - (weighted disagreement) / (weighted expected disagreement).
  const expectedDisagreement = n - chance / n;
  return expectedDisagreement === 0 ? null : 1 - (n - same) / expectedDisagreement;
}

/**
 * Fleiss' kappa of units each rated by the same number of raters (statsmodels fleiss_kappa,
 * method='fleiss'); null when there is no unit or expected agreement is 1.
 */
export function fleissKappa(units: readonly (readonly ClassLabel[])[]): number | null {
  if (units.length === 0) return null;
  const raters = units[0]!.length;
  if (raters < 2 || units.some((u) => u.length !== raters)) {
    throw new InputError("Fleiss' kappa needs the same number (≥ 2) of ratings on every unit");
  }
  const totals = new Map<ClassLabel, number>();
  let agreement = 0;
  for (const unit of units) {
    const counts = new Map<ClassLabel, number>();
    for (const label of unit) counts.set(label, (counts.get(label) ?? 0) + 1);
    let squares = 0;
    for (const [label, c] of counts) {
      squares += c * c;
      totals.set(label, (totals.get(label) ?? 0) + c);
    }
    agreement += (squares - raters) / (raters * (raters - 1));
  }
  const observed = agreement / units.length;
  let expected = 0;
  for (const c of totals.values()) expected += (c / (units.length * raters)) ** 2;
  return expected === 1 ? null : (observed - expected) / (1 - expected);
}

/**
 * Krippendorff's alpha for nominal data from units of any size (missing ratings simply absent), as
 * krippendorff.alpha(level_of_measurement='nominal'): 1 - (n-1)·Σ_{c≠k} o_ck / Σ_{c≠k} n_c·n_k over
 * the coincidence matrix o of the pairable units. Null where that is undefined.
 */
export function krippendorffAlphaNominal(units: readonly (readonly ClassLabel[])[]): number | null {
  let n = 0;
  let coincidentSame = 0;
  const marginals = new Map<ClassLabel, number>();
  for (const unit of units) {
    const m = unit.length;
    if (m < 2) continue;
    const counts = new Map<ClassLabel, number>();
    for (const label of unit) counts.set(label, (counts.get(label) ?? 0) + 1);
    for (const [label, c] of counts) {
      // o_cc gains c·(c-1)/(m-1): ordered pairs of distinct raters who both said `label`.
      coincidentSame += (c * (c - 1)) / (m - 1);
      marginals.set(label, (marginals.get(label) ?? 0) + c);
    }
    n += m;
  }
  let squares = 0;
  for (const c of marginals.values()) squares += c * c;
  const expected = n * n - squares;
  if (n === 0 || expected === 0) return null;
  return 1 - ((n - 1) * (n - coincidentSame)) / expected;
}

const mean = (xs: readonly number[]): number | null =>
  xs.length ? xs.reduce((s, x) => s + x, 0) / xs.length : null;

/** The IAA report (spec AgreementIn): matching, units, and the agreement figures on them. */
export function computeAgreement(input: AgreementIn): AgreementReport {
  const matching = matchAnnotations(input);
  const all = input.annotations;
  const objectsOf = new Map(matching.annotators.map((name) => [name, 0]));
  for (const a of all) objectsOf.set(a.annotator, objectsOf.get(a.annotator)! + 1);
  const matched = new Uint8Array(all.length);
  const allIous: number[] = [];

  const pairs = matching.pairs.map(({ annotators: [first, second], matches }): PairAgreement => {
    const ious = matches.map((m) => m.iou);
    for (const m of matches) {
      matched[m.a] = matched[m.b] = 1;
      allIous.push(m.iou);
    }
    const labelsA = matches.map((m) => all[m.a]!.class);
    const labelsB = matches.map((m) => all[m.b]!.class);
    const same = labelsA.filter((label, i) => label === labelsB[i]).length;
    return {
      annotators: [first, second],
      matches: matches.length,
      unmatched: [objectsOf.get(first)! - matches.length, objectsOf.get(second)! - matches.length],
      observed_agreement: matches.length ? same / matches.length : null,
      cohen_kappa: cohenKappa(labelsA, labelsB),
      mean_iou: mean(ious),
    };
  });

  const unmatchedOf = new Map(matching.annotators.map((name) => [name, 0]));
  all.forEach((a, i) => {
    if (!matched[i]) unmatchedOf.set(a.annotator, unmatchedOf.get(a.annotator)! + 1);
  });

  const ratings = matching.units.map((u) => u.members.map((i) => all[i]!.class));
  const complete = ratings.filter((r) => r.length === matching.annotators.length);
  return {
    iou_thr: matching.iou_thr,
    counts: {
      frames: matching.frames,
      annotators: matching.annotators.length,
      objects: all.length,
      units: ratings.length,
      pairable_units: ratings.filter((r) => r.length >= 2).length,
      complete_units: complete.length,
      matches: allIous.length,
    },
    class_agreement: {
      fleiss_kappa: fleissKappa(complete),
      krippendorff_alpha: krippendorffAlphaNominal(ratings),
    },
    localisation: { mean_iou: mean(allIous) },
    pairs,
    annotators: matching.annotators.map((annotator) => ({
      annotator,
      objects: objectsOf.get(annotator)!,
      unmatched: unmatchedOf.get(annotator)!,
    })),
  };
}
