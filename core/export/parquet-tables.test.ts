import { parquetReadObjects } from 'hyparquet';
import { FRAME_COLUMNS, emptyTable, parquetPart, type FrameRow } from './parquet-tables';

const frame = (i: number, over: Partial<FrameRow> = {}): FrameRow => ({
  frame_id: `f-${i}`,
  session_id: i < 2 ? 's-1' : 's-2',
  frame_index: i,
  timestamp_ms: i * 33.3,
  split: 'train',
  width: 1920,
  height: 1080,
  image: `images/train/f-${i}.jpg`,
  lighting: 'normal',
  context: '{}',
  pii_audited: true,
  pii_faces: 1,
  pii_plates: 0,
  objects: 3,
  ...over,
});

const readBack = async (bytes: Buffer) =>
  parquetReadObjects({
    file: bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer,
  });

describe('the export tables, column by column', () => {
  it('keeps numbers that are never null in typed arrays and everything else in arrays', () => {
    const table = emptyTable(FRAME_COLUMNS, 3);
    expect(table.timestamp_ms).toBeInstanceOf(Float64Array);
    expect(table.width).toBeInstanceOf(Int32Array);
    expect(table.objects).toBeInstanceOf(Int32Array);
    // Nullable numbers keep their nulls; booleans and strings are plain values.
    expect(table.pii_faces).toBeInstanceOf(Array);
    expect(table.pii_audited).toBeInstanceOf(Array);
    expect(table.frame_id).toBeInstanceOf(Array);
    expect((table.frame_id as unknown[]).length).toBe(3);
  });

  it('writes a part that reads back as the rows it was given, nulls and non-ASCII text included', async () => {
    const rows = [
      frame(0),
      frame(1, { image: null, pii_audited: false, pii_faces: null, pii_plates: null, lighting: 'dark' }),
      frame(2, { context: JSON.stringify({ weather: 'brouillard 🌫', note: '' }), timestamp_ms: 0.1 + 0.2 }),
    ];
    expect(await readBack(parquetPart(FRAME_COLUMNS, rows))).toEqual(rows);
  });

  it('writes an empty part that reads back as no rows', async () => {
    expect(await readBack(parquetPart(FRAME_COLUMNS, []))).toEqual([]);
  });
});
