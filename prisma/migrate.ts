import fs from 'node:fs';
import path from 'node:path';
import { PrismaPg } from '@prisma/adapter-pg';
import { bindMigrationAwareSqlAdapterFactory } from '@prisma/driver-adapter-utils';
import pg from 'pg';
import type * as Engine from '@prisma/schema-engine-wasm/schema_engine_bg';

/**
 * Ordered migrations `prisma/migrations/NNNN_name/{migration.sql,down.sql}`, applied with Prisma's
 * own WASM schema engine (the Migrate binary cannot be downloaded here). `up` writes the standard
 * `_prisma_migrations` rows; `down` runs the newest applied migration's down.sql and removes its
 * row in one transaction, so `up` can apply it again.
 */

export const MIGRATIONS_DIR = path.join(__dirname, 'migrations');
export const SCHEMA_PATH = path.join(__dirname, 'schema.prisma');
const NO_FILTER = { externalTables: [], externalEnums: [] };

type SchemaEngine = Engine.SchemaEngine;

type WasmExports = Record<string, unknown>;
/** Node's global WebAssembly, typed to the one call used here (the DOM lib would bring it all). */
const wasm = (
  globalThis as unknown as {
    WebAssembly: {
      instantiate(bytes: Buffer, imports: object): Promise<{ instance: { exports: WasmExports } }>;
    };
  }
).WebAssembly;

/**
 * The package's entry imports the .wasm file as an ES module, which Node 20 only allows behind a
 * flag; instantiating the bytes against its JS glue ourselves needs no flag.
 */
async function loadEngineModule(): Promise<typeof Engine> {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const glue = require('@prisma/schema-engine-wasm/schema_engine_bg') as typeof Engine & {
    __wbg_set_wasm(exports: WasmExports): void;
  };
  const wasmPath = require.resolve('@prisma/schema-engine-wasm/schema_engine_bg').replace(/\.js$/, '.wasm');
  const { instance } = await wasm.instantiate(fs.readFileSync(wasmPath), { './schema_engine_bg.js': glue });
  glue.__wbg_set_wasm(instance.exports);
  (instance.exports.__wbindgen_start as () => void)();
  return glue;
}

let engineModule: Promise<typeof Engine> | undefined;

/**
 * Connection fields rather than a connection string: the adapter derives other connections as
 * `{ ...config, database }`, and node-postgres lets a connection string override `database`.
 */
function poolConfig(databaseUrl: string): pg.PoolConfig {
  const url = new URL(databaseUrl);
  return {
    host: url.hostname,
    port: Number(url.port || 5432),
    user: decodeURIComponent(url.username),
    password: decodeURIComponent(url.password),
    database: decodeURIComponent(url.pathname.slice(1)),
  };
}

export async function openSchemaEngine(databaseUrl: string): Promise<SchemaEngine> {
  engineModule ??= loadEngineModule();
  const { SchemaEngine } = await engineModule;
  const schema = fs.readFileSync(SCHEMA_PATH, 'utf8');
  const adapter = bindMigrationAwareSqlAdapterFactory(new PrismaPg(poolConfig(databaseUrl)));
  return SchemaEngine.new({ datamodels: [[SCHEMA_PATH, schema]] }, () => undefined, adapter);
}

export interface MigrationOnDisk {
  name: string;
  up: string;
  down: string;
}

export function readMigrations(dir = MIGRATIONS_DIR): MigrationOnDisk[] {
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .filter((d) => d.isDirectory() && /^\d{4}_[a-z0-9_]+$/.test(d.name))
    .map((d) => d.name)
    .sort()
    .map((name) => {
      const downPath = path.join(dir, name, 'down.sql');
      if (!fs.existsSync(downPath)) throw new Error(`migration ${name} has no down.sql`);
      return {
        name,
        up: fs.readFileSync(path.join(dir, name, 'migration.sql'), 'utf8'),
        down: fs.readFileSync(downPath, 'utf8'),
      };
    });
}

function migrationList(dir: string): Engine.MigrationList {
  const lockPath = path.join(dir, 'migration_lock.toml');
  return {
    baseDir: dir,
    lockfile: {
      path: 'migration_lock.toml',
      content: fs.existsSync(lockPath) ? fs.readFileSync(lockPath, 'utf8') : null,
    },
    shadowDbInitScript: '',
    migrationDirectories: readMigrations(dir).map((m) => ({
      path: m.name,
      migrationFile: { path: 'migration.sql', content: { tag: 'ok', value: m.up } },
    })),
  };
}

/** Applies every migration not yet applied; returns their names. */
export async function migrateUp(databaseUrl: string, dir = MIGRATIONS_DIR): Promise<string[]> {
  const engine = await openSchemaEngine(databaseUrl);
  try {
    const out = await engine.applyMigrations({ migrationsList: migrationList(dir), filters: NO_FILTER });
    return out.appliedMigrationNames;
  } finally {
    engine.free();
  }
}

