import sharp from 'sharp';
import { pixelateBlock, type PiiRegion } from '../../core/pii/regions';

/**
 * The redacted copy of a frame: every region pixelated (core/pii/regions pixelateBlock) so a face or
 * plate cannot be read back; the rest of the frame unchanged.
 */
export async function redactFrame(
  rgb: Buffer,
  width: number,
  height: number,
  regions: readonly PiiRegion[],
): Promise<Buffer> {
  const raw = { width, height, channels: 3 as const };
  const tiles = [];
  for (const r of regions) {
    const [x1, y1, x2, y2] = r.bbox;
    const w = x2 - x1;
    const h = y2 - y1;
    if (w < 1 || h < 1) continue;
    const block = pixelateBlock(r.kind, w, h);
    const small = await sharp(rgb, { raw })
      .extract({ left: x1, top: y1, width: w, height: h })
      .resize(Math.max(1, Math.ceil(w / block)), Math.max(1, Math.ceil(h / block)), { fit: 'fill' })
      .raw()
      .toBuffer({ resolveWithObject: true });
    const tile = await sharp(small.data, {
      raw: { width: small.info.width, height: small.info.height, channels: 3 },
    })
      .resize(w, h, { fit: 'fill', kernel: 'nearest' })
      .raw()
      .toBuffer();
    tiles.push({ input: tile, raw: { width: w, height: h, channels: 3 as const }, left: x1, top: y1 });
  }
  return sharp(rgb, { raw }).composite(tiles).jpeg({ quality: 90, mozjpeg: false }).toBuffer();
}
