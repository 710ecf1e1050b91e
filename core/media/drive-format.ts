/**
 * What a drive's first bytes say it is. Videos carry many container signatures, so they are
 * left to ffprobe; bags and zips are recognised here so a wrong `kind` is refused by name.
 */
export type SniffedFormat = 'ros1' | 'mcap' | 'zip' | 'other';
export type DriveKind = 'video' | 'bag' | 'frames';

const ROS1 = Buffer.from('#ROSBAG V2.0\n', 'latin1');
const MCAP = Buffer.from([0x89, 0x4d, 0x43, 0x41, 0x50, 0x30, 0x0d, 0x0a]);
const ZIP_LOCAL = Buffer.from([0x50, 0x4b, 0x03, 0x04]);
/** An empty archive is only its end-of-central-directory record. */
const ZIP_EMPTY = Buffer.from([0x50, 0x4b, 0x05, 0x06]);

/** Needs at least the first 16 bytes. */
export function sniffDriveFormat(head: Uint8Array): SniffedFormat {
  const b = Buffer.from(head.buffer, head.byteOffset, head.byteLength);
  if (b.subarray(0, ROS1.length).equals(ROS1)) return 'ros1';
  if (b.subarray(0, MCAP.length).equals(MCAP)) return 'mcap';
  if (b.subarray(0, 4).equals(ZIP_LOCAL) || b.subarray(0, 4).equals(ZIP_EMPTY)) return 'zip';
  return 'other';
}

/** The kind a sniffed file can be ingested as; `other` files may be videos (ffprobe decides). */
export function kindOfFormat(format: SniffedFormat): Exclude<DriveKind, 'video'> | 'video?' {
  if (format === 'ros1' || format === 'mcap') return 'bag';
  if (format === 'zip') return 'frames';
  return 'video?';
}
