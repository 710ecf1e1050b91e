import { SlicePredicate } from '../../core/curation/slice';
import { precisionFromCounts } from '../../core/quality/precision-audit';
import { sliceQuery } from '../curation/slice-query';
import { findSlice, slicePredicate } from '../curation/slices';
import type { Db } from '../db';
import { activeCalibration, calibrationClassEce } from './calibration';

/**
 * The quality sheet (GET /api/quality/sheet, docs/quality-measure.md) of the corpus or of a
 * curation slice's objects: per class and in total, how many objects there are, what share a
 * person verified (source human, state accepted) and what share auto-accepted, the control
 * sample's precision (Laplace, from 25 verdicts), gold coverage (objects in a sealed gold set),
 * open error candidates naming its objects, the latest agreement figure (the newest `iaa` or
 * `agreement` eval operation's per-class agreement) and the active calibration's ECE.
 */

interface ClassRow {
  class_id: number;
  class_name: string;
  objects: bigint;
  human_verified: bigint;
  auto_accept: bigint;
  gold: bigint;
  open_candidates: bigint;
}

const share = (part: number, whole: number) => (whole ? part / whole : null);

export async function qualitySheet(db: Db, opts: { slice_id?: string | undefined }) {
  const slice = opts.slice_id ? await findSlice(db, opts.slice_id) : null;
  const predicate = slice ? slicePredicate(slice) : SlicePredicate.parse({});
  const q = sliceQuery(predicate);
  const scope = `SELECT o.id, o.class_id, o.state, o.source FROM ${q.from} WHERE ${q.where}`;
  const [rows, totals, controls, agreementOp, calibration] = await Promise.all([
    q.rows<ClassRow>(
      db,
      () => `WITH scope AS (${scope}),
        gold AS (SELECT DISTINCT gi.object_id FROM gold_items gi JOIN gold_sets g ON g.id = gi.gold_id
                  WHERE g.sealed_at IS NOT NULL),
        cand AS (SELECT s.class_id, count(DISTINCT e.id) AS n
                   FROM (SELECT e.id, unnest(e.object_ids) AS object_id FROM error_candidates e WHERE e.state = 'open') e
                   JOIN scope s ON s.id = e.object_id GROUP BY s.class_id)
        SELECT c.id AS class_id, c.name AS class_name, count(*) AS objects,
               count(*) FILTER (WHERE s.source = 'human' AND s.state = 'accepted') AS human_verified,
               count(*) FILTER (WHERE s.state = 'auto_accept') AS auto_accept,
               count(*) FILTER (WHERE s.id IN (SELECT object_id FROM gold)) AS gold,
               coalesce(max(cand.n), 0) AS open_candidates
          FROM scope s JOIN ontology_classes c ON c.id = s.class_id LEFT JOIN cand ON cand.class_id = s.class_id
         GROUP BY c.id ORDER BY count(*) DESC, c.name`,
    ),
    q.rows<{ open_candidates: bigint }>(
      db,
      () => `WITH scope AS (${scope})
        SELECT count(DISTINCT e.id) AS open_candidates
          FROM (SELECT e.id, unnest(e.object_ids) AS object_id FROM error_candidates e WHERE e.state = 'open') e
          JOIN scope s ON s.id = e.object_id`,
    ),
    // The corpus sheet counts every control; a slice's, the controls of its objects.
    q.rows<{ class_name: string | null; reviewed: bigint; correct: bigint; pending: bigint }>(
      db,
      () => `SELECT k.class_name, count(*) FILTER (WHERE k.verdict IS NOT NULL) AS reviewed,
                    count(*) FILTER (WHERE k.verdict = 'correct') AS correct,
                    count(*) FILTER (WHERE k.verdict IS NULL) AS pending
               FROM control_samples k
              ${slice ? `WHERE k.object_id IN (SELECT o.id FROM ${q.from} WHERE ${q.where})` : ''}
              GROUP BY k.class_name`,
    ),
    db.evalOperation.findFirst({
      where: { opType: { in: ['iaa', 'agreement'] }, status: 'completed' },
      orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
    }),
    activeCalibration(db),
  ]);
  const controlBy = new Map(controls.map((c) => [c.class_name, c]));
  const agreement = agreementOp?.result as
    | {
        class_agreement?: unknown;
        localisation?: unknown;
        counts?: unknown;
        by_class?: Record<string, { agreement: number | null; units: number; mean_iou: number | null }>;
      }
    | undefined;
  const eceBy = calibration ? calibrationClassEce(calibration) : new Map();
  const classes = rows.map((r) => {
    const objects = Number(r.objects);
    const human = Number(r.human_verified);
    const auto = Number(r.auto_accept);
    const gold = Number(r.gold);
    const c = controlBy.get(r.class_name);
    const agreed = agreement?.by_class?.[r.class_name] ?? agreement?.by_class?.[String(r.class_id)] ?? null;
    const ece = eceBy.get(r.class_id) as { ece_before: number; ece_after: number; map: string } | undefined;
    return {
      class_id: r.class_id,
      class_name: r.class_name,
      objects,
      human_verified: { count: human, share: share(human, objects) },
      auto_accept: { count: auto, share: share(auto, objects) },
      control_precision: precisionFromCounts(
        Number(c?.reviewed ?? 0),
        Number(c?.correct ?? 0),
        Number(c?.pending ?? 0),
      ),
      gold: { objects: gold, coverage: share(gold, objects) },
      open_error_candidates: Number(r.open_candidates),
      agreement: agreed
        ? {
            operation_id: agreementOp!.id,
            agreement: agreed.agreement,
            units: agreed.units,
            mean_iou: agreed.mean_iou,
          }
        : null,
      calibration_ece: ece ? { before: ece.ece_before, after: ece.ece_after, map: ece.map } : null,
    };
  });
  const sum = (f: (c: (typeof classes)[number]) => number) => classes.reduce((a, c) => a + f(c), 0);
  const objects = sum((c) => c.objects);
  const report = calibration?.report as { before?: { ece: number }; after?: { ece: number } } | undefined;
  const allControls = controls.reduce(
    (a, c) => ({
      reviewed: a.reviewed + Number(c.reviewed),
      correct: a.correct + Number(c.correct),
      pending: a.pending + Number(c.pending),
    }),
    { reviewed: 0, correct: 0, pending: 0 },
  );
  const overallPrecision = precisionFromCounts(
    allControls.reviewed,
    allControls.correct,
    allControls.pending,
  );
  return {
    scope: slice ? { slice_id: slice.id, name: slice.name, predicate: slice.predicate } : { corpus: true },
    classes,
    totals: {
      objects,
      classes: classes.length,
      human_verified: {
        count: sum((c) => c.human_verified.count),
        share: share(
          sum((c) => c.human_verified.count),
          objects,
        ),
      },
      auto_accept: {
        count: sum((c) => c.auto_accept.count),
        share: share(
          sum((c) => c.auto_accept.count),
          objects,
        ),
      },
      control_precision: overallPrecision,
      gold: {
        objects: sum((c) => c.gold.objects),
        coverage: share(
          sum((c) => c.gold.objects),
          objects,
        ),
      },
      open_error_candidates: Number(totals[0]?.open_candidates ?? 0),
      agreement: agreementOp
        ? {
            operation_id: agreementOp.id,
            op_type: agreementOp.opType,
            at: agreementOp.createdAt.toISOString(),
            class_agreement: agreement?.class_agreement ?? null,
            localisation: agreement?.localisation ?? null,
          }
        : null,
      calibration: calibration
        ? {
            calibration_id: calibration.id,
            method: calibration.method,
            samples: calibration.nSamples,
            ece_before: report?.before?.ece ?? null,
            ece_after: report?.after?.ece ?? null,
          }
        : null,
    },
  };
}
