import sharp from 'sharp';
import { NotFoundError } from '../../core/errors';
import { cropRegion } from '../../core/geometry';
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

/** One object's padded crop as JPEG, optionally scaled so its longer side is `size`. */
export async function cropJpeg(
  image: Buffer,
  frame: FrameRef,
  box: readonly number[],
  pad: number,
  size: number | null,
): Promise<Buffer> {
  const meta = await sharp(image).metadata();
  const region = cropRegion(box, pad, frame, { width: meta.width!, height: meta.height! });
  let pipeline = sharp(image).extract(region);
  if (size) pipeline = pipeline.resize(size, size, { fit: 'inside' });
  return pipeline.jpeg({ quality: 90 }).toBuffer();
}

export interface SheetCell {
  frame: FrameRef;
  box: readonly number[];
}

/**
 * A crop sheet: cells of `cell`×`cell` pixels, row-major in the order given, `cols` per row
 * (0 = the smallest square grid), each crop letterboxed onto mid-grey.
 */
export async function cropSheet(
  storage: ObjectStore,
  cells: readonly SheetCell[],
  opts: { cell: number; cols: number; pad: number },
): Promise<{ jpeg: Buffer; cols: number; rows: number }> {
  const cols = opts.cols > 0 ? opts.cols : Math.ceil(Math.sqrt(cells.length));
  const rows = Math.ceil(cells.length / cols);
  const images = new Map<string, Promise<Buffer>>();
  const tiles = await Promise.all(
    cells.map(async (c, i) => {
      if (!images.has(c.frame.id)) images.set(c.frame.id, loadFrameImage(storage, c.frame));
      const crop = await cropJpeg(await images.get(c.frame.id)!, c.frame, c.box, opts.pad, null);
      const input = await sharp(crop)
        .resize(opts.cell, opts.cell, { fit: 'contain', background: { r: 128, g: 128, b: 128 } })
        .toBuffer();
      return { input, left: (i % cols) * opts.cell, top: Math.floor(i / cols) * opts.cell };
    }),
  );
  const jpeg = await sharp({
    create: {
      width: cols * opts.cell,
      height: rows * opts.cell,
      channels: 3,
      background: { r: 128, g: 128, b: 128 },
    },
  })
    .composite(tiles)
    .jpeg({ quality: 85 })
    .toBuffer();
  return { jpeg, cols, rows };
}
