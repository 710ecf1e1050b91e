/**
 * Start-up benchmark: `node bin/canlab.js --help` as a fresh process, beside the same command with
 * the sources compiled through tsx (how the bin started before it ran dist/) and a bare `node -e 0`
 * (what Node itself costs). Median wall time and CPU time (user + system) of several runs each,
 * after one untimed run. Wall time is the target; CPU time varies less when other jobs share the
 * machine.
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '..');
const RUNS = 11;
const TARGET_MS = 150;

/** Prepended to each measured script: the process writes its own CPU time to fd 3 as it exits. */
const REPORT_CPU = `process.on('exit', () => { const u = process.cpuUsage(); require('node:fs').writeSync(3, String((u.user + u.system) / 1000)); });`;

interface Timing {
  wallMs: number;
  cpuMs: number;
}

function median(values: number[]): number {
  return [...values].sort((a, b) => a - b)[(values.length - 1) >> 1]!;
}

/** `script` run as `node -e` with `args` after it, as `process.argv.slice(1)`. */
function measure(script: string, args: string[] = []): Timing {
  const run = (): Timing => {
    const start = process.hrtime.bigint();
    const r = spawnSync(process.execPath, ['-e', REPORT_CPU + script, '--', ...args], {
      cwd: ROOT,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe', 'pipe'],
    });
    const wallMs = Number(process.hrtime.bigint() - start) / 1e6;
    // Anything on stderr (the bin's note that dist/ is stale, most likely) means this is not the
    // path being measured.
    if (r.status !== 0 || r.stderr !== '')
      throw new Error(`node -e ${script} exited ${r.status}: ${r.stderr.trim()}`);
    return { wallMs, cpuMs: Number(r.output[3]) };
  };
  run();
  const timings = Array.from({ length: RUNS }, run);
  return { wallMs: median(timings.map((t) => t.wallMs)), cpuMs: median(timings.map((t) => t.cpuMs)) };
}

export function benchStartup(): void {
  const main = path.join(ROOT, 'src', 'cli', 'main.ts');
  const viaTsx = `require('tsx/cjs'); require(${JSON.stringify(main)}).runCli(['--help'], { stdout: (t) => process.stdout.write(t), stderr: (t) => process.stderr.write(t) });`;
  // The bin reads its arguments from process.argv.slice(2), which `node -e <script> -- <bin> --help`
  // gives it as `node <bin> --help` would.
  const built = measure('require(process.argv[1]);', [path.join(ROOT, 'bin', 'canlab.js'), '--help']);
  const tsx = measure(viaTsx);
  const bare = measure('0');
  const ms = (t: Timing): string => `${t.wallMs.toFixed(0)} ms (CPU ${t.cpuMs.toFixed(0)} ms)`;
  console.log(
    `start-up, canlab --help (median of ${RUNS}): ${ms(built)} built (target < ${TARGET_MS} ms), ` +
      `${ms(tsx)} through tsx, ${ms(bare)} bare node`,
  );
}

if (require.main === module) benchStartup();
