import { Client as MinioClient } from 'minio';
import type { AppConfig } from '../../core/config';

/** The buckets the platform writes, by role (config `storage.buckets`). */
export type BucketRole = keyof AppConfig['storage']['buckets'];

export interface ObjectStore {
  client: MinioClient;
  bucket(role: BucketRole): string;
  /** Creates every configured bucket that does not exist yet (idempotent). */
  ensureBuckets(): Promise<void>;
  /** Cheap liveness probe: lists nothing, just asks whether the frames bucket exists. */
  ping(): Promise<void>;
}

/** A MinIO client for the configured endpoint; `partSize` fixes the part size of streamed uploads. */
export function createMinioClient(
  config: AppConfig['storage'],
  opts: { partSize?: number } = {},
): MinioClient {
  return new MinioClient({
    endPoint: config.endpoint,
    port: config.port,
    useSSL: config.useSsl,
    accessKey: config.accessKey,
    secretKey: config.secretKey,
    region: config.region,
    ...(opts.partSize ? { partSize: opts.partSize } : {}),
  });
}

export function createObjectStore(config: AppConfig['storage']): ObjectStore {
  const client = createMinioClient(config);
  const bucket = (role: BucketRole): string => config.buckets[role];
  return {
    client,
    bucket,
    async ensureBuckets() {
      for (const name of Object.values(config.buckets)) {
        if (!(await client.bucketExists(name))) await client.makeBucket(name, config.region);
      }
    },
    async ping() {
      await client.bucketExists(bucket('frames'));
    },
  };
}
