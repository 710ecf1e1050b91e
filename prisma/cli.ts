import { loadConfig } from '../core/config';
import { appliedMigrations, draftMigration, migrateDown, migrateUp, readMigrations } from './migrate';

/** `npm run db:migrate | db:rollback [steps] | db:status | db:draft <name>` */
async function main(): Promise<void> {
  const [command, arg] = process.argv.slice(2);
  const url = loadConfig(process.env).database.url;
  switch (command) {
    case 'up': {
      const applied = await migrateUp(url);
      console.log(applied.length ? `applied: ${applied.join(', ')}` : 'database is up to date');
      return;
    }
    case 'down': {
      const steps = arg === undefined ? 1 : Number(arg);
      if (!Number.isInteger(steps) || steps < 1)
        throw new Error(`steps must be a positive integer, not ${arg}`);
      const rolledBack = await migrateDown(url, steps);
      console.log(rolledBack.length ? `rolled back: ${rolledBack.join(', ')}` : 'nothing to roll back');
      return;
    }
    case 'status': {
      const applied = new Set(await appliedMigrations(url));
      for (const m of readMigrations())
        console.log(`${applied.has(m.name) ? 'applied ' : 'pending '} ${m.name}`);
      return;
    }
    case 'draft': {
      if (!arg) throw new Error('usage: db:draft <name>');
      const dir = await draftMigration(url, arg);
      console.log(
        dir
          ? `drafted ${dir}: review migration.sql and down.sql`
          : 'schema and database agree; nothing to draft',
      );
      return;
    }
    default:
      throw new Error('usage: prisma/cli.ts up | down [steps] | status | draft <name>');
  }
}

main().catch((err: unknown) => {
  console.error(`db: ${(err as Error).message}`);
  process.exit(1);
});
