import type { AppConfig } from '../../core/config';
import { kindOfFormat, sniffDriveFormat, type DriveKind } from '../../core/media/drive-format';
import { DriveRefusedError } from '../../core/media/errors';
import type { ObjectStore } from '../storage/object-store';
import { extractBagFrames, probeBag } from './bag';
import { ffmpegInput, isFolder, openDriveFile, type DriveSource, type RandomAccess } from './drive-source';
import { extractVideoFrames, probeVideo } from './ffmpeg';
import { extractListedFrames, listFolder, listZip, probeFrameListing } from './frame-files';
import type { DriveProbe, SourceFrame } from './frame-source';

/** A drive to read: where it is, what it was declared as, and the kind-specific options. */
export interface DriveRequest {
  source: DriveSource;
  kind: DriveKind;
  /** Bags: the image topic (needed when the bag has several). */
  topic?: string;
  /** Frames: the rate the frames were captured at (default: the target rate, every frame taken). */
  frameRate?: number;
}

interface MediaDeps {
  config: AppConfig;
  storage: ObjectStore;
}

const KIND_NAMES = {
  bag: 'a bag (ROS 1 or MCAP)',
  frames: 'a zip of frames',
  'video?': 'neither a bag nor a zip',
} as const;

/** Opens the drive's file after checking its first bytes agree with the declared kind. */
async function openChecked(deps: MediaDeps, req: DriveRequest): Promise<RandomAccess | 'folder'> {
  if (await isFolder(req.source)) {
    if (req.kind !== 'frames')
      throw new DriveRefusedError(`a folder can only be ingested as kind "frames", not "${req.kind}"`);
    return 'folder';
  }
  const access = await openDriveFile(deps.storage, req.source);
  if (access.size === 0) {
    await access.close();
    throw new DriveRefusedError('the drive is an empty file');
  }
  const found = kindOfFormat(sniffDriveFormat(await access.read(0, 16)));
  const matches = found === req.kind || (found === 'video?' && req.kind === 'video');
  if (!matches) {
    await access.close();
    throw new DriveRefusedError(`declared as kind "${req.kind}" but the file is ${KIND_NAMES[found]}`);
  }
  return access;
}

const framesOptions = (deps: MediaDeps, req: DriveRequest) => ({
  fps: deps.config.ingest.targetFps,
  frameRate: req.frameRate ?? deps.config.ingest.targetFps,
});

export async function probeDriveMedia(deps: MediaDeps, req: DriveRequest): Promise<DriveProbe> {
  const fps = deps.config.ingest.targetFps;
  const access = await openChecked(deps, req);
  if (access === 'folder')
    return probeFrameListing(
      await listFolder((req.source as { path: string }).path),
      framesOptions(deps, req),
    );
  try {
    if (req.kind === 'bag') return await probeBag(access, { topic: req.topic, fps });
    if (req.kind === 'frames') return probeFrameListing(await listZip(access), framesOptions(deps, req));
  } finally {
    await access.close();
  }
  const v = await probeVideo(deps.config.ingest.ffprobePath, await ffmpegInput(deps.storage, req.source));
  return {
    kind: 'video',
    format: v.format,
    codec: v.codec,
    durationMs: v.durationMs,
    startMs: v.startMs,
    width: v.width,
    height: v.height,
    sourceFps: v.sourceFps,
    estimatedFrames: Math.max(1, Math.ceil((v.durationMs * fps) / 1000 - 1e-6)),
  };
}

/** The drive's frames at the target rate, streamed; `probe` is what probeDriveMedia returned. */
export async function* driveFrames(
  deps: MediaDeps,
  req: DriveRequest,
  probe: DriveProbe,
): AsyncGenerator<SourceFrame> {
  const fps = deps.config.ingest.targetFps;
  if (req.kind === 'video') {
    const input = await ffmpegInput(deps.storage, req.source);
    yield* extractVideoFrames({
      ffmpegPath: deps.config.ingest.ffmpegPath,
      input,
      fps,
      startMs: probe.startMs ?? 0,
    });
    return;
  }
  const access = await openChecked(deps, req);
  if (access === 'folder') {
    yield* extractListedFrames(
      await listFolder((req.source as { path: string }).path),
      framesOptions(deps, req),
    );
    return;
  }
  try {
    if (req.kind === 'bag') yield* extractBagFrames(access, { topic: probe.topic, fps });
    else yield* extractListedFrames(await listZip(access), framesOptions(deps, req));
  } finally {
    await access.close();
  }
}
