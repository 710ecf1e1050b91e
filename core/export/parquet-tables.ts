import { parquetWriteBuffer, type BasicType, type ParquetWriteOptions } from 'hyparquet-writer';

/**
 * The two Parquet tables of an export (docs/datasets.md), written with hyparquet-writer (a
 * maintained Parquet implementation; we only choose columns). Each export page is one file
 * (`parquet/objects/part-NNNNN.parquet`), so a resumed export rewrites whole files and never
 * duplicates rows; DuckDB (`read_parquet('…/objects/*.parquet')`) and pyarrow (`dataset`) read the
 * folder as one table. Shapes that are lists or objects travel as JSON text columns.
 */

export interface ObjectRow {
  object_id: string;
  frame_id: string;
  session_id: string;
  frame_index: number;
  timestamp_ms: number;
  split: string;
  class_id: number;
  class_name: string;
  l0: string;
  l1: string;
  x1: number;
  y1: number;
  x2: number;
  y2: number;
  rot_deg: number;
  /** JSON text of the shape columns; null when the object has none. */
  rbox: string | null;
  polyline: string | null;
  mask_uri: string | null;
  mask_polygons: string | null;
  keypoints: string | null;
  cuboid_3d: string | null;
  attrs: string;
  conf: number | null;
  source: string;
  state: string;
  version: number;
  track_id: string | null;
  provenance: string | null;
}

export interface FrameRow {
  frame_id: string;
  session_id: string;
  frame_index: number;
  timestamp_ms: number;
  split: string;
  width: number;
  height: number;
  /** Path of the redacted image inside the dataset, or null when images were not included. */
  image: string | null;
  lighting: string;
  context: string;
  pii_audited: boolean;
  pii_faces: number | null;
  pii_plates: number | null;
  objects: number;
}

export type Column<R> = { name: keyof R & string; type: BasicType; nullable: boolean };

export const OBJECT_COLUMNS: Column<ObjectRow>[] = [
  { name: 'object_id', type: 'STRING', nullable: false },
  { name: 'frame_id', type: 'STRING', nullable: false },
  { name: 'session_id', type: 'STRING', nullable: false },
  { name: 'frame_index', type: 'INT32', nullable: false },
  { name: 'timestamp_ms', type: 'DOUBLE', nullable: false },
  { name: 'split', type: 'STRING', nullable: false },
  { name: 'class_id', type: 'INT32', nullable: false },
  { name: 'class_name', type: 'STRING', nullable: false },
  { name: 'l0', type: 'STRING', nullable: false },
  { name: 'l1', type: 'STRING', nullable: false },
  { name: 'x1', type: 'DOUBLE', nullable: false },
  { name: 'y1', type: 'DOUBLE', nullable: false },
  { name: 'x2', type: 'DOUBLE', nullable: false },
  { name: 'y2', type: 'DOUBLE', nullable: false },
  { name: 'rot_deg', type: 'DOUBLE', nullable: false },
  { name: 'rbox', type: 'STRING', nullable: true },
  { name: 'polyline', type: 'STRING', nullable: true },
  { name: 'mask_uri', type: 'STRING', nullable: true },
  { name: 'mask_polygons', type: 'STRING', nullable: true },
  { name: 'keypoints', type: 'STRING', nullable: true },
  { name: 'cuboid_3d', type: 'STRING', nullable: true },
  { name: 'attrs', type: 'STRING', nullable: false },
  { name: 'conf', type: 'DOUBLE', nullable: true },
  { name: 'source', type: 'STRING', nullable: false },
  { name: 'state', type: 'STRING', nullable: false },
  { name: 'version', type: 'INT32', nullable: false },
  { name: 'track_id', type: 'STRING', nullable: true },
  { name: 'provenance', type: 'STRING', nullable: true },
];

export const FRAME_COLUMNS: Column<FrameRow>[] = [
  { name: 'frame_id', type: 'STRING', nullable: false },
  { name: 'session_id', type: 'STRING', nullable: false },
  { name: 'frame_index', type: 'INT32', nullable: false },
  { name: 'timestamp_ms', type: 'DOUBLE', nullable: false },
  { name: 'split', type: 'STRING', nullable: false },
  { name: 'width', type: 'INT32', nullable: false },
  { name: 'height', type: 'INT32', nullable: false },
  { name: 'image', type: 'STRING', nullable: true },
  { name: 'lighting', type: 'STRING', nullable: false },
  { name: 'context', type: 'STRING', nullable: false },
  { name: 'pii_audited', type: 'BOOLEAN', nullable: false },
  { name: 'pii_faces', type: 'INT32', nullable: true },
  { name: 'pii_plates', type: 'INT32', nullable: true },
  { name: 'objects', type: 'INT32', nullable: false },
];

/**
 * A table's rows column by column, as the Parquet writer takes them: an export fills these
 * directly, with no object per row. Numbers that are never null sit in typed arrays, which reach
 * the encoding thread (activities/export/parquet-thread.ts) as moved memory rather than copies.
 */
export type TableColumns<R> = { [K in keyof R]: { [row: number]: R[K] } };

/** A table of `rows` rows, every value still to be filled in. */
export function emptyTable<R>(columns: readonly Column<R>[], rows: number): TableColumns<R> {
  const table = {} as Record<string, unknown>;
  for (const c of columns)
    table[c.name] =
      c.nullable || (c.type !== 'DOUBLE' && c.type !== 'INT32')
        ? new Array<unknown>(rows)
        : c.type === 'DOUBLE'
          ? new Float64Array(rows)
          : new Int32Array(rows);
  return table as TableColumns<R>;
}

/** What the Parquet writer takes for one file of the table: one row group. */
export type ParquetPartInput = Pick<ParquetWriteOptions, 'columnData' | 'rowGroupSize'>;

export function parquetPartInput<R>(
  columns: readonly Column<R>[],
  table: TableColumns<R>,
  rows: number,
): ParquetPartInput {
  return {
    columnData: columns.map((c) => ({
      name: c.name,
      type: c.type,
      nullable: c.nullable,
      data: table[c.name] as never,
    })),
    rowGroupSize: Math.max(1, rows),
  };
}

/** One Parquet file of `rows` (one row group), in memory: a page is bounded, so the buffer is too. */
export function parquetPart<R extends object>(columns: readonly Column<R>[], rows: readonly R[]): Buffer {
  const table = emptyTable(columns, rows.length);
  for (const c of columns) {
    const values = table[c.name] as unknown[];
    rows.forEach((r, i) => (values[i] = r[c.name] ?? null));
  }
  return Buffer.from(parquetWriteBuffer(parquetPartInput(columns, table, rows.length)));
}

export const partName = (table: 'objects' | 'frames', page: number): string =>
  `parquet/${table}/part-${String(page).padStart(5, '0')}.parquet`;
