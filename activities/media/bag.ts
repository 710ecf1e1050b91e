import { Bag } from '@foxglove/rosbag';
import { McapIndexedReader } from '@mcap/core';
import { parse as parseMessageDefinition } from '@foxglove/rosmsg';
import { MessageReader } from '@foxglove/rosmsg-serialization';
import Bzip2 from '@foxglove/wasm-bz2';
import lz4 from '@foxglove/wasm-lz4';
import * as zstd from '@foxglove/wasm-zstd';
import sharp from 'sharp';
import { DriveRefusedError } from '../../core/media/errors';
import { packRosImage, type RosRawImage } from '../../core/media/ros-image';
import { FrameSampler } from '../../core/media/sampling';
import { sniffDriveFormat } from '../../core/media/drive-format';
import type { RandomAccess } from './drive-source';
import type { DriveProbe, SourceFrame } from './frame-source';

/**
 * ROS 1 bags (@foxglove/rosbag, bz2/lz4 chunks) and MCAP files (@mcap/core, zstd/lz4 chunks) with
 * sensor_msgs/Image or sensor_msgs/CompressedImage topics, ROS 1 message encoding.
 */
const IMAGE = 'sensor_msgs/Image';
const COMPRESSED = 'sensor_msgs/CompressedImage';
/** ROS 2 spells the types with /msg/; MCAP files from either world may carry them. */
const imageType = (type: string): typeof IMAGE | typeof COMPRESSED | null => {
  const t = type.replace('/msg/', '/');
  return t === IMAGE || t === COMPRESSED ? t : null;
};

interface TopicInfo {
  topic: string;
  type: string;
  messages: number;
}

interface OpenBag {
  format: 'ros1' | 'mcap';
  topics: TopicInfo[];
  startNs: bigint;
  endNs: bigint;
  /** Messages of one topic in log-time order, decoded. */
  messages(topic: string): AsyncGenerator<{ logTimeNs: bigint; message: unknown }>;
}

let decompressors: Promise<{ bz2: Bzip2 }> | undefined;
const loadDecompressors = () =>
  (decompressors ??= (async () => {
    await Promise.all([lz4.isLoaded, zstd.isLoaded]);
    return { bz2: await Bzip2.init() };
  })());

const ns = (t: { sec: number; nsec: number }): bigint => BigInt(t.sec) * 1_000_000_000n + BigInt(t.nsec);

async function openRos1(access: RandomAccess): Promise<OpenBag> {
  const { bz2 } = await loadDecompressors();
  const bag = new Bag(
    { read: (offset, length) => access.read(offset, length), size: () => access.size },
    {
      decompress: {
        bz2: (buf, size) => bz2.decompress(buf, size, { small: false }),
        lz4: (buf, size) => lz4(buf, size),
      },
    },
  );
  await bag.open();
  const counts = new Map<number, number>();
  for (const info of bag.chunkInfos)
    for (const c of info.connections) counts.set(c.conn, (counts.get(c.conn) ?? 0) + c.count);
  const byTopic = new Map<string, TopicInfo>();
  for (const conn of bag.connections.values()) {
    const info = byTopic.get(conn.topic) ?? { topic: conn.topic, type: conn.type ?? 'unknown', messages: 0 };
    info.messages += counts.get(conn.conn) ?? 0;
    byTopic.set(conn.topic, info);
  }
  return {
    format: 'ros1',
    topics: [...byTopic.values()],
    startNs: bag.startTime ? ns(bag.startTime) : 0n,
    endNs: bag.endTime ? ns(bag.endTime) : 0n,
    async *messages(topic) {
      for await (const m of bag.messageIterator({ topics: [topic] }))
        yield { logTimeNs: ns(m.timestamp), message: m.message };
    },
  };
}

async function openMcap(access: RandomAccess): Promise<OpenBag> {
  await loadDecompressors();
  const reader = await McapIndexedReader.Initialize({
    readable: {
      size: async () => BigInt(access.size),
      read: async (offset, size) => access.read(Number(offset), Number(size)),
    },
    decompressHandlers: {
      zstd: (buf, size) => zstd.decompress(buf, Number(size)),
      lz4: (buf, size) => lz4(buf, Number(size)),
    },
  });
  const topics: TopicInfo[] = [];
  const readers = new Map<number, MessageReader>();
  for (const channel of reader.channelsById.values()) {
    const schema = reader.schemasById.get(channel.schemaId);
    topics.push({
      topic: channel.topic,
      type: schema?.name ?? 'unknown',
      messages: Number(reader.statistics?.channelMessageCounts.get(channel.id) ?? 0),
    });
  }
  const readerFor = (channelId: number): MessageReader => {
    const existing = readers.get(channelId);
    if (existing) return existing;
    const channel = reader.channelsById.get(channelId)!;
    const schema = reader.schemasById.get(channel.schemaId);
    if (channel.messageEncoding !== 'ros1' || schema?.encoding !== 'ros1msg') {
      throw new DriveRefusedError(
        `MCAP topic ${channel.topic} is encoded as ${channel.messageEncoding}/${schema?.encoding ?? 'no schema'}; only ros1 message encoding is supported`,
      );
    }
    const made = new MessageReader(parseMessageDefinition(new TextDecoder().decode(schema.data)));
    readers.set(channelId, made);
    return made;
  };
  return {
    format: 'mcap',
    topics,
    startNs: reader.statistics?.messageStartTime ?? 0n,
    endNs: reader.statistics?.messageEndTime ?? 0n,
    async *messages(topic) {
      for await (const m of reader.readMessages({ topics: [topic] }))
        yield { logTimeNs: m.logTime, message: readerFor(m.channelId).readMessage(m.data) };
    },
  };
}

