'use strict';
// Both bins run the JavaScript that `npm run build -w canlab` writes to dist/: compiling the
// TypeScript through tsx at every start costs about half a second. A dist/ that is missing or older
// than a source would run stale code, so then the sources run through tsx instead, with one line on
// stderr (stdout may carry the MCP protocol).
const fs = require('node:fs');
const path = require('node:path');

const ROOT = path.join(__dirname, '..');

/** Whether no `.ts` under `dir`, however deep, changed after `builtAt` (ms since the epoch). */
function sourcesOlderThan(dir, builtAt) {
  // Walked by hand: readdirSync's `recursive` with a path.join per file took about 15 ms of a cold
  // start, this about 3 ms, and every bin start pays it.
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const file = dir + path.sep + entry.name;
    const newer = entry.isDirectory()
      ? !sourcesOlderThan(file, builtAt)
      : entry.name.endsWith('.ts') && fs.statSync(file).mtimeMs > builtAt;
    if (newer) return false;
  }
  return true;
}

/**
 * Whether `<root>/dist` was built after every `.ts` under `<root>/src` last changed. `tsc -b` stamps
 * dist/.tsbuildinfo on every build, even one that had nothing to emit.
 */
function distIsCurrent(root) {
  let builtAt;
  try {
    builtAt = fs.statSync(path.join(root, 'dist', '.tsbuildinfo')).mtimeMs;
  } catch {
    return false;
  }
  return sourcesOlderThan(path.join(root, 'src'), builtAt);
}

/**
 * `src/<module>.ts` of this package, built when dist/ is current, else through tsx. The commands
 * load lazily with import(), which only tsx's `--import` hook covers (its require hook does not),
 * so a stale dist/ re-runs this bin once in a child node with that hook; the child finds the flag
 * and loads the sources.
 */
function loadEntry(module, program) {
  if (distIsCurrent(ROOT)) return require(path.join(ROOT, 'dist', `${module}.js`));
  if (process.env.CANLAB_RUNNING_SOURCES !== '1') {
    process.stderr.write(
      `${program}: dist/ is missing or older than src/, running the TypeScript through tsx (slow start); build it with npm run build -w canlab\n`,
    );
    const child = require('node:child_process').spawnSync(
      process.execPath,
      ['--import', 'tsx', process.argv[1], ...process.argv.slice(2)],
      { stdio: 'inherit', env: { ...process.env, CANLAB_RUNNING_SOURCES: '1' } },
    );
    process.exit(child.status ?? 70);
  }
  return require(path.join(ROOT, 'src', `${module}.ts`));
}

module.exports = { distIsCurrent, loadEntry };
