import {
  LIGHTING_SQL,
  sliceFrom,
  sliceObjectFrom,
  sliceSql,
  type SlicePredicate,
} from '../../core/curation/slice';
import type { SqlQuery } from './sql';

/**
 * Reading a slice page by page for export: a page is up to `frames` frames (in frame-id order,
 * after the cursor) with every object of the slice on them, in one statement. Keyset paging on
 * the frame id keeps every page as cheap as the first, and a resumed export continues exactly
 * after the last page it wrote.
 */

/** A frame of an export page, with the slice's objects on it (in object id order). */
export interface ExportFrame {
  frame_id: string;
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
  objects: ExportObject[];
}

export interface ExportObject {
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
}

export async function readExportPage(
  sql: SqlQuery,
  predicate: SlicePredicate,
  after: string | null,
  frames: number,
): Promise<ExportFrame[]> {
  const slice = sliceSql(predicate, 3);
  // The page's frames first, with what the export says of each frame once: walking the frames'
  // primary key from the cursor and probing each frame's objects by index costs what the page
  // costs, where a DISTINCT over the objects would scan everything after the cursor every page.
  const page = await sql<Omit<ExportFrame, 'objects'>>(
    `SELECT f.id AS frame_id, f.session_id, f.index, f.timestamp_ms, f.width, f.height, f.redacted_uri,
            f.context, ${LIGHTING_SQL} AS lighting, a.id IS NOT NULL AS pii_audited, a.n_faces, a.n_plates
       FROM frames f LEFT JOIN pii_audits a ON a.frame_id = f.id
      WHERE ($1::uuid IS NULL OR f.id > $1::uuid)
        AND EXISTS (SELECT 1 FROM ${sliceObjectFrom(slice)} WHERE o.frame_id = f.id AND ${slice.where})
      ORDER BY f.id LIMIT $2`,
    [after, frames, ...slice.params],
  );
  if (!page.length) return [];
  // The page is a run of consecutive frame ids, so its objects are one range of the (frame_id, id)
  // index; a list of ids (`= ANY`) lets the planner pick a scan of the whole table on every page.
  const objectSlice = sliceSql(predicate, 3);
  const objects = await sql<ExportObject>(
    `SELECT o.id, o.frame_id, o.bbox, o.rot_deg, o.rbox, o.class_id, c.name AS class_name, c.l0, c.l1,
            o.conf, o.attrs, o.mask_uri, o.polyline, o.cuboid_3d, o.keypoints, o.source, o.state,
            o.version, o.track_id,
            (SELECT json_build_object('paths', p.paths, 'raw_confidences', p.raw_confidences,
                    'agreement', p.agreement, 'entropy', p.entropy, 'quality_flags', p.quality_flags)
               FROM provenance p WHERE p.object_id = o.id ORDER BY p.created_at DESC LIMIT 1) AS provenance
       FROM ${sliceFrom(objectSlice)}
      WHERE o.frame_id BETWEEN $1::uuid AND $2::uuid AND ${objectSlice.where}
      ORDER BY o.frame_id, o.id`,
    [page[0]!.frame_id, page[page.length - 1]!.frame_id, ...objectSlice.params],
  );
  const byFrame = new Map<string, ExportObject[]>();
  for (const o of objects) {
    const list = byFrame.get(o.frame_id);
    if (list) list.push(o);
    else byFrame.set(o.frame_id, [o]);
  }
  return page.map((f) => ({ ...f, objects: byFrame.get(f.frame_id) ?? [] }));
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
  // One pass over the slice for every total and the classes present.
  const [totals] = await sql<{
    frames: number;
    objects: number;
    sessions: number;
    class_ids: number[] | null;
  }>(
    `SELECT count(DISTINCT o.frame_id)::int AS frames, count(*)::int AS objects,
            count(DISTINCT f.session_id)::int AS sessions, array_agg(DISTINCT o.class_id) AS class_ids
       FROM ${from} WHERE ${slice.where}`,
    slice.params,
  );
  const classes = await sql<{ id: number; name: string; l0: string; l1: string }>(
    `SELECT id, name, l0, l1 FROM ontology_classes WHERE id = ANY($1::int[]) ORDER BY id`,
    [totals?.class_ids ?? []],
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
