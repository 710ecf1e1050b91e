import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { migrateUp } from '../prisma/migrate';
import { localStackEnv } from './stack';

export interface TestDatabase {
  url: string;
  drop(): Promise<void>;
}

function withDatabase(url: string, name: string): string {
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
}

/** A fresh database on the stack's PostgreSQL, migrated to the newest schema unless told not to. */
export async function createTestDatabase(opts: { migrate?: boolean } = {}): Promise<TestDatabase> {
  const adminUrl = localStackEnv().DATABASE_URL!;
  const name = `t_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = withDatabase(adminUrl, name);
  if (opts.migrate ?? true) await migrateUp(url);
  return {
    url,
    async drop() {
      const c = new pg.Client({ connectionString: adminUrl });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await c.end();
    },
  };
}