/** Also read by activities/media/ego.ts, whose streams share the frames' clock (`startNs`). */
export async function openBag(access: RandomAccess): Promise<OpenBag> {
  const format = sniffDriveFormat(await access.read(0, 16));
  try {
    if (format === 'ros1') return await openRos1(access);
    if (format === 'mcap') return await openMcap(access);
  } catch (err) {
    if (err instanceof DriveRefusedError) throw err;
    throw new DriveRefusedError(`the ${format} bag cannot be read: ${(err as Error).message}`);
  }
  throw new DriveRefusedError('not a bag: the file is neither a ROS 1 bag (#ROSBAG V2.0) nor an MCAP file');
}

function chooseTopic(bag: OpenBag, wanted: string | undefined): { images: TopicInfo[]; topic: TopicInfo } {
  const images = bag.topics.filter((t) => imageType(t.type)).sort((a, b) => a.topic.localeCompare(b.topic));
  if (!images.length) {
    const all = bag.topics.map((t) => `${t.topic} (${t.type})`).join(', ') || 'none';
    throw new DriveRefusedError(
      `the bag has no image topic (sensor_msgs/Image or sensor_msgs/CompressedImage); its topics: ${all}`,
    );
  }
  if (wanted) {
    const topic = images.find((t) => t.topic === wanted);
    if (!topic)
      throw new DriveRefusedError(
        `topic ${wanted} is not an image topic of this bag; image topics: ${images.map((t) => t.topic).join(', ')}`,
      );
    return { images, topic };
  }
  if (images.length > 1)
    throw new DriveRefusedError(
      `the bag has several image topics; choose one with "topic": ${images.map((t) => t.topic).join(', ')}`,
    );
  return { images, topic: images[0]! };
}

export async function probeBag(
  access: RandomAccess,
  opts: { topic?: string; fps: number },
): Promise<DriveProbe> {
  const bag = await openBag(access);
  const { images, topic } = chooseTopic(bag, opts.topic);
  const durationMs = Number(bag.endNs - bag.startNs) / 1e6;
  const sourceFps = durationMs > 0 && topic.messages > 1 ? ((topic.messages - 1) * 1000) / durationMs : null;
  return {
    kind: 'bag',
    format: bag.format,
    durationMs,
    width: null,
    height: null,
    sourceFps,
    estimatedFrames: Math.min(topic.messages, Math.floor((durationMs * opts.fps) / 1000) + 1),
    imageTopics: images,
    topic: topic.topic,
  };
}

interface CompressedImageMessage {
  format: string;
  data: Uint8Array;
}

async function encodeMessage(
  type: typeof IMAGE | typeof COMPRESSED,
  message: unknown,
): Promise<{ bytes: Buffer; contentType: string }> {
  if (type === COMPRESSED) {
    const m = message as CompressedImageMessage;
    const data = Buffer.from(m.data.buffer, m.data.byteOffset, m.data.byteLength);
    const meta = await sharp(data)
      .metadata()
      .catch(() => {
        throw new DriveRefusedError(
          `a CompressedImage message (format "${m.format}") does not hold a readable image`,
        );
      });
    return { bytes: data, contentType: `image/${meta.format === 'jpeg' ? 'jpeg' : meta.format}` };
  }
  let packed;
  try {
    packed = packRosImage(message as RosRawImage);
  } catch (err) {
    throw new DriveRefusedError((err as Error).message);
  }
  const bytes = await sharp(packed.data, {
    raw: { width: packed.width, height: packed.height, channels: packed.channels },
  })
    .jpeg({ quality: 90 })
    .toBuffer();
  return { bytes, contentType: 'image/jpeg' };
}

export async function* extractBagFrames(
  access: RandomAccess,
  opts: { topic?: string; fps: number },
): AsyncGenerator<SourceFrame> {
  const bag = await openBag(access);
  const { topic } = chooseTopic(bag, opts.topic);
  const type = imageType(topic.type)!;
  const sampler = new FrameSampler(opts.fps);
  for await (const { logTimeNs, message } of bag.messages(topic.topic)) {
    const timestampMs = Number(logTimeNs - bag.startNs) / 1e6;
    if (!sampler.take(timestampMs)) continue;
    yield { timestampMs, ...(await encodeMessage(type, message)) };
  }
}
