import { kindOfFormat, sniffDriveFormat } from './drive-format';
import { compareFrameNames, frameContentType, unsafeEntryName } from './frame-files';
import { JpegStreamSplitter } from './jpeg-stream';
import { hammingDistance, markNearDuplicates, perceptualHash } from './phash';
import { judgeQuality, measureQuality } from './quality';
import { packRosImage } from './ros-image';
import { FrameSampler, ffmpegSelectExpression, sampleBucket } from './sampling';

/** A syntactically complete JPEG-like byte sequence: SOI, an APP0 holding FFD9, SOS with stuffed data, EOI. */
const fakeJpeg = (payload: number): Buffer =>
  Buffer.from([
    0xff,
    0xd8,
    0xff,
    0xe0,
    0x00,
    0x06,
    0xff,
    0xd9,
    0x00,
    0x00,
    0xff,
    0xda,
    0x00,
    0x02,
    payload,
    0xff,
    0x00,
    0xff,
    0xd3,
    0x12,
    0xff,
    0xd9,
  ]);

describe('JpegStreamSplitter', () => {
  it('splits concatenated images at their EOI, across arbitrary chunk boundaries, ignoring FFD9 inside segments', () => {
    const stream = Buffer.concat([fakeJpeg(1), fakeJpeg(2), fakeJpeg(3)]);
    for (const chunk of [1, 3, 7, stream.length]) {
      const splitter = new JpegStreamSplitter();
      const images: Buffer[] = [];
      for (let i = 0; i < stream.length; i += chunk)
        images.push(...splitter.push(stream.subarray(i, i + chunk)));
      expect(images.map((b) => b[14])).toEqual([1, 2, 3]);
      expect(images.every((b) => b.length === fakeJpeg(0).length)).toBe(true);
      expect(splitter.pending).toBe(false);
    }
  });
  it('reports a truncated last image and refuses a stream that is not JPEG', () => {
    const splitter = new JpegStreamSplitter();
    expect(splitter.push(Buffer.concat([fakeJpeg(1), fakeJpeg(2).subarray(0, 12)]))).toHaveLength(1);
    expect(splitter.pending).toBe(true);
    expect(() => new JpegStreamSplitter().push(Buffer.from('not a jpeg'))).toThrow(/not a sequence of JPEG/);
  });
});

describe('perceptual hash', () => {
  const gradient = (f: (x: number, y: number) => number) =>
    Uint8Array.from({ length: 1024 }, (_, i) => f(i % 32, Math.floor(i / 32)));
  it('is stable under brightness change and noise, and far apart for different scenes', () => {
    const scene = gradient((x, y) => (x * 7 + y * 3) % 256);
    const brighter = scene.map((v) => Math.min(255, v + 20));
    const noisy = scene.map((v, i) => Math.max(0, Math.min(255, v + ((i * 37) % 5) - 2)));
    const other = gradient((x, y) => ((31 - y) * 8 + x * x) % 256);
    const h = perceptualHash(scene);
    expect(h).toMatch(/^[0-9a-f]{16}$/);
    expect(hammingDistance(h, perceptualHash(brighter))).toBeLessThanOrEqual(2);
    expect(hammingDistance(h, perceptualHash(noisy))).toBeLessThanOrEqual(4);
    expect(hammingDistance(h, perceptualHash(other))).toBeGreaterThan(12);
    expect(() => perceptualHash(new Uint8Array(10))).toThrow(/32×32/);
  });
  it('marks a frame duplicate against the last kept frame, not the previous one', () => {
    // 0 kept; 1 is 3 bits from 0 (dup); 2 is 6 bits from 0 but 3 from 1: still compared with 0, so kept.
    const hashes = [
      '0000000000000000',
      '0000000000000007',
      '000000000000003f',
      '000000000000003f',
      'ffffffffffffffff',
    ];
    expect(markNearDuplicates(hashes, 4)).toEqual([false, true, false, true, false]);
    expect(markNearDuplicates(hashes, 0)).toEqual([false, false, false, true, false]);
    expect(hammingDistance('ffffffffffffffff', '0000000000000000')).toBe(64);
  });
});

