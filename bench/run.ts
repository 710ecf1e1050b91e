import fs from 'node:fs';
import path from 'node:path';

/** Runs every bench/*.ts module's exported `run()` in turn (figures only; nothing asserts timings). */
async function main(): Promise<void> {
  const only = process.argv[2];
  const files = fs
    .readdirSync(__dirname)
    .filter((f) => f.endsWith('.ts') && f !== 'run.ts' && (!only || f.startsWith(only)))
    .sort();
  for (const file of files) {
    const mod = (await import(path.join(__dirname, file))) as { run?: () => Promise<void> };
    if (typeof mod.run !== 'function') continue;
    console.log(`\n== bench/${file}`);
    await mod.run();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
