import { createHash } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import { Transform, type Readable } from 'node:stream';
import { Client as MinioClient } from 'minio';
import type { AppConfig } from '../../core/config';
import { ConflictError, NotFoundError, RefusedError, UnavailableError } from '../../core/errors';
import { DriveRefusedError } from '../../core/media/errors';
import { openSecret, sealSecret } from '../../core/sealed';
import { HEAD_BYTES, judgeObject, type ObjectVerdict } from '../../core/sources/preview';
import { Prisma, type IntegrationSource } from '../../generated/prisma/client';
import { recordAudit } from '../audit';
import type { Db } from '../db';
import type { ObjectStore } from '../storage/object-store';

/**
 * Registered external buckets to ingest from (docs/integrations.md): S3-compatible ones, read
 * with the same `minio` client the platform's own storage uses. Registering or deleting a source
 * never writes to its bucket.
 */

/** Where an S3 source is: what integration_sources.config keeps (the secret apart, sealed). */
export interface S3Location {
  endpoint: string;
  bucket: string;
  prefix: string;
  region: string;
  access_key_id: string;
  force_path_style: boolean;
}

/** A bucket that has not answered in this long is taken as unreachable. */
const ANSWER_MS = 10_000;
/** Objects whose first bytes are read at once during a preview. */
const HEADS_IN_FLIGHT = 8;

interface Deps {
  db: Db;
  config: Pick<AppConfig, 'auth'>;
}

/**
 * Runs `work` with a client of the source's store. Its connections are its own and closed after
 * `work`: kept alive between one preview's requests, never left open afterwards.
 */
async function withClient<T>(
  where: S3Location,
  secretAccessKey: string,
  work: (client: MinioClient) => Promise<T>,
): Promise<T> {
  const url = new URL(where.endpoint);
  const useSSL = url.protocol === 'https:';
  const agent = new (useSSL ? https : http).Agent({ keepAlive: true });
  const client = new MinioClient({
    endPoint: url.hostname.replace(/^\[(.*)\]$/, '$1'),
    ...(url.port ? { port: Number(url.port) } : {}),
    useSSL,
    accessKey: where.access_key_id,
    secretKey: secretAccessKey,
    region: where.region,
    pathStyle: where.force_path_style,
    transportAgent: agent,
    // A registration or preview answers now: the caller asks again rather than waiting on retries.
    retryOptions: { disableRetry: true },
  });
  try {
    return await work(client);
  } finally {
    agent.destroy();
  }
}

/** The S3 error code (NoSuchBucket, InvalidAccessKeyId …) or network error, with its message. */
function why(err: unknown): string {
  const e = err as { code?: string; message?: string };
  const message = e.message ?? String(err);
  return e.code && !message.includes(e.code) ? `${e.code}: ${message}` : message;
}

