import {
  OBJECT_COLUMNS,
  emptyTable,
  parquetPart,
  type ObjectRow,
  type TableColumns,
} from '../../core/export/parquet-tables';
import { createParquetEncoder } from './parquet-thread';

const object = (i: number): ObjectRow => ({
  object_id: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
  frame_id: `frame-${Math.floor(i / 4)}`,
  session_id: 'session-1',
  frame_index: Math.floor(i / 4),
  timestamp_ms: Math.floor(i / 4) * 33.3,
  split: i % 5 ? 'train' : 'val',
  class_id: 1 + (i % 3),
  class_name: ['car', 'pedestrian', 'traffic_light'][i % 3]!,
  l0: 'dynamic',
  l1: ['vehicle', 'vru', 'infrastructure'][i % 3]!,
  x1: i + 0.5,
  y1: 10,
  x2: i + 20.25,
  y2: 40,
  rot_deg: 0,
  rbox: i % 7 ? null : '[1,2,3,4]',
  polyline: null,
  mask_uri: i % 6 ? null : `masks/${i}.json`,
  mask_polygons: i % 6 ? null : '[[0,0,5,0,5,5]]',
  keypoints: null,
  cuboid_3d: null,
  // Repeated, empty, accented and astral (surrogate pair) text: what string packing must keep.
  attrs: ['{}', '{"note":"rüde Kurve"}', '{"emoji":"🚗"}', '{"x":"\uffff\ue000"}'][i % 4]!,
  conf: i % 9 ? 0.5 + (i % 5) / 10 : null,
  source: i % 2 ? 'auto_accept' : 'human',
  state: i % 2 ? 'auto_accept' : 'accepted',
  version: 1,
  track_id: i % 8 ? null : '',
  provenance: null,
});

function tableOf(rows: readonly ObjectRow[]): TableColumns<ObjectRow> {
  const table = emptyTable(OBJECT_COLUMNS, rows.length);
  for (const c of OBJECT_COLUMNS) {
    const column = table[c.name] as Record<number, unknown>;
    rows.forEach((r, i) => (column[i] = r[c.name]));
  }
  return table;
}

describe('Parquet encoding on its own thread', () => {
  const encoder = createParquetEncoder();

  it('writes the very bytes the writer writes on the calling thread', async () => {
    const rows = Array.from({ length: 500 }, (_, i) => object(i));
    const onThread = await encoder.encode(OBJECT_COLUMNS, tableOf(rows), rows.length);
    expect(onThread.equals(parquetPart(OBJECT_COLUMNS, rows))).toBe(true);
  });

  it('encodes pages handed over at once, each to its own file', async () => {
    const pages = [10, 0, 3].map((n, p) => Array.from({ length: n }, (_, i) => object(p * 100 + i)));
    const files = await Promise.all(
      pages.map((rows) => encoder.encode(OBJECT_COLUMNS, tableOf(rows), rows.length)),
    );
    files.forEach((file, p) => expect(file.equals(parquetPart(OBJECT_COLUMNS, pages[p]!))).toBe(true));
  });

  it('fails the page whose rows break the schema, and goes on encoding the next', async () => {
    const broken = tableOf([object(1)]);
    (broken.state as Record<number, unknown>)[0] = null;
    await expect(encoder.encode(OBJECT_COLUMNS, broken, 1)).rejects.toThrow(/Parquet encoding failed/);
    const rows = [object(2)];
    const file = await encoder.encode(OBJECT_COLUMNS, tableOf(rows), 1);
    expect(file.equals(parquetPart(OBJECT_COLUMNS, rows))).toBe(true);
  });
});
