import { HEAD_BYTES, judgeObject } from './preview';

const head = (bytes: number[] | string, pad = HEAD_BYTES) => {
  const b = Buffer.alloc(pad);
  (typeof bytes === 'string' ? Buffer.from(bytes, 'latin1') : Buffer.from(bytes)).copy(b);
  return b;
};

describe('judgeObject', () => {
  it('takes bags and zips as the ingest sniffs them, whatever their names', () => {
    expect(judgeObject('drive.dat', 900, head('#ROSBAG V2.0\n'))).toEqual({
      ingest_kind: 'bag',
      format: 'ROS 1 bag',
    });
    expect(judgeObject('d', 900, head([0x89, 0x4d, 0x43, 0x41, 0x50, 0x30, 0x0d, 0x0a]))).toEqual({
      ingest_kind: 'bag',
      format: 'MCAP',
    });
    expect(judgeObject('frames.bin', 900, head('PK\x03\x04'))).toEqual({
      ingest_kind: 'frames',
      format: 'zip (of frames)',
    });
  });

  it('takes frame images by name, as a folder of frames is listed', () => {
    expect(judgeObject('run1/0001.JPG', 900, head([0xff, 0xd8, 0xff]))).toEqual({
      ingest_kind: 'frames',
      format: 'image/jpeg',
    });
    expect(judgeObject('run1/.hidden.png', 900, head([0x89, 0x50]))).toEqual({
      ingest_kind: null,
      format: null,
    });
  });

  it('recognises video containers by signature', () => {
    expect(judgeObject('a', 900, head('\x00\x00\x00\x20ftypisom')).format).toBe('mp4/mov (ISO BMFF)');
    expect(judgeObject('a', 900, head([0x1a, 0x45, 0xdf, 0xa3]))).toEqual({
      ingest_kind: 'video',
      format: 'matroska/webm',
    });
    expect(judgeObject('a', 900, head('RIFF\x00\x00\x00\x00AVI LIST')).format).toBe('avi');
    const ts = head([0x47]);
    ts[188] = 0x47;
    expect(judgeObject('a.ts', 900, ts).format).toBe('mpeg-ts');
    // One sync byte is a letter G, not a transport stream.
    expect(judgeObject('notes.txt', 900, head('Good morning')).ingest_kind).toBeNull();
  });

  it('refuses empty objects and anything unrecognised', () => {
    expect(judgeObject('x.mp4', 0, Buffer.alloc(0))).toEqual({ ingest_kind: null, format: 'empty' });
    expect(judgeObject('readme.md', 12, head('# a readme', 12))).toEqual({ ingest_kind: null, format: null });
  });
});
