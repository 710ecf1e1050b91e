import { InputError, NotFoundError, RefusedError } from '../../core/errors';
import {
  chooseSpeedStream,
  speedsAt,
  type ChannelValue,
  type EgoKind,
  type EgoStreamData,
} from '../../core/ego/streams';
import type { Prisma, Session } from '../../generated/prisma/client';
import type { Db } from '../db';
import type { EgoRead } from '../media/ego';

type Tx = Db | Prisma.TransactionClient;

export type StoredStream = EgoStreamData & { id: string };

/**
 * The session, its row locked for the rest of the transaction: `share` while one event is written
 * (the session cannot go under it), `update` while a detector's events are added, so that two runs
 * at once cannot both find a moment new and both keep it.
 */
export async function lockSession(
  tx: Prisma.TransactionClient,
  sessionId: string,
  mode: 'share' | 'update',
): Promise<Session> {
  const locked =
    mode === 'share'
      ? await tx.$queryRaw<
          Array<{ id: string }>
        >`SELECT id FROM sessions WHERE id = ${sessionId}::uuid FOR SHARE`
      : await tx.$queryRaw<
          Array<{ id: string }>
        >`SELECT id FROM sessions WHERE id = ${sessionId}::uuid FOR UPDATE`;
  if (!locked.length) throw new NotFoundError(`no session ${sessionId}`);
  return tx.session.findUniqueOrThrow({ where: { id: sessionId } });
}

/**
 * Replaces the session's ego streams with those read from its drive (a retried ingest step writes
 * the same rows again, not a second set).
 */
export async function storeEgoStreams(db: Db, sessionId: string, read: EgoRead) {
  await db.$transaction([
    db.egoStream.deleteMany({ where: { sessionId } }),
    db.egoStream.createMany({
      data: read.streams.map((s) => ({
        sessionId,
        kind: s.kind,
        topic: s.topic,
        messageType: s.messageType,
        tMs: s.tMs,
        channels: s.channels as Prisma.InputJsonObject,
      })),
    }),
  ]);
  return {
    streams: read.streams.map((s) => ({ kind: s.kind, topic: s.topic, samples: s.tMs.length })),
    skipped: read.skipped,
  };
}

export async function loadEgoStreams(
  db: Tx,
  sessionId: string,
  filter: { kind?: EgoKind | undefined; topic?: string | undefined } = {},
): Promise<StoredStream[]> {
  const rows = await db.egoStream.findMany({
    where: {
      sessionId,
      ...(filter.kind ? { kind: filter.kind } : {}),
      ...(filter.topic ? { topic: filter.topic } : {}),
    },
    orderBy: [{ kind: 'asc' }, { topic: 'asc' }],
  });
  return rows.map((r) => ({
    id: r.id,
    kind: r.kind as EgoKind,
    topic: r.topic,
    messageType: r.messageType,
    tMs: r.tMs,
    channels: r.channels as Record<string, ChannelValue[]>,
  }));
}

/** Each time's ego speed from the session's speed stream (chooseSpeedStream), null where there is none. */
export async function egoSpeedsAt(
  db: Tx,
  sessionId: string,
  times: readonly number[],
): Promise<ChannelValue[]> {
  const stream = chooseSpeedStream(await loadEgoStreams(db, sessionId, { kind: 'speed' }), times);
  return stream ? speedsAt(stream, times) : times.map(() => null);
}

/**
 * The IMU stream a rule reads: the one named, or the only one. Refused by name when the session
 * has none; a choice among several is the caller's.
 */
export async function imuStream(
  db: Tx,
  sessionId: string,
  topic: string | undefined,
  field: string,
): Promise<StoredStream> {
  const imus = await loadEgoStreams(db, sessionId, { kind: 'imu' });
  if (!imus.length)
    throw new RefusedError(
      `session ${sessionId} has no IMU stream: ingest keeps one from a bag's sensor_msgs/Imu topic, and this session's drive had none`,
    );
  const topics = imus.map((s) => s.topic).join(', ');
  if (topic) {
    const named = imus.find((s) => s.topic === topic);
    if (!named)
      throw new InputError(`${topic} is not an IMU stream of this session; its IMU streams: ${topics}`, [
        { field, message: 'not an IMU stream of the session' },
      ]);
    return named;
  }
  if (imus.length > 1)
    throw new InputError(`the session has several IMU streams; choose one with "topic": ${topics}`, [
      { field, message: 'required: the session has several IMU streams' },
    ]);
  return imus[0]!;
}
