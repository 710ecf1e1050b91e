import { sliceFrom, sliceSql, type SlicePredicate } from '../../core/curation/slice';
import {
  CONTAINMENT_TOLERANCE,
  COVERAGE_L1,
  LIST_CAP,
  emptyGateReport,
  withOutcome,
  type BlockingSession,
  type GateMode,
  type GateReport,
} from '../../core/export/gate-report';

import type { SqlQuery } from './sql';

/**
 * The export privacy gate (spec "Export privacy gate", docs/datasets.md). Over the frames a slice
 * exports it runs
 * - the legacy check: every frame has a PII audit record;
 * - the coverage check: every annotated person or vehicle on the frame (every non-rejected object
 *   of l1 `vru`, `two_wheeler` or `vehicle`, in the slice or not: the image shows them all) contains
 *   a recorded redaction region. Containment, not overlap: the region must lie inside the object's
 *   box, allowing it to stick out by a quarter of its own size on each side, which is the margin
 *   the redaction adds around a detected face (20 %) or plate (10 %). A frame without a person or
 *   vehicle is exempt.
 * `off` runs neither; `advisory` reports the gaps and lets the export go; `enforcing` refuses it.
 * Both checks are one SQL statement, so the gate answers within the request for any slice size.
 */

/**
 * The coverage check's containment rule as SQL: true when a region of `regions` (a jsonb array of
 * `{bbox: [x1, y1, x2, y2]}`) lies inside the box `bbox` (a float8[4]), sticking out by at most
 * CONTAINMENT_TOLERANCE of its own size on each side. Shared with the redaction proof.
 */
export function containedRegionSql(regions: string, bbox: string): string {
  const t = CONTAINMENT_TOLERANCE;
  return `EXISTS (SELECT 1 FROM jsonb_array_elements(${regions}) r,
      LATERAL (SELECT (r->'bbox'->>0)::float8 AS x1, (r->'bbox'->>1)::float8 AS y1,
                      (r->'bbox'->>2)::float8 AS x2, (r->'bbox'->>3)::float8 AS y2) g
      WHERE g.x1 >= ${bbox}[1] - ${t} * (g.x2 - g.x1) AND g.y1 >= ${bbox}[2] - ${t} * (g.y2 - g.y1)
        AND g.x2 <= ${bbox}[3] + ${t} * (g.x2 - g.x1) AND g.y2 <= ${bbox}[4] + ${t} * (g.y2 - g.y1))`;
}

/** One listed frame with the slice's totals and its session's counts (LEFT JOIN: nulls when no gap). */
interface GapRow {
  checked: number;
  no_audit: number;
  uncovered_total: number;
  session_id: string | null;
  session_name: string | null;
  frame_id: string | null;
  index: number | null;
  missing_audit: boolean | null;
  uncovered: string[] | null;
  session_frames: number | null;
  session_uncovered: number | null;
}

/**
 * The gate over the slice, or over the given frames of it (an export page: an advisory gate is
 * evaluated page by page while the export writes, so it costs no pass of its own).
 */
export async function evaluatePrivacyGate(
  sql: SqlQuery,
  predicate: SlicePredicate,
  mode: GateMode,
  frames?: readonly string[],
): Promise<GateReport> {
  if (mode === 'off') return emptyGateReport(mode);
  const slice = sliceSql(predicate, 4);
  // A page's frames are known (each holds slice objects): they are the selection as they are.
  const selection = frames
    ? 'SELECT unnest($3::uuid[]) AS frame_id'
    : `SELECT DISTINCT o.frame_id FROM ${sliceFrom(slice)} WHERE ${slice.where} AND $3::uuid[] IS NULL`;
  const contained = containedRegionSql('f.regions', 'o.bbox');
  // Counts come from the whole slice; the listed frames and objects are capped in SQL, so the
  // answer stays small whatever the slice holds. Each selected frame is looked up by its key
  // (`OFFSET 0` keeps the lookup from being flattened into a join, which the planner would hash
  // over every frame and audit of the table, for each export page). `gaps` is materialised:
  // inlined, each frame's uncovered objects would be evaluated twice (to filter, then to list).
  const text = `
    WITH sel AS (${selection}),
    gaps AS MATERIALIZED (
      SELECT s.frame_id, f.session_id, f.index, f.audit_id IS NULL AS missing_audit,
        COALESCE((SELECT array_agg(o.id::text ORDER BY o.id) FROM objects o
           JOIN ontology_classes c ON c.id = o.class_id
          WHERE o.frame_id = s.frame_id AND c.l1 = ANY($1::text[]) AND o.state <> 'rejected'
            AND f.audit_id IS NOT NULL AND NOT ${contained}), '{}') AS uncovered
      FROM sel s CROSS JOIN LATERAL (
        SELECT fr.session_id, fr.index, a.id AS audit_id, a.regions
          FROM frames fr LEFT JOIN pii_audits a ON a.frame_id = fr.id
         WHERE fr.id = s.frame_id OFFSET 0) f),
    bad AS (
      SELECT * FROM gaps g WHERE g.missing_audit OR cardinality(g.uncovered) > 0),
    ranked AS (
      SELECT b.*, row_number() OVER (PARTITION BY b.session_id ORDER BY b.index) AS rn,
             count(*) OVER (PARTITION BY b.session_id)::int AS session_frames,
             sum(cardinality(b.uncovered)) OVER (PARTITION BY b.session_id)::int AS session_uncovered
        FROM bad b)
    SELECT t.checked, t.no_audit, t.uncovered_total, r.session_id, se.name AS session_name, r.frame_id,
           r.index, r.missing_audit, r.uncovered[1:$2] AS uncovered, r.session_frames, r.session_uncovered
      FROM (SELECT (SELECT count(*) FROM sel)::int AS checked,
                   (SELECT count(*) FROM bad WHERE missing_audit)::int AS no_audit,
                   (SELECT COALESCE(sum(cardinality(uncovered)), 0) FROM bad)::int AS uncovered_total) t
      LEFT JOIN ranked r ON r.rn <= $2
      LEFT JOIN sessions se ON se.id = r.session_id
     ORDER BY r.session_id, r.index`;
  const rows = await sql<GapRow>(text, [
    COVERAGE_L1,
    LIST_CAP,
    frames ?? null,
    ...(frames ? [] : slice.params),
  ]);
  const totals = rows[0] ?? { checked: 0, no_audit: 0, uncovered_total: 0 };
  const bySession = new Map<string, BlockingSession>();
  for (const row of rows) {
    if (!row.session_id || !row.frame_id || row.index === null) continue;
    let session = bySession.get(row.session_id);
    if (!session) {
      session = {
        session_id: row.session_id,
        name: row.session_name ?? '',
        frames_lacking_coverage: row.session_frames ?? 0,
        uncovered_objects: row.session_uncovered ?? 0,
        frames: [],
      };
      bySession.set(row.session_id, session);
    }
    session.frames.push({
      frame_id: row.frame_id,
      index: row.index,
      missing_audit: Boolean(row.missing_audit),
      uncovered_objects: row.uncovered ?? [],
    });
  }
  return withOutcome({
    mode,
    checked_frames: totals.checked,
    frames_without_audit: totals.no_audit,
    uncovered_objects: totals.uncovered_total,
    blocking_sessions: [...bySession.values()],
  });
}
