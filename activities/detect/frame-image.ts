import sharp from 'sharp';
import { cropRegion, type Box } from '../../core/geometry';

/**
 * A frame as every path sees it: its size, and its pixels decoded only as far as a path needs
 * them. The closed-set detector wants the frame scaled to its small input, which a JPEG gives
 * straight from its bytes (shrink-on-load: libjpeg decodes at 1/2, 1/4 or 1/8 scale and sharp
 * resizes the rest), at a fraction of a full decode; the full-resolution pixels are decoded only
 * when a path that crops or re-encodes the frame runs (a configured endpoint, the box
 * classifier), once per frame.
 */
export interface FrameImage {
  readonly width: number;
  readonly height: number;
  /** The whole frame scaled to exactly `width`×`height`, packed RGB. */
  scaled(width: number, height: number): Promise<Buffer>;
  /** The full-resolution pixels, packed RGB, decoded on first use and kept. */
  pixels(): Promise<Buffer>;
}

/** The name the endpoint paths know the frame by. */
export type DecodedFrame = FrameImage;

/** Sharp's decode of the encoded frame into packed sRGB without alpha (the same for every size). */
const rgbOf = (bytes: Buffer) => sharp(bytes).removeAlpha().toColourspace('srgb');

const raw = (rgb: Buffer, width: number, height: number) =>
  sharp(rgb, { raw: { width, height, channels: 3 } });

/** A frame already in pixels (a crop, a rendered image). */
export function rgbFrame(rgb: Buffer, width: number, height: number): FrameImage {
  return {
    width,
    height,
    scaled: (w, h) => raw(rgb, width, height).resize(w, h, { fit: 'fill' }).raw().toBuffer(),
    pixels: () => Promise.resolve(rgb),
  };
}

/** An encoded frame (JPEG, PNG...): reads only its header now; the pixels come as asked. */
export async function decodeFrame(bytes: Buffer): Promise<FrameImage> {
  const meta = await sharp(bytes).metadata();
  if (!meta.width || !meta.height) throw new Error('the frame image has no size');
  const { width, height } = meta;
  let full: Promise<Buffer> | undefined;
  return {
    width,
    height,
    // Resizing from the encoded bytes lets the decoder skip most of the work (shrink-on-load).
    scaled: (w, h) => rgbOf(bytes).resize(w, h, { fit: 'fill' }).raw().toBuffer(),
    pixels: () => (full ??= rgbOf(bytes).raw().toBuffer()),
  };
}

/** The frame as a JPEG, no larger than `maxSide` (for the endpoints). */
export const frameJpeg = async (f: FrameImage, maxSide: number): Promise<Buffer> =>
  raw(await f.pixels(), f.width, f.height)
    .resize(maxSide, maxSide, { fit: 'inside', withoutEnlargement: true })
    .jpeg({ quality: 88 })
    .toBuffer();

/** A crop of the frame around a box, grown by `pad` of its size on each side, as a JPEG no larger than `maxSide`. */
export async function cropJpeg(f: FrameImage, box: Box, pad: number, maxSide: number): Promise<Buffer> {
  return raw(await f.pixels(), f.width, f.height)
    .extract(cropRegion(box, pad, f, f))
    .resize(maxSide, maxSide, { fit: 'inside', withoutEnlargement: true })
    .jpeg({ quality: 88 })
    .toBuffer();
}

/** The same crop as a frame of its own, with where it sits in the frame. */
export async function cropFrame(
  f: FrameImage,
  box: Box,
  pad: number,
): Promise<{ crop: FrameImage; left: number; top: number }> {
  const region = cropRegion(box, pad, f, f);
  const rgb = await raw(await f.pixels(), f.width, f.height)
    .extract(region)
    .raw()
    .toBuffer();
  return { crop: rgbFrame(rgb, region.width, region.height), left: region.left, top: region.top };
}
