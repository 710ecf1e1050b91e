import { PrismaPg } from '@prisma/adapter-pg';
import { PrismaClient } from '../generated/prisma/client';

/** The Prisma client over node-postgres; one per process. */
export type Db = PrismaClient;

export function createDb(databaseUrl: string, opts: { maxConnections?: number } = {}): Db {
  return new PrismaClient({
    adapter: new PrismaPg({ connectionString: databaseUrl, max: opts.maxConnections ?? 10 }),
  });
}
