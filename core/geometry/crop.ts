import type { FrameSize } from './shapes';

/**
 * The region to cut for a box grown by `pad` of its size on each side: the box is in frame
 * coordinates and the region in the pixels of the stored image, which may have another size. Whole
 * pixels, inside the image, at least one pixel wide and high.
 */
export function cropRegion(box: readonly number[], pad: number, frame: FrameSize, image: FrameSize) {
  const sx = image.width / frame.width;
  const sy = image.height / frame.height;
  const [x1, y1, x2, y2] = box as [number, number, number, number];
  const px = (x2 - x1) * pad;
  const py = (y2 - y1) * pad;
  const left = Math.max(0, Math.floor((x1 - px) * sx));
  const top = Math.max(0, Math.floor((y1 - py) * sy));
  const right = Math.min(image.width, Math.ceil((x2 + px) * sx));
  const bottom = Math.min(image.height, Math.ceil((y2 + py) * sy));
  return { left, top, width: Math.max(1, right - left), height: Math.max(1, bottom - top) };
}