/** Names of applied migrations, oldest first. */
export async function appliedMigrations(databaseUrl: string): Promise<string[]> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const exists = await client.query(`SELECT to_regclass('_prisma_migrations') AS t`);
    if (!exists.rows[0]?.t) return [];
    const rows = await client.query<{ migration_name: string }>(
      `SELECT migration_name FROM _prisma_migrations
        WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL ORDER BY migration_name`,
    );
    return rows.rows.map((r) => r.migration_name);
  } finally {
    await client.end();
  }
}

/** Rolls back the newest `steps` applied migrations, newest first; returns their names. */
export async function migrateDown(databaseUrl: string, steps = 1, dir = MIGRATIONS_DIR): Promise<string[]> {
  const onDisk = new Map(readMigrations(dir).map((m) => [m.name, m]));
  const applied = (await appliedMigrations(databaseUrl)).reverse().slice(0, steps);
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    for (const name of applied) {
      const migration = onDisk.get(name);
      if (!migration) throw new Error(`applied migration ${name} is not in ${dir}; cannot roll it back`);
      await client.query('BEGIN');
      try {
        await client.query(migration.down);
        await client.query('DELETE FROM _prisma_migrations WHERE migration_name = $1', [name]);
        await client.query('COMMIT');
      } catch (err) {
        await client.query('ROLLBACK');
        throw new Error(`rolling back ${name} failed: ${(err as Error).message}`, { cause: err });
      }
    }
    return applied;
  } finally {
    await client.end();
  }
}

/** Each migration folder keeps the schema.prisma it brings the database to. */
export const SNAPSHOT_FILE = 'schema.prisma';

/** The schema the newest migration brings the database to, or undefined before the first. */
export function latestSchemaSnapshot(dir = MIGRATIONS_DIR): string | undefined {
  const newest = readMigrations(dir).at(-1);
  if (!newest) return undefined;
  const file = path.join(dir, newest.name, SNAPSHOT_FILE);
  if (!fs.existsSync(file)) throw new Error(`migration ${newest.name} has no ${SNAPSHOT_FILE} snapshot`);
  return fs.readFileSync(file, 'utf8');
}

/**
 * Drafts the next migration as the difference between the newest migration's schema snapshot and
 * schema.prisma: migration.sql (snapshot → schema), down.sql (schema → snapshot), and the new
 * snapshot. Datamodel-to-datamodel diffs need no database: the WASM engine cannot describe a live
 * PostgreSQL schema through the driver adapter (it fails on the catalogs' "char" columns). Review
 * both SQL files before committing: the engine cannot know about data moves.
 */
export async function draftMigration(
  databaseUrl: string,
  name: string,
  dir = MIGRATIONS_DIR,
): Promise<string | null> {
  if (!/^[a-z0-9_]+$/.test(name)) throw new Error('migration name: lower-case letters, digits and _ only');
  const current = fs.readFileSync(SCHEMA_PATH, 'utf8');
  const previous = latestSchemaSnapshot(dir);
  const engine = await openSchemaEngine(databaseUrl);
  try {
    const model = (content: string): Engine.DiffTarget => ({
      tag: 'schemaDatamodel',
      files: [{ path: SCHEMA_PATH, content }],
    });
    const before: Engine.DiffTarget = previous === undefined ? { tag: 'empty' } : model(previous);
    const up = await engine.diff({
      from: before,
      to: model(current),
      script: true,
      exitCode: null,
      filters: NO_FILTER,
    });
    const down = await engine.diff({
      from: model(current),
      to: before,
      script: true,
      exitCode: null,
      filters: NO_FILTER,
    });
    if (!up.stdout || /^-- This is an empty migration\.?\s*$/.test(up.stdout.trim())) return null;
    const next = String(readMigrations(dir).length + 1).padStart(4, '0');
    const target = path.join(dir, `${next}_${name}`);
    fs.mkdirSync(target, { recursive: true });
    fs.writeFileSync(path.join(target, 'migration.sql'), up.stdout);
    fs.writeFileSync(path.join(target, 'down.sql'), down.stdout ?? '');
    fs.writeFileSync(path.join(target, SNAPSHOT_FILE), current);
    return target;
  } finally {
    engine.free();
  }
}

/** The SQL that creates schema.prisma's database from nothing, as the engine writes it. */
export async function schemaCreationScript(databaseUrl: string): Promise<string> {
  const engine = await openSchemaEngine(databaseUrl);
  try {
    const content = fs.readFileSync(SCHEMA_PATH, 'utf8');
    const out = await engine.diff({
      from: { tag: 'empty' },
      to: { tag: 'schemaDatamodel', files: [{ path: SCHEMA_PATH, content }] },
      script: true,
      exitCode: null,
      filters: NO_FILTER,
    });
    return out.stdout ?? '';
  } finally {
    engine.free();
  }
}
