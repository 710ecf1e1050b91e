import sharp from 'sharp';
import { DriveRefusedError } from '../../core/media/errors';
import { PHASH_SIDE, perceptualHash } from '../../core/media/phash';
import { QUALITY_WIDTH, measureQuality, type QualityMetrics } from '../../core/media/quality';

export interface FrameAnalysis {
  width: number;
  height: number;
  phash: string;
  metrics: QualityMetrics;
}

/**
 * Measures one extracted frame for the gate and the duplicate check. The grey copy is decoded
 * straight at about QUALITY_WIDTH (JPEG shrink-on-load), so a 1080p frame costs little.
 */
export async function analyseFrame(bytes: Buffer, seq: number): Promise<FrameAnalysis> {
  try {
    const { width, height } = await sharp(bytes).metadata();
    if (!width || !height) throw new Error('no dimensions');
    const grey = await sharp(bytes)
      .removeAlpha()
      .resize({ width: QUALITY_WIDTH })
      .toColourspace('b-w')
      .raw()
      .toBuffer({ resolveWithObject: true });
    const tiny = await sharp(grey.data, {
      raw: { width: grey.info.width, height: grey.info.height, channels: 1 },
    })
      .resize(PHASH_SIDE, PHASH_SIDE, { fit: 'fill' })
      .toColourspace('b-w')
      .raw()
      .toBuffer();
    return {
      width,
      height,
      phash: perceptualHash(tiny),
      metrics: measureQuality(grey.data, grey.info.width, grey.info.height),
    };
  } catch (err) {
    throw new DriveRefusedError(
      `frame ${seq} of the drive is not a readable image: ${(err as Error).message}`,
    );
  }
}