/** The bucket's answer, or a rejection once it has not answered within ANSWER_MS. */
async function answered<T>(work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ANSWER_MS / 1000} s`)), ANSWER_MS);
  });
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}

const listKeys = (client: MinioClient, where: S3Location, maxKeys: number) =>
  answered(client.listObjectsV2Query(where.bucket, where.prefix, '', '', maxKeys, ''));

async function readHead(client: MinioClient, bucket: string, key: string): Promise<Buffer> {
  const stream: Readable = await answered(client.getPartialObject(bucket, key, 0, HEAD_BYTES));
  const parts: Buffer[] = [];
  for await (const part of stream) parts.push(part as Buffer);
  return Buffer.concat(parts);
}

export const sourceLocation = (source: IntegrationSource): S3Location =>
  source.config as unknown as S3Location;

/** Runs `work` with a client of the source's store, its secret opened here and nowhere else. */
function withSourceClient<T>(
  deps: Deps,
  source: IntegrationSource,
  work: (client: MinioClient, where: S3Location) => Promise<T>,
): Promise<T> {
  if (!source.secretCipher) throw new Error(`source ${source.id} has no sealed secret`);
  const where = sourceLocation(source);
  const secret = openSecret(deps.config.auth.sealingKey, source.secretCipher);
  return withClient(where, secret, (client) => work(client, where));
}

/** The store's answer for a key (or bucket) that is not there. */
const isMissing = (err: unknown): boolean =>
  ['NoSuchKey', 'NotFound', 'NoSuchBucket'].includes((err as { code?: string } | null)?.code ?? '');

const described = (source: IntegrationSource) => {
  const where = sourceLocation(source);
  return `source ${source.name} (bucket ${where.bucket} at ${where.endpoint})`;
};

/**
 * A source an ingest may read: an unknown id is a 404, and a kind this deployment has no reader
 * for is refused by name (only s3 is registered today; the check keeps a row of another kind, from
 * a later or earlier version, from being read as S3).
 */
export async function readableSource(db: Db, id: string): Promise<IntegrationSource> {
  const source = await db.integrationSource.findUnique({ where: { id } });
  if (!source) throw new NotFoundError(`no source ${id}`);
  if (source.kind !== 's3')
    throw new RefusedError(
      `source ${source.name} is of kind ${source.kind}, which is not served: only S3-compatible buckets (kind s3) can be ingested from`,
    );
  return source;
}

/**
 * What the store says of one object, without reading it: its size. An absent key is a 404; a
 * store that does not answer a 503 naming its error.
 */
export async function statSourceObject(
  deps: Deps,
  source: IntegrationSource,
  key: string,
): Promise<{ size: number; etag: string }> {
  try {
    return await withSourceClient(deps, source, async (client, where) => {
      const stat = await answered(client.statObject(where.bucket, key));
      return { size: stat.size, etag: stat.etag };
    });
  } catch (err) {
    if (isMissing(err)) throw new NotFoundError(`no object ${key} in ${described(source)}`);
    throw new UnavailableError(`${described(source)} did not answer: ${why(err)}`);
  }
}

/** What the ingest would take one object as, from its first bytes (as the preview judges it). */
export async function judgeSourceObject(
  deps: Deps,
  source: IntegrationSource,
  key: string,
  size: number,
): Promise<ObjectVerdict> {
  if (!size) return judgeObject(key, 0, Buffer.alloc(0));
  try {
    const head = await withSourceClient(deps, source, (client, where) => readHead(client, where.bucket, key));
    return judgeObject(key, size, head);
  } catch (err) {
    if (isMissing(err)) throw new NotFoundError(`no object ${key} in ${described(source)}`);
    throw new UnavailableError(`${described(source)} did not answer: ${why(err)}`);
  }
}

/**
 * Streams one object of the source into the platform's own store at `to`, hashing it on the way
 * (SHA-256, the drive's identity, as an upload's): never held whole, and refused once it passes
 * `maxBytes`. An object gone from the source is a DriveRefused (retrying cannot bring it back);
 * anything else (a store that stopped answering, a broken stream) is thrown as is, to be retried.
 */
export async function copySourceObject(
  deps: Deps & { storage: ObjectStore },
  source: IntegrationSource,
  key: string,
  to: { bucket: string; key: string },
  opts: { maxBytes: number; onBytes: (copied: number) => void },
): Promise<{ sha256: string; size: number }> {
  const hash = createHash('sha256');
  let copied = 0;
  const tooLarge = () =>
    new DriveRefusedError(
      `object ${key} of ${described(source)} is larger than ${opts.maxBytes} bytes, the limit for a source copy (APP_INGEST__SOURCE_MAX_MB)`,
    );
  try {
    await withSourceClient(deps, source, async (client, where) => {
      const { size } = await answered(client.statObject(where.bucket, key));
      if (size > opts.maxBytes) throw tooLarge();
      const body = await answered(client.getObject(where.bucket, key));
      const meter = new Transform({
        transform(chunk: Buffer, _encoding, done) {
          copied += chunk.length;
          if (copied > opts.maxBytes) return done(tooLarge());
          hash.update(chunk);
          opts.onBytes(copied);
          done(null, chunk);
        },
      });
      body.on('error', (err) => meter.destroy(err));
      try {
        await deps.storage.client.putObject(to.bucket, to.key, body.pipe(meter), size, {
          'Content-Type': 'application/octet-stream',
        });
      } finally {
        body.destroy();
      }
      if (copied !== size)
        throw new Error(`object ${key} changed while it was copied (${copied} of ${size} bytes)`);
    });
  } catch (err) {
    if (isMissing(err)) throw new DriveRefusedError(`object ${key} is no longer in ${described(source)}`);
    throw err;
  }
  return { sha256: hash.digest('hex'), size: copied };
}

/**
 * Registers an S3 source after listing its bucket once with the credentials given: a wrong
 * endpoint, bucket or key is refused now, naming what the store answered, rather than at the
 * first preview or ingest.
 */
export async function registerS3Source(
  deps: Deps,
  input: S3Location & { name: string; secret_access_key: string },
  actor: { userId: string; requestId: string },
): Promise<IntegrationSource> {
  const { name, secret_access_key: secret, ...where } = input;
  try {
    await withClient(where, secret, (client) => listKeys(client, where, 1));
  } catch (err) {
    throw new RefusedError(`bucket ${where.bucket} at ${where.endpoint} could not be listed: ${why(err)}`);
  }
  try {
    return await deps.db.$transaction(async (tx) => {
      const source = await tx.integrationSource.create({
        data: {
          name,
          kind: 's3',
          config: { ...where },
          secretCipher: sealSecret(deps.config.auth.sealingKey, secret),
          createdBy: actor.userId,
        },
      });
      await recordAudit(tx, {
        actorId: actor.userId,
        action: 'integration_source.created',
        subjectType: 'integration_source',
        subjectId: source.id,
        detail: { name, kind: 's3', endpoint: where.endpoint, bucket: where.bucket, prefix: where.prefix },
        requestId: actor.requestId,
      });
      return source;
    });
  } catch (err) {
    if (err instanceof Prisma.PrismaClientKnownRequestError && err.code === 'P2002')
      throw new ConflictError(`a source named ${name} exists already`);
    throw err;
  }
}

/** Forgets a source; its bucket and everything in it stay as they are. */
export async function deleteSource(
  db: Db,
  id: string,
  actor: { userId: string; requestId: string },
): Promise<void> {
  await db.$transaction(async (tx) => {
    const gone = await tx.integrationSource.deleteMany({ where: { id } });
    if (gone.count === 0) throw new NotFoundError(`no source ${id}`);
    await recordAudit(tx, {
      actorId: actor.userId,
      action: 'integration_source.deleted',
      subjectType: 'integration_source',
      subjectId: id,
      requestId: actor.requestId,
    });
  });
}

export interface PreviewKey extends ObjectVerdict {
  key: string;
  size: number;
  last_modified: string;
}

/** The first `limit` keys under the prefix, each judged by its first bytes, a few at a time. */
async function previewKeys(client: MinioClient, where: S3Location, limit: number) {
  const listed = await listKeys(client, where, limit);
  const objects = listed.objects.flatMap((o) => (o.name ? [o] : []));
  const keys: PreviewKey[] = [];
  for (let i = 0; i < objects.length; i += HEADS_IN_FLIGHT) {
    const judged = objects.slice(i, i + HEADS_IN_FLIGHT).map(async (o) => ({
      key: o.name,
      size: o.size,
      last_modified: o.lastModified.toISOString(),
      ...judgeObject(o.name, o.size, o.size ? await readHead(client, where.bucket, o.name) : Buffer.alloc(0)),
    }));
    keys.push(...(await Promise.all(judged)));
  }
  return { keys, truncated: listed.isTruncated };
}

/**
 * The first `limit` keys under the source's prefix, in key order, with their sizes and what the
 * ingest would take each as. A bucket that does not answer is a 503 naming what went wrong: the
 * source is registered, its store is not serving.
 */
export async function previewSource(deps: Deps, id: string, limit: number) {
  const source = await deps.db.integrationSource.findUnique({ where: { id } });
  if (!source) throw new NotFoundError(`no source ${id}`);
  const where = sourceLocation(source);
  try {
    const { keys, truncated } = await withSourceClient(deps, source, (client) =>
      previewKeys(client, where, limit),
    );
    return {
      source_id: source.id,
      bucket: where.bucket,
      prefix: where.prefix,
      keys,
      truncated,
      ingestable: keys.filter((k) => k.ingest_kind !== null).length,
    };
  } catch (err) {
    throw new UnavailableError(`${described(source)} did not answer: ${why(err)}`);
  }
}
