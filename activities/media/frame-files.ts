import fs from 'node:fs';
import path from 'node:path';
import type { Readable } from 'node:stream';
import yauzl from 'yauzl';
import { DriveRefusedError } from '../../core/media/errors';
import { compareFrameNames, frameContentType, unsafeEntryName } from '../../core/media/frame-files';
import { FrameSampler } from '../../core/media/sampling';
import type { RandomAccess } from './drive-source';
import type { DriveProbe, SourceFrame } from './frame-source';

/**
 * A folder of frames: a zip (read through its central directory with random access, so an
 * uploaded archive is never downloaded whole) or a server folder. Frames are taken in natural
 * name order; the capture rate (`frame_rate`, default the target rate) gives their timestamps.
 */
interface FrameFile {
  name: string;
  contentType: string;
  read(): Promise<Buffer>;
}

interface FrameListing {
  format: 'zip' | 'folder';
  files: FrameFile[];
  ignored: number;
}

class AccessReader extends yauzl.RandomAccessReader {
  constructor(private readonly access: RandomAccess) {
    super();
  }
  override _readStreamForRange(start: number, end: number): Readable {
    return this.access.stream(start, end);
  }
}

async function readAll(stream: Readable): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const part of stream) parts.push(part as Buffer);
  return Buffer.concat(parts);
}

export async function listZip(access: RandomAccess): Promise<FrameListing> {
  let zip: yauzl.ZipFile;
  try {
    zip = await yauzl.fromRandomAccessReaderPromise(new AccessReader(access), access.size, {
      lazyEntries: true,
      decodeStrings: false,
      autoClose: false,
    });
  } catch (err) {
    throw new DriveRefusedError(`not a readable zip: ${(err as Error).message}`);
  }
  const files: FrameFile[] = [];
  let ignored = 0;
  try {
    for await (const entry of zip.eachEntry()) {
      const raw = entry.fileName as unknown as Buffer;
      const name = yauzl.getFileNameLowLevel(entry.generalPurposeBitFlag, raw, entry.extraFields, false);
      const unsafe = unsafeEntryName(name);
      // One hostile entry refuses the whole archive: whoever built it did not mean well.
      if (unsafe)
        throw new DriveRefusedError(
          `the zip holds an unsafe entry "${name}" (${unsafe}); nothing was ingested`,
        );
      const contentType = frameContentType(name);
      if (!contentType) {
        ignored++;
        continue;
      }
      files.push({ name, contentType, read: async () => readAll(await zip.openReadStreamPromise(entry)) });
    }
  } catch (err) {
    if (err instanceof DriveRefusedError) throw err;
    throw new DriveRefusedError(`the zip is damaged: ${(err as Error).message}`);
  }
  return { format: 'zip', files: files.sort((a, b) => compareFrameNames(a.name, b.name)), ignored };
}

export async function listFolder(root: string): Promise<FrameListing> {
  const realRoot = await fs.promises.realpath(root);
  const names = (await fs.promises.readdir(realRoot, { recursive: true, withFileTypes: true }))
    .filter((d) => d.isFile() || d.isSymbolicLink())
    .map((d) => path.relative(realRoot, path.join(d.parentPath, d.name)));
  const files: FrameFile[] = [];
  let ignored = 0;
  for (const name of names) {
    const contentType = frameContentType(name);
    if (!contentType) {
      ignored++;
      continue;
    }
    const full = path.join(realRoot, name);
    files.push({
      name,
      contentType,
      async read() {
        // A link out of the allowed folder is refused when read, not followed.
        const real = await fs.promises.realpath(full);
        if (!real.startsWith(realRoot + path.sep))
          throw new DriveRefusedError(`frame ${name} links outside the folder`);
        return fs.promises.readFile(real);
      },
    });
  }
  return { format: 'folder', files: files.sort((a, b) => compareFrameNames(a.name, b.name)), ignored };
}

const frameTime = (i: number, frameRate: number): number => (i * 1000) / frameRate;

export function probeFrameListing(
  listing: FrameListing,
  opts: { fps: number; frameRate: number },
): DriveProbe {
  const n = listing.files.length;
  if (!n)
    throw new DriveRefusedError(
      `the ${listing.format} holds no frames (.jpg, .jpeg, .png or .webp files)${listing.ignored ? `; ${listing.ignored} other files were ignored` : ''}`,
    );
  const sampler = new FrameSampler(opts.fps);
  let estimated = 0;
  for (let i = 0; i < n; i++) if (sampler.take(frameTime(i, opts.frameRate))) estimated++;
  return {
    kind: 'frames',
    format: listing.format,
    durationMs: frameTime(n - 1, opts.frameRate),
    width: null,
    height: null,
    sourceFps: opts.frameRate,
    estimatedFrames: estimated,
    frameFiles: n,
    ignoredFiles: listing.ignored,
  };
}

export async function* extractListedFrames(
  listing: FrameListing,
  opts: { fps: number; frameRate: number },
): AsyncGenerator<SourceFrame> {
  const sampler = new FrameSampler(opts.fps);
  for (let i = 0; i < listing.files.length; i++) {
    const timestampMs = frameTime(i, opts.frameRate);
    if (!sampler.take(timestampMs)) continue;
    const file = listing.files[i]!;
    yield { timestampMs, bytes: await file.read(), contentType: file.contentType };
  }
}
