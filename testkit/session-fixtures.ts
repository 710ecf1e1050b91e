import { randomUUID } from 'node:crypto';
import sharp from 'sharp';
import type { Db } from '../activities/db';
import type { ObjectStore } from '../activities/storage/object-store';
import type { Frame, Prisma, Session } from '../generated/prisma/client';

/**
 * Sessions and frames made directly in PostgreSQL, with real small JPEGs in MinIO, for the
 * session-health, inspector, sessions and frames suites (no ingest needed).
 */

/** A real JPEG of the given mean brightness with a little texture, so it is not one flat value. */
export async function makeJpeg(
  opts: { width?: number; height?: number; luma?: number; seed?: number } = {},
): Promise<Buffer> {
  const width = opts.width ?? 64;
  const height = opts.height ?? 48;
  const luma = opts.luma ?? 128;
  const seed = opts.seed ?? 1;
  const px = Buffer.alloc(width * height * 3);
  for (let i = 0; i < width * height; i++) {
    const v = Math.max(0, Math.min(255, luma + ((i * 7 + seed * 13) % 11) - 5));
    px[i * 3] = v;
    px[i * 3 + 1] = v;
    px[i * 3 + 2] = v;
  }
  return sharp(px, { raw: { width, height, channels: 3 } })
    .jpeg({ quality: 90 })
    .toBuffer();
}

export interface SessionFixture {
  session: Session;
  frames: Frame[];
}

export interface SessionFixtureOptions {
  frames?: number;
  fps?: number;
  /** Timestamps of the frames; evenly spaced at `fps` by default. */
  timestampsMs?: number[];
  /** Mean brightness of frame i (JPEGs are made only when `storeImages`). */
  luma?: (i: number) => number;
  storeImages?: boolean;
  /** Also store a redacted copy (a darker JPEG, so it differs from the original). */
  redacted?: boolean;
  /** Per-frame context, e.g. recorded exposure stats. */
  context?: (i: number) => Prisma.InputJsonValue;
  session?: Partial<Prisma.SessionUncheckedCreateInput>;
}

export async function createSessionFixture(
  deps: { db: Db; storage: ObjectStore },
  opts: SessionFixtureOptions = {},
): Promise<SessionFixture> {
  const fps = opts.fps ?? 3;
  const n = opts.timestampsMs?.length ?? opts.frames ?? 6;
  const ts = opts.timestampsMs ?? Array.from({ length: n }, (_, i) => (i * 1000) / fps);
  const session = await deps.db.session.create({
    data: {
      name: `drive ${randomUUID().slice(0, 8)}`,
      sourceKind: 'video',
      state: 'ready',
      targetFps: fps,
      ...opts.session,
    },
  });
  const frames: Frame[] = [];
  for (let i = 0; i < n; i++) {
    const key = `test/${session.id}/${String(i).padStart(5, '0')}.jpg`;
    if (opts.storeImages ?? true) {
      const luma = opts.luma?.(i) ?? 128;
      await deps.storage.client.putObject(
        deps.storage.bucket('frames'),
        key,
        await makeJpeg({ luma, seed: i }),
        undefined,
        { 'Content-Type': 'image/jpeg' },
      );
      if (opts.redacted) {
        await deps.storage.client.putObject(
          deps.storage.bucket('redacted'),
          key,
          await makeJpeg({ luma: luma / 2, seed: i, width: 64 }),
          undefined,
          { 'Content-Type': 'image/jpeg' },
        );
      }
    }
    frames.push(
      await deps.db.frame.create({
        data: {
          sessionId: session.id,
          index: i,
          timestampMs: ts[i]!,
          width: 64,
          height: 48,
          // Both spellings ingest may write: s3://bucket/key for originals, a bare key for redacted copies.
          uri: `s3://${deps.storage.bucket('frames')}/${key}`,
          redactedUri: opts.redacted ? key : null,
          context: opts.context?.(i) ?? {},
        },
      }),
    );
  }
  return { session, frames };
}

/**
 * A drive an export takes whole: every frame redacted and PII-audited (no faces), each with one
 * accepted human box of `classId`. For the export, consent and reproducibility suites.
 */
export async function createExportableDrive(
  deps: { db: Db; storage: ObjectStore },
  opts: { name: string; frames: number; classId: number },
): Promise<{ sessionId: string; frames: Frame[] }> {
  const { session, frames } = await createSessionFixture(deps, {
    frames: opts.frames,
    redacted: true,
    session: { name: opts.name },
  });
  for (const f of frames) {
    await deps.db.piiAudit.create({ data: { frameId: f.id, nFaces: 0, regions: [] } });
    await deps.db.annoObject.create({
      data: {
        frameId: f.id,
        classId: opts.classId,
        bbox: [4, 4, 40, 30],
        source: 'human',
        state: 'accepted',
        conf: 1,
      },
    });
  }
  return { sessionId: session.id, frames };
}
