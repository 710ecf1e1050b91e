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

/**
 * An object of an export page. A page holds tens of thousands of them, so the columns are read as
 * they are cheapest to decode: the box as four numbers rather than an array, and an empty rotated
 * box or attribute set as null rather than a value to parse.
 */
export interface ExportObject {
  id: string;
  /** The box, [x1, y1, x2, y2] in pixels. */
  x1: number;
  y1: number;
  x2: number;
  y2: number;
  rot_deg: number;
  /** The box before rotation; null for an axis-aligned box (stored empty). */
  rbox: number[] | null;
  class_id: number;
  class_name: string;
  l0: string;
  l1: string;
  conf: number | null;
  /** Null when the object has none (stored `{}`). */
  attrs: Record<string, unknown> | null;
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

const NIL_UUID = '00000000-0000-0000-0000-000000000000';

/** A frame of an export page before its objects are read. */
export type PageFrame = Omit<ExportFrame, 'objects'>;

/** The frames of the next page: up to `frames` frames after the cursor that hold slice objects. */
export async function readPageFrames(
  sql: SqlQuery,
  predicate: SlicePredicate,
  after: string | null,
  frames: number,
): Promise<PageFrame[]> {
  const slice = sliceSql(predicate, 3);
  // The page's frames first, with what the export says of each frame once: walking the frames'
  // primary key from the cursor and probing each frame's objects by index costs what the page
  // costs, where a DISTINCT over the objects would scan everything after the cursor every page.
  // "After the cursor" is written as a range start (`>=` the cursor, or the smallest uuid) and
  // given to the audits too: the planner carries no inequality across a join, and without it the
  // audits were merged from their first row on every page, so the last pages read them all.
  return sql<PageFrame>(
    `SELECT f.id AS frame_id, f.session_id, f.index, f.timestamp_ms, f.width, f.height, f.redacted_uri,
            f.context, ${LIGHTING_SQL} AS lighting, a.id IS NOT NULL AS pii_audited, a.n_faces, a.n_plates
       FROM frames f
       LEFT JOIN pii_audits a ON a.frame_id = f.id AND a.frame_id >= COALESCE($1::uuid, '${NIL_UUID}')
      WHERE f.id >= COALESCE($1::uuid, '${NIL_UUID}') AND f.id IS DISTINCT FROM $1::uuid
        AND EXISTS (SELECT 1 FROM ${sliceObjectFrom(slice)} WHERE o.frame_id = f.id AND ${slice.where})
      ORDER BY f.id LIMIT $2`,
    [after, frames, ...slice.params],
  );
}

/** An ontology class as an export names it. */
export interface ExportClass {
  name: string;
  l0: string;
  l1: string;
}

/** The ontology's classes by id. */
export async function readClasses(sql: SqlQuery): Promise<Map<number, ExportClass>> {
  const rows = await sql<ExportClass & { id: number }>('SELECT id, name, l0, l1 FROM ontology_classes', []);
  return new Map(rows.map(({ id, ...c }) => [id, c]));
}

/**
 * The page's frames with the slice's objects on them, read in one statement. Decoding the rows is
 * most of what a page costs the worker, so a row carries no more text than it must: its class's
 * names come from `classes` (read again if the ontology gained a class since), and its frame id
 * only on the first object of each frame.
 */
export async function withPageObjects(
  sql: SqlQuery,
  predicate: SlicePredicate,
  page: readonly PageFrame[],
  classes: Map<number, ExportClass>,
): Promise<ExportFrame[]> {
  if (!page.length) return [];
  // The page is a run of consecutive frame ids, so its objects are one range of the (frame_id, id)
  // index; a list of ids (`= ANY`) lets the planner pick a scan of the whole table on every page.
  // The frames joined are the same range, or every frame would be hashed for every page.
  const objectSlice = sliceSql(predicate, 3);
  const rows = await sql<Omit<ExportObject, 'class_name' | 'l0' | 'l1'> & { first_of_frame: string | null }>(
    `SELECT o.id,
            CASE WHEN o.frame_id IS DISTINCT FROM lag(o.frame_id) OVER (ORDER BY o.frame_id, o.id)
                 THEN o.frame_id END AS first_of_frame,
            o.bbox[1] AS x1, o.bbox[2] AS y1, o.bbox[3] AS x2, o.bbox[4] AS y2, o.rot_deg,
            NULLIF(o.rbox, '{}') AS rbox, o.class_id, o.conf, NULLIF(o.attrs, '{}') AS attrs, o.mask_uri,
            o.polyline, o.cuboid_3d, o.keypoints, o.source, o.state, o.version, o.track_id,
            (SELECT json_build_object('paths', p.paths, 'raw_confidences', p.raw_confidences,
                    'agreement', p.agreement, 'entropy', p.entropy, 'quality_flags', p.quality_flags)
               FROM provenance p WHERE p.object_id = o.id ORDER BY p.created_at DESC LIMIT 1) AS provenance
       FROM ${sliceFrom(objectSlice)}
      WHERE o.frame_id BETWEEN $1::uuid AND $2::uuid AND f.id BETWEEN $1::uuid AND $2::uuid
        AND ${objectSlice.where}
      ORDER BY o.frame_id, o.id`,
    [page[0]!.frame_id, page[page.length - 1]!.frame_id, ...objectSlice.params],
  );
  if (rows.some((r) => !classes.has(r.class_id)))
    for (const [id, c] of await readClasses(sql)) classes.set(id, c);
  const frames = page.map((f): ExportFrame => ({ ...f, objects: [] }));
  const byId = new Map(frames.map((f) => [f.frame_id, f]));
  // An object of a frame the page does not hold (one that gained its first slice object since the
  // page's frames were read) is left for no page, as a row of a frame after the page would be.
  // Each object is made afresh in one literal shape, rather than given its class's names on the
  // driver's row: properties added to rows made by the driver cost V8 its fast property access on
  // them, and every later step of the page reads these objects many times over.
  let frame: ExportFrame | undefined;
  for (const r of rows) {
    if (r.first_of_frame !== null) frame = byId.get(r.first_of_frame);
    const c = classes.get(r.class_id)!;
    frame?.objects.push({
      id: r.id,
      x1: r.x1,
      y1: r.y1,
      x2: r.x2,
      y2: r.y2,
      rot_deg: r.rot_deg,
      rbox: r.rbox,
      class_id: r.class_id,
      class_name: c.name,
      l0: c.l0,
      l1: c.l1,
      conf: r.conf,
      attrs: r.attrs,
      mask_uri: r.mask_uri,
      polyline: r.polyline,
      cuboid_3d: r.cuboid_3d,
      keypoints: r.keypoints,
      source: r.source,
      state: r.state,
      version: r.version,
      track_id: r.track_id,
      provenance: r.provenance,
    });
  }
  return frames;
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
