import { LIGHTING_SQL, sliceFrom, sliceSql, type SlicePredicate } from '../../core/curation/slice';
import type { SqlQuery } from './sql';

/**
 * Reading a slice page by page for export: a page is up to `frames` frames (in frame-id order,
 * after the cursor) with every object of the slice on them, in one statement. Keyset paging on
 * the frame id keeps every page as cheap as the first, and a resumed export continues exactly
 * after the last page it wrote.
 */

export interface ExportObjectRow {
  id: string;
  frame_id: string;
  bbox: number[];
  rot_deg: number;
  rbox: number[];
  class_id: number;
  class_name: string;
  l0: string;
  l1: string;
  conf: number | null;
  attrs: Record<string, unknown>;
  mask_uri: string | null;
  polyline: unknown;
  cuboid_3d: unknown;
  keypoints: unknown;
  source: string;
  state: string;
  version: number;
  track_id: string | null;
  provenance: Record<string, unknown> | null;
  session_id: string;
  index: number;
  timestamp_ms: number;
  width: number;
  height: number;
  redacted_uri: string | null;
  context: Record<string, unknown>;
  lighting: string;
  pii_audited: boolean;
  n_faces: number | null;
  n_plates: number | null;
}

export async function readExportPage(
  sql: SqlQuery,
  predicate: SlicePredicate,
  after: string | null,
  frames: number,
): Promise<ExportObjectRow[]> {
  const slice = sliceSql(predicate, 3);
  const from = sliceFrom(slice);
  return sql<ExportObjectRow>(
    `SELECT o.id, o.frame_id, o.bbox, o.rot_deg, o.rbox, o.class_id, c.name AS class_name, c.l0, c.l1,
            o.conf, o.attrs, o.mask_uri, o.polyline, o.cuboid_3d, o.keypoints, o.source, o.state,
            o.version, o.track_id,
            (SELECT json_build_object('paths', p.paths, 'raw_confidences', p.raw_confidences,
                    'agreement', p.agreement, 'entropy', p.entropy, 'quality_flags', p.quality_flags)
               FROM provenance p WHERE p.object_id = o.id ORDER BY p.created_at DESC LIMIT 1) AS provenance,
            f.session_id, f.index, f.timestamp_ms, f.width, f.height, f.redacted_uri, f.context,
            ${LIGHTING_SQL} AS lighting,
            a.id IS NOT NULL AS pii_audited, a.n_faces, a.n_plates
       FROM ${from} LEFT JOIN pii_audits a ON a.frame_id = f.id
      WHERE ${slice.where}
        AND o.frame_id IN (SELECT DISTINCT o.frame_id FROM ${from}
                            WHERE ${slice.where} AND ($1::uuid IS NULL OR o.frame_id > $1::uuid)
                            ORDER BY o.frame_id LIMIT $2)
      ORDER BY o.frame_id, o.id`,
    [after, frames, ...slice.params],
  );
}

/** Frames and objects of the slice, for progress, and the classes present (the export's vocabulary). */
export async function sliceTotals(
  sql: SqlQuery,
  predicate: SlicePredicate,
): Promise<{
  frames: number;
  objects: number;
  sessions: number;
  classes: Array<{ id: number; name: string; l0: string; l1: string }>;
}> {
  const slice = sliceSql(predicate, 1);
  const from = sliceFrom(slice);
  const [totals] = await sql<{ frames: number; objects: number; sessions: number }>(
    `SELECT count(DISTINCT o.frame_id)::int AS frames, count(*)::int AS objects,
            count(DISTINCT f.session_id)::int AS sessions
       FROM ${from} WHERE ${slice.where}`,
    slice.params,
  );
  const classes = await sql<{ id: number; name: string; l0: string; l1: string }>(
    `SELECT id, name, l0, l1 FROM ontology_classes
      WHERE id IN (SELECT DISTINCT o.class_id FROM ${from} WHERE ${slice.where}) ORDER BY id`,
    slice.params,
  );
  return {
    frames: totals?.frames ?? 0,
    objects: totals?.objects ?? 0,
    sessions: totals?.sessions ?? 0,
    classes,
  };
}

export async function sliceIsEmpty(sql: SqlQuery, predicate: SlicePredicate): Promise<boolean> {
  const slice = sliceSql(predicate, 1);
  const rows = await sql<{ one: number }>(
    `SELECT 1 AS one FROM ${sliceFrom(slice)} WHERE ${slice.where} LIMIT 1`,
    slice.params,
  );
  return rows.length === 0;
}
