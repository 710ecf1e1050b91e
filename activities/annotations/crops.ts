import sharp from 'sharp';
import { NotFoundError } from '../../core/errors';
import { cropRegion } from '../../core/geometry';
import { drawContained } from '../../core/media/thumbnail';
import { decodeFrame, type FrameImage } from '../detect/frame-image';
import type { ObjectStore } from '../storage/object-store';
import { parseS3Uri } from './masks';

/**
 * Object crops for review grids. Crops come from the redacted frame when one exists (reviewers see
 * what exports will carry), else from the original. A frame `uri` is `s3://<bucket>/<key>`, or a
 * bare key in the frames bucket.
 */
export interface FrameRef {
  id: string;
  uri: string;
  redactedUri: string | null;
  width: number;
  height: number;
}

export async function loadFrameImage(storage: ObjectStore, frame: FrameRef): Promise<Buffer> {
  const uri = frame.redactedUri ?? frame.uri;
  const loc = parseS3Uri(uri) ?? { bucket: storage.bucket('frames'), key: uri };
  try {
    const chunks: Buffer[] = [];
    for await (const chunk of await storage.client.getObject(loc.bucket, loc.key))
      chunks.push(chunk as Buffer);
    return Buffer.concat(chunks);
  } catch (err) {
    if ((err as { code?: string }).code === 'NoSuchKey')
      throw new NotFoundError(`frame ${frame.id} has no stored image at ${uri}`);
    throw err;
  }
}

/**
 * Frames decoded for crops, kept for the next crops of the same frame: a grid asks for hundreds of
 * crops of a few frames, and decoding a 1080p JPEG costs far more than cutting a crop out of its
 * pixels. Keyed by the stored image (a new redacted copy is a new key); the least recently used
 * frames go first once their pixels pass `maxBytes`. A frame that fails to load is not kept.
 */
export function createCropFrames(storage: ObjectStore, maxBytes = 256 * 2 ** 20) {
  const entries = new Map<string, { image: Promise<FrameImage>; bytes: number }>();
  let held = 0;
  return {
    get(frame: FrameRef): Promise<FrameImage> {
      const key = frame.redactedUri ?? frame.uri;
      const hit = entries.get(key);
      if (hit) {
        entries.delete(key);
        entries.set(key, hit); // most recently used last
        return hit.image;
      }
      const image = loadFrameImage(storage, frame).then(decodeFrame);
      const entry = { image, bytes: frame.width * frame.height * 3 };
      entries.set(key, entry);
      held += entry.bytes;
      image.catch(() => {
        if (entries.get(key) === entry) {
          entries.delete(key);
          held -= entry.bytes;
        }
      });
      for (const [k, e] of entries) {
        if (held <= maxBytes || e === entry) break;
        entries.delete(k);
        held -= e.bytes;
      }
      return image;
    },
  };
}

export type CropFrames = ReturnType<typeof createCropFrames>;

/** One object's padded crop as JPEG, optionally scaled so its longer side is `size`. */
export async function cropJpeg(
  image: FrameImage,
  frame: FrameRef,
  box: readonly number[],
  pad: number,
  size: number | null,
): Promise<Buffer> {
  let pipeline = sharp(await image.pixels(), {
    raw: { width: image.width, height: image.height, channels: 3 },
  }).extract(cropRegion(box, pad, frame, image));
  if (size) pipeline = pipeline.resize(size, size, { fit: 'inside' });
  return pipeline.jpeg({ quality: 90 }).toBuffer();
}

export interface SheetCell {
  frame: FrameRef;
  box: readonly number[];
}

const GREY = { r: 128, g: 128, b: 128 };

/**
 * A crop sheet: cells of `cell`×`cell` pixels, row-major in the order given, `cols` per row
 * (0 = the smallest square grid), each crop letterboxed onto mid-grey.
 */
export async function cropSheet(
  frames: CropFrames,
  cells: readonly SheetCell[],
  opts: { cell: number; cols: number; pad: number },
): Promise<{ jpeg: Buffer; cols: number; rows: number }> {
  const cols = opts.cols > 0 ? opts.cols : Math.ceil(Math.sqrt(cells.length));
  const rows = Math.ceil(cells.length / cols);
  const { cell } = opts;
  const sheet = {
    data: Buffer.alloc(cols * cell * rows * cell * 3, GREY.r),
    width: cols * cell,
    height: rows * cell,
  };
  // Each crop is drawn straight from the decoded frame into its cell; the sheet is encoded once.
  await Promise.all(
    cells.map(async (c, i) => {
      const image = await frames.get(c.frame);
      const src = { data: await image.pixels(), width: image.width, height: image.height };
      const region = cropRegion(c.box, opts.pad, c.frame, image);
      drawContained(src, region, sheet, (i % cols) * cell, Math.floor(i / cols) * cell, cell);
    }),
  );
  const jpeg = await sharp(sheet.data, { raw: { width: sheet.width, height: sheet.height, channels: 3 } })
    .jpeg({ quality: 85 })
    .toBuffer();
  return { jpeg, cols, rows };
}
