import sharp from 'sharp';

/** A frame decoded once per auto-label step and shared by every path: packed RGB. */
export interface DecodedFrame {
  rgb: Buffer;
  width: number;
  height: number;
}

export async function decodeFrame(bytes: Buffer): Promise<DecodedFrame> {
  const { data, info } = await sharp(bytes).removeAlpha().toColourspace('srgb').raw().toBuffer({ resolveWithObject: true });
  return { rgb: data, width: info.width, height: info.height };
}

const raw = (f: DecodedFrame) => sharp(f.rgb, { raw: { width: f.width, height: f.height, channels: 3 } });

export const resizeRgb = (f: DecodedFrame, width: number, height: number): Promise<Buffer> => raw(f).resize(width, height, { fit: 'fill' }).raw().toBuffer();

/** The frame as a JPEG, no larger than `maxSide` (for the endpoints). */
export const frameJpeg = (f: DecodedFrame, maxSide: number): Promise<Buffer> =>
  raw(f).resize(maxSide, maxSide, { fit: 'inside', withoutEnlargement: true }).jpeg({ quality: 88 }).toBuffer();

type PixelBox = { x1: number; y1: number; x2: number; y2: number };

/** The pixel region around a box, grown by `pad` of its size on each side, inside the frame. */
function paddedRegion(f: DecodedFrame, box: PixelBox, pad: number) {
  const dx = (box.x2 - box.x1) * pad;
  const dy = (box.y2 - box.y1) * pad;
  const left = Math.max(0, Math.floor(box.x1 - dx));
  const top = Math.max(0, Math.floor(box.y1 - dy));
  const width = Math.max(1, Math.min(f.width, Math.ceil(box.x2 + dx)) - left);
  const height = Math.max(1, Math.min(f.height, Math.ceil(box.y2 + dy)) - top);
  return { left, top, width, height };
}

/** A crop of the frame around a box, grown by `pad` of its size on each side, as a JPEG no larger than `maxSide`. */
export function cropJpeg(f: DecodedFrame, box: PixelBox, pad: number, maxSide: number): Promise<Buffer> {
  return raw(f).extract(paddedRegion(f, box, pad)).resize(maxSide, maxSide, { fit: 'inside', withoutEnlargement: true }).jpeg({ quality: 88 }).toBuffer();
}

/** The same crop as decoded pixels, with where it sits in the frame. */
export async function cropFrame(f: DecodedFrame, box: PixelBox, pad: number): Promise<{ crop: DecodedFrame; left: number; top: number }> {
  const region = paddedRegion(f, box, pad);
  const rgb = await raw(f).extract(region).raw().toBuffer();
  return { crop: { rgb, width: region.width, height: region.height }, left: region.left, top: region.top };
}