describe('quality gate', () => {
  const thresholds = {
    blurMinLaplacianVariance: 60,
    exposureMinMean: 30,
    exposureMaxMean: 225,
    exposureMaxClippedFraction: 0.6,
    minWidth: 320,
    minHeight: 240,
  };
  const image = (f: (x: number, y: number) => number, w = 64, h = 48) =>
    Uint8Array.from({ length: w * h }, (_, i) => f(i % w, Math.floor(i / w)));
  const judge = (px: Uint8Array, size = { width: 640, height: 480 }) =>
    judgeQuality({ ...measureQuality(px, 64, 48), ...size }, thresholds);

  it('passes a sharp, well exposed frame and names each failure', () => {
    const checker = image((x, y) => (((x >> 2) + (y >> 2)) % 2 ? 200 : 60));
    expect(judge(checker)).toEqual([]);
    expect(judge(image(() => 128))).toEqual(['blur']);
    expect(judge(image((x, y) => ((x + y) % 2 ? 12 : 0)))).toEqual(['underexposed']);
    expect(judge(image((x, y) => (((x >> 2) + (y >> 2)) % 2 ? 255 : 230)))).toEqual(['overexposed']);
    expect(judge(checker, { width: 200, height: 100 })).toEqual(['too_small']);
    expect(judge(image(() => 0))).toEqual(['underexposed', 'blur']);
  });
  it('measures Laplacian variance and clipping', () => {
    const m = measureQuality(
      image(() => 0),
      64,
      48,
    );
    expect(m).toMatchObject({ laplacianVariance: 0, meanLuma: 0, clippedDark: 1, clippedBright: 0 });
  });
});

describe('sampling at the target rate', () => {
  it('takes the first frame of each 1/fps bucket with its own timestamp; gaps leave buckets empty', () => {
    const s = new FrameSampler(3);
    const times = [0, 33.3, 100, 333.4, 340, 666.7, 700, 2000, 2010, 2400];
    expect(times.filter((t) => s.take(t))).toEqual([0, 333.4, 666.7, 2000, 2400]);
    expect(sampleBucket(333.3333333, 3)).toBe(1);
    expect(ffmpegSelectExpression(3)).toBe(
      'isnan(prev_selected_t)+gt(floor(t*3+0.000001),floor(prev_selected_t*3+0.000001))',
    );
  });
});

describe('drive formats and frame files', () => {
  it('recognises bags and zips by their first bytes', () => {
    expect(sniffDriveFormat(Buffer.from('#ROSBAG V2.0\n\x00\x00\x00'))).toBe('ros1');
    expect(
      sniffDriveFormat(Buffer.from([0x89, 0x4d, 0x43, 0x41, 0x50, 0x30, 0x0d, 0x0a, 1, 2, 3, 4, 5, 6, 7, 8])),
    ).toBe('mcap');
    expect(sniffDriveFormat(Buffer.from('PK\x05\x06' + '\x00'.repeat(18), 'latin1'))).toBe('zip');
    expect(sniffDriveFormat(Buffer.from('\x00\x00\x00\x20ftypisom', 'latin1'))).toBe('other');
    expect(kindOfFormat('mcap')).toBe('bag');
    expect(kindOfFormat('other')).toBe('video?');
  });
  it('refuses traversal, absolute and drive-letter names; keeps frames in natural order', () => {
    expect(unsafeEntryName('../etc/passwd')).toMatch(/traversal/);
    expect(unsafeEntryName('frames/..\\..\\x.jpg')).toMatch(/traversal/);
    expect(unsafeEntryName('/abs.jpg')).toMatch(/absolute/);
    expect(unsafeEntryName('C:/x.jpg')).toMatch(/drive-letter/);
    expect(unsafeEntryName('frames/a..b.jpg')).toBeNull();
    expect(frameContentType('f/0001.JPG')).toBe('image/jpeg');
    expect(frameContentType('__MACOSX/f/._0001.jpg')).toBeNull();
    expect(frameContentType('notes.txt')).toBeNull();
    expect(['f10.jpg', 'f2.jpg', 'f1.jpg'].sort(compareFrameNames)).toEqual(['f1.jpg', 'f2.jpg', 'f10.jpg']);
  });
  it('packs ROS image encodings into RGB or grey, honouring step padding and BGR order', () => {
    const bgr = packRosImage({
      width: 2,
      height: 1,
      encoding: 'bgr8',
      is_bigendian: 0,
      step: 8,
      data: Uint8Array.from([1, 2, 3, 4, 5, 6, 9, 9]),
    });
    expect([...bgr.data]).toEqual([3, 2, 1, 6, 5, 4]);
    const mono16 = packRosImage({
      width: 1,
      height: 1,
      encoding: 'mono16',
      is_bigendian: 0,
      step: 2,
      data: Uint8Array.from([0x34, 0x12]),
    });
    expect([...mono16.data]).toEqual([0x12]);
    expect(() =>
      packRosImage({
        width: 1,
        height: 1,
        encoding: 'yuv422',
        is_bigendian: 0,
        step: 2,
        data: new Uint8Array(2),
      }),
    ).toThrow(/yuv422 is not supported/);
    expect(() =>
      packRosImage({
        width: 4,
        height: 4,
        encoding: 'rgb8',
        is_bigendian: 0,
        step: 12,
        data: new Uint8Array(10),
      }),
    ).toThrow(/do not fit/);
  });
});
