import pg from 'pg';
import { appliedMigrations, migrateDown, migrateUp, readMigrations } from '../prisma/migrate';
import { createTestDatabase, type TestDatabase } from './helpers/database';

/** Every migration goes up, down and up again on a real PostgreSQL (spec Versioning 4). */

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase({ migrate: false });
});
afterAll(() => db?.drop());

async function tables(url: string): Promise<string[]> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    const r = await c.query<{ t: string }>(`SELECT table_name AS t FROM information_schema.tables WHERE table_schema = 'public' AND table_name <> '_prisma_migrations' ORDER BY 1`);
    return r.rows.map((x) => x.t);
  } finally {
    await c.end();
  }
}

it('applies all migrations, rolls all back, and applies them again', async () => {
  const all = readMigrations().map((m) => m.name);
  expect(all[0]).toBe('0001_init');

  expect(await migrateUp(db.url)).toEqual(all);
  const schema = await tables(db.url);
  expect(schema).toEqual(expect.arrayContaining(['users', 'sessions', 'frames', 'objects', 'tracks', 'reviews', 'provenance', 'pii_audits', 'control_samples', 'checkpoints', 'gold_sets', 'inference_runs', 'agent_runs', 'ontology_classes', 'audit_log', 'notifications', 'rate_limit_buckets']));
  expect(await appliedMigrations(db.url)).toEqual(all);
  expect(await migrateUp(db.url)).toEqual([]);

  expect(await migrateDown(db.url, all.length)).toEqual([...all].reverse());
  expect(await tables(db.url)).toEqual([]);
  expect(await appliedMigrations(db.url)).toEqual([]);

  expect(await migrateUp(db.url)).toEqual(all);
  expect(await tables(db.url)).toEqual(schema);
});
