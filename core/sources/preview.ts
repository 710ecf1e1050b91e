import { kindOfFormat, sniffDriveFormat, type DriveKind, type SniffedFormat } from '../media/drive-format';
import { frameContentType } from '../media/frame-files';

/**
 * What a registered source's objects would be to the ingest (docs/integrations.md "Preview"):
 * judged as the ingest judges a drive — by its first bytes for bags and zips, by its name for
 * frame images — and by container signature for videos, which the ingest leaves to ffprobe.
 */

/** Kinds of source the platform knows of but cannot read: refused by name at registration. */
export const REFUSED_SOURCE_KINDS = ['gcs', 'azure', 'folder'] as const;

/** S3 bucket naming rules (3–63 characters, lowercase letters, digits, dots and hyphens). */
export const S3_BUCKET_NAME = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;

/** Bytes read from each object: enough for every signature below (MPEG-TS needs its second packet's sync byte). */
export const HEAD_BYTES = 189;

export interface ObjectVerdict {
  /** The ingest `kind` it could be ingested as; null when the ingest would refuse it. */
  ingest_kind: DriveKind | null;
  /** What it was recognised as. */
  format: string | null;
}

const ascii = (b: Buffer, from: number, to: number) => b.subarray(from, to).toString('latin1');

/** Video containers by signature, for what sniffDriveFormat leaves to ffprobe. */
function videoContainer(b: Buffer): string | null {
  if (['ftyp', 'moov', 'mdat', 'wide'].includes(ascii(b, 4, 8))) return 'mp4/mov (ISO BMFF)';
  if (b.subarray(0, 4).equals(Buffer.from([0x1a, 0x45, 0xdf, 0xa3]))) return 'matroska/webm';
  if (ascii(b, 0, 4) === 'RIFF' && ascii(b, 8, 12) === 'AVI ') return 'avi';
  if (b.length >= 189 && b[0] === 0x47 && b[188] === 0x47) return 'mpeg-ts';
  if (b.subarray(0, 4).equals(Buffer.from([0x00, 0x00, 0x01, 0xba]))) return 'mpeg-ps';
  if (ascii(b, 0, 3) === 'FLV') return 'flv';
  return null;
}

const SNIFFED_NAMES: Record<SniffedFormat, string> = {
  ros1: 'ROS 1 bag',
  mcap: 'MCAP',
  zip: 'zip (of frames)',
  other: 'unrecognised',
};

/** The verdict on one object from its key, size and first HEAD_BYTES bytes. */
export function judgeObject(key: string, size: number, head: Uint8Array): ObjectVerdict {
  if (size === 0) return { ingest_kind: null, format: 'empty' };
  const b = Buffer.from(head.buffer, head.byteOffset, head.byteLength);
  const sniffed = sniffDriveFormat(b);
  const kind = kindOfFormat(sniffed);
  if (kind !== 'video?') return { ingest_kind: kind, format: SNIFFED_NAMES[sniffed] };
  // A frame image is ingested as one of a folder of frames, named as the frames folder names them.
  const image = frameContentType(key);
  if (image) return { ingest_kind: 'frames', format: image };
  const video = videoContainer(b);
  return video ? { ingest_kind: 'video', format: video } : { ingest_kind: null, format: null };
}
