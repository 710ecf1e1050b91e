import { NotFoundError, RefusedError } from '../../core/errors';
import type { RgbImage } from '../../core/lanes/image';
import { loadFrameImage, type FrameRef } from '../annotations/crops';
import { decodeFrame } from '../detect/frame-image';
import type { ObjectStore } from '../storage/object-store';

/**
 * A frame's stored image (the redacted copy when there is one: redaction blurs faces and plates,
 * not paint) decoded to RGB at the frame's own size, so lane points are frame pixels whatever size
 * the stored copy has. Null when the frame has no stored image.
 */
export async function frameRgbOrNull(storage: ObjectStore, frame: FrameRef): Promise<RgbImage | null> {
  let bytes: Buffer;
  try {
    bytes = await loadFrameImage(storage, frame);
  } catch (err) {
    if (err instanceof NotFoundError) return null;
    throw err;
  }
  const image = await decodeFrame(bytes);
  return { width: frame.width, height: frame.height, rgb: await image.scaled(frame.width, frame.height) };
}

/** The same, refused by name when the frame has no stored image. */
export async function frameRgb(storage: ObjectStore, frame: FrameRef, what: string): Promise<RgbImage> {
  const image = await frameRgbOrNull(storage, frame);
  if (!image)
    throw new RefusedError(
      `frame ${frame.id} has no stored image at ${frame.redactedUri ?? frame.uri}: ${what} needs its pixels`,
      {
        frame_id: frame.id,
        missing: 'image',
      },
    );
  return image;
}
