import { DriveRefusedError } from '../../core/media/errors';
import { EgoStreamBuilder, egoKindOf, type EgoStreamData } from '../../core/ego/streams';
import type { ObjectStore } from '../storage/object-store';
import { openBag } from './bag';
import { openDriveFile, type RandomAccess } from './drive-source';
import type { DriveRequest } from './drive';

/**
 * The ego topics of a bag (IMU, GNSS, speed; docs/ego-state.md) read with the bag reader's own
 * decoders. `t_ms` is the log time from the bag's start, exactly as the frames' `timestamp_ms`, so
 * a frame and a sample of the same instant carry the same time.
 */
export interface EgoRead {
  streams: EgoStreamData[];
  /** Ego topics that could not be decoded (an MCAP channel in another encoding): the ingest goes on without them. */
  skipped: Array<{ topic: string; type: string; reason: string }>;
}

/** Messages between two calls of `onProgress` (a heartbeat). */
const PROGRESS_EVERY = 1000;

export async function readEgoStreams(
  access: RandomAccess,
  onProgress?: (messages: number) => void,
): Promise<EgoRead> {
  const bag = await openBag(access);
  const topics = bag.topics
    .filter((t) => egoKindOf(t.type, t.topic))
    .sort((a, b) => a.topic.localeCompare(b.topic));
  const out: EgoRead = { streams: [], skipped: [] };
  let read = 0;
  for (const t of topics) {
    const builder = new EgoStreamBuilder(t.topic, t.type);
    try {
      for await (const { logTimeNs, message } of bag.messages(t.topic)) {
        builder.add(Number(logTimeNs - bag.startNs) / 1e6, message);
        if (++read % PROGRESS_EVERY === 0) onProgress?.(read);
      }
    } catch (err) {
      if (!(err instanceof DriveRefusedError)) throw err;
      out.skipped.push({ topic: t.topic, type: t.type, reason: err.message });
      continue;
    }
    if (builder.size) out.streams.push(builder.build());
  }
  return out;
}

/** A drive's ego streams: a bag's, none for the other kinds (videos and frames carry no ego topics). */
export async function driveEgoStreams(
  storage: ObjectStore,
  req: DriveRequest,
  onProgress?: (messages: number) => void,
): Promise<EgoRead> {
  if (req.kind !== 'bag') return { streams: [], skipped: [] };
  const access = await openDriveFile(storage, req.source);
  try {
    return await readEgoStreams(access, onProgress);
  } finally {
    await access.close();
  }
}
