import fs from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import {
  MIGRATIONS_DIR,
  SCHEMA_PATH,
  SNAPSHOT_FILE,
  appliedMigrations,
  latestSchemaSnapshot,
  migrateDown,
  migrateUp,
  readMigrations,
  schemaCreationScript,
} from '../prisma/migrate';
import { createTestDatabase, type TestDatabase } from '../testkit/database';

/** Every migration goes up, down and up again on a real PostgreSQL (spec Versioning 4). */

let db: TestDatabase;
let reference: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase({ migrate: false });
  reference = await createTestDatabase({ migrate: false });
});
afterAll(async () => {
  await db?.drop();
  await reference?.drop();
});

async function query<T extends pg.QueryResultRow>(url: string, sql: string): Promise<T[]> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return (await c.query<T>(sql)).rows;
  } finally {
    await c.end();
  }
}

/**
 * The catalog facts a migration can get wrong, order-free: columns with type, nullability and
 * default; indexes; constraints; enum values. Constraint and index names are part of it.
 */
async function describeSchema(url: string): Promise<string[]> {
  const columns = await query<{ d: string }>(
    url,
    `
    SELECT format('column %s.%s %s null=%s default=%s', table_name, column_name,
                  CASE WHEN data_type IN ('ARRAY', 'USER-DEFINED') THEN udt_name ELSE data_type END
                    || coalesce('(' || character_maximum_length || ')', ''),
                  is_nullable, coalesce(column_default, '-')) AS d
      FROM information_schema.columns WHERE table_schema = 'public' AND table_name <> '_prisma_migrations'`,
  );
  const indexes = await query<{ d: string }>(
    url,
    `
    SELECT 'index ' || indexdef AS d FROM pg_indexes WHERE schemaname = 'public' AND tablename <> '_prisma_migrations'`,
  );
  const constraints = await query<{ d: string }>(
    url,
    `
    SELECT format('constraint %s %s %s', c.conrelid::regclass, c.conname, pg_get_constraintdef(c.oid)) AS d
      FROM pg_constraint c JOIN pg_namespace n ON n.oid = c.connamespace
     WHERE n.nspname = 'public' AND c.conrelid::regclass::text <> '_prisma_migrations'`,
  );
  const enums = await query<{ d: string }>(
    url,
    `
    SELECT format('enum %s %s', t.typname, string_agg(e.enumlabel, ',' ORDER BY e.enumsortorder)) AS d
      FROM pg_type t JOIN pg_enum e ON e.enumtypid = t.oid GROUP BY t.typname`,
  );
  return [...columns, ...indexes, ...constraints, ...enums].map((r) => r.d).sort();
}

async function tables(url: string): Promise<string[]> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    const r = await c.query<{ t: string }>(
      `SELECT table_name AS t FROM information_schema.tables WHERE table_schema = 'public' AND table_name <> '_prisma_migrations' ORDER BY 1`,
    );
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
  expect(schema).toEqual(
    expect.arrayContaining([
      'users',
      'sessions',
      'frames',
      'objects',
      'tracks',
      'reviews',
      'provenance',
      'pii_audits',
      'control_samples',
      'checkpoints',
      'gold_sets',
      'inference_runs',
      'agent_runs',
      'ontology_classes',
      'audit_log',
      'notifications',
      'rate_limit_buckets',
    ]),
  );
  expect(await appliedMigrations(db.url)).toEqual(all);
  expect(await migrateUp(db.url)).toEqual([]);

  expect(await migrateDown(db.url, all.length)).toEqual([...all].reverse());
  expect(await tables(db.url)).toEqual([]);
  expect(await appliedMigrations(db.url)).toEqual([]);

  expect(await migrateUp(db.url)).toEqual(all);
  expect(await tables(db.url)).toEqual(schema);
});

it('builds exactly the schema that schema.prisma describes', async () => {
  // Hand-written or drafted, the migrations must agree with the engine's own reading of the schema.
  await migrateUp(db.url);
  const script = await schemaCreationScript(reference.url);
  await query(reference.url, script);
  expect(await describeSchema(db.url)).toEqual(await describeSchema(reference.url));
});

it("keeps the newest migration's schema snapshot equal to schema.prisma", () => {
  // Drafting diffs against this snapshot: a schema change without its migration fails here.
  const newest = readMigrations().at(-1)!.name;
  expect(fs.existsSync(path.join(MIGRATIONS_DIR, newest, SNAPSHOT_FILE))).toBe(true);
  expect(latestSchemaSnapshot()).toBe(fs.readFileSync(SCHEMA_PATH, 'utf8'));
});
