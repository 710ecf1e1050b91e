/**
 * sensor_msgs/Image pixel layouts turned into what an image encoder takes (8-bit grey, RGB or RGBA,
 * tightly packed). Encodings outside this list are refused by name.
 */
export interface RosRawImage {
  width: number;
  height: number;
  encoding: string;
  is_bigendian: number;
  step: number;
  data: Uint8Array;
}

export interface PackedImage {
  width: number;
  height: number;
  channels: 1 | 3 | 4;
  data: Buffer;
}

const LAYOUTS: Record<string, { channels: 1 | 3 | 4; bytes: 1 | 2; swapRB: boolean }> = {
  mono8: { channels: 1, bytes: 1, swapRB: false },
  '8UC1': { channels: 1, bytes: 1, swapRB: false },
  mono16: { channels: 1, bytes: 2, swapRB: false },
  '16UC1': { channels: 1, bytes: 2, swapRB: false },
  rgb8: { channels: 3, bytes: 1, swapRB: false },
  '8UC3': { channels: 3, bytes: 1, swapRB: true },
  bgr8: { channels: 3, bytes: 1, swapRB: true },
  rgba8: { channels: 4, bytes: 1, swapRB: false },
  bgra8: { channels: 4, bytes: 1, swapRB: true },
};

export const SUPPORTED_ROS_ENCODINGS = Object.keys(LAYOUTS);

export function packRosImage(img: RosRawImage): PackedImage {
  const layout = LAYOUTS[img.encoding];
  if (!layout)
    throw new Error(
      `sensor_msgs/Image encoding ${img.encoding} is not supported (supported: ${SUPPORTED_ROS_ENCODINGS.join(', ')})`,
    );
  const { width, height, step } = img;
  const { channels, bytes, swapRB } = layout;
  if (step < width * channels * bytes || img.data.length < step * height) {
    throw new Error(
      `sensor_msgs/Image ${width}×${height} ${img.encoding}: step ${step} and ${img.data.length} data bytes do not fit`,
    );
  }
  const out = Buffer.alloc(width * height * channels);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      for (let c = 0; c < channels; c++) {
        const src = y * step + (x * channels + c) * bytes;
        // 16-bit depth-like images keep their high byte, which is enough to look at.
        const v = bytes === 1 ? img.data[src]! : img.is_bigendian ? img.data[src]! : img.data[src + 1]!;
        const dc = swapRB && (c === 0 || c === 2) ? 2 - c : c;
        out[(y * width + x) * channels + dc] = v;
      }
    }
  }
  return { width, height, channels, data: out };
}
