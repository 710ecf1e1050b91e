import pg from 'pg';
import type { Db } from '../db';

/**
 * Raw SQL as the export needs it: slices compile to SQL text (core/curation/slice.ts), and the
 * same statements run from a request (through Prisma) and from the export's activities (through a
 * node-postgres pool of their own, which streams a million rows faster than Prisma's raw path).
 */
export type SqlQuery = <R>(text: string, params: readonly unknown[]) => Promise<R[]>;

export const prismaSql =
  (db: Db): SqlQuery =>
  <R>(text: string, params: readonly unknown[]) =>
    db.$queryRawUnsafe<R[]>(text, ...params);

export function createSqlPool(databaseUrl: string): { sql: SqlQuery; close(): Promise<void> } {
  // Idle connections end after a while and never hold the process open; one the server ends (a
  // restart, a dropped test database) is replaced by the next query instead of crashing the worker.
  // The export's statements are many and page-sized: compiling one (JIT, some 40 ms for the gate)
  // costs more than it saves, and parallel workers would take the cores the export's own encoding
  // and uploads overlap with, so its connections run without either.
  const pool = new pg.Pool({
    connectionString: databaseUrl,
    max: 4,
    idleTimeoutMillis: 10_000,
    allowExitOnIdle: true,
    options: '-c jit=off -c max_parallel_workers_per_gather=0',
  });
  pool.on('error', () => undefined);
  return {
    sql: async <R>(text: string, params: readonly unknown[]) =>
      (await pool.query(text, params as unknown[])).rows as R[],
    close: () => pool.end(),
  };
}
