/**
 * The bins run the built JavaScript in dist/, not the TypeScript through tsx (which costs about half
 * a second at every start), and fall back to tsx only when dist/ is missing or older than src/.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

jest.setTimeout(60_000);

const ROOT = path.resolve(__dirname, '../..');
const { distIsCurrent } = jest.requireActual<{ distIsCurrent(root: string): boolean }>('../../bin/entry');

function node(args: string[]): { status: number | null; stdout: string; stderr: string } {
  return spawnSync(process.execPath, args, { cwd: ROOT, encoding: 'utf8', timeout: 200_000 });
}

/** Every module `node <bin> <args>` loaded, as it exits. */
function modulesLoadedBy(bin: string, ...args: string[]): string[] {
  const probe = `process.on('exit', () => console.log(JSON.stringify(Object.keys(require.cache))));
    require(process.argv[1]);`;
  const r = node(['-e', probe, '--', bin, ...args]);
  expect(r.status).toBe(0);
  return JSON.parse(r.stdout.trim().split('\n').pop()!) as string[];
}

beforeAll(() => {
  // What `./platform test` has done already (install_node_deps); quick when dist/ is up to date.
  const build = node([require.resolve('typescript/bin/tsc'), '-b', path.join(ROOT, 'tsconfig.build.json')]);
  if (build.status !== 0) throw new Error(`tsc -b canlab/tsconfig.build.json failed:\n${build.stdout}`);
}, 240_000);

describe.each([
  { bin: 'canlab.js', entry: 'cli/main', usage: 'stdout', text: 'usage: canlab <command>' },
  { bin: 'canlab-mcp.js', entry: 'mcp/launcher', usage: 'stderr', text: 'usage: canlab-mcp' },
] as const)('bin/$bin', ({ bin, entry, usage, text }) => {
  const file = path.join(ROOT, 'bin', bin);

  it('--help exits 0 and prints usage, and nothing else', () => {
    const r = node([file, '--help']);
    expect(r.status).toBe(0);
    expect(r[usage]).toContain(text);
    expect(r[usage === 'stdout' ? 'stderr' : 'stdout']).toBe('');
  });

  it(`loads dist/${entry}.js and neither tsx nor a source file`, () => {
    const loaded = modulesLoadedBy(file, '--help');
    expect(loaded).toContain(path.join(ROOT, 'dist', `${entry}.js`));
    expect(
      loaded.filter(
        (m) => m.startsWith(path.join(ROOT, 'src') + path.sep) || m.includes('/node_modules/tsx/'),
      ),
    ).toEqual([]);
  });
});

it('canlab --help loads the command list but no command, and no dependency', () => {
  // Each command's implementation (what they import includes the MCP SDK and zod) loads only when it
  // runs; every module added to this list costs every start.
  const loaded = modulesLoadedBy(path.join(ROOT, 'bin', 'canlab.js'), '--help');
  expect(loaded.map((m) => path.relative(ROOT, m)).sort()).toEqual([
    'bin/canlab.js',
    'bin/entry.js',
    'dist/cli/commands/index.js',
    'dist/cli/main.js',
    'dist/errors.js',
  ]);
});

it('runs a lazily loaded command from the sources when dist/ is missing', () => {
  // A copy of the package without dist/: the fallback must reach commands behind import() too.
  const copy = fs.mkdtempSync(path.join(os.tmpdir(), 'canlab-sources-'));
  try {
    for (const dir of ['bin', 'src'])
      fs.cpSync(path.join(ROOT, dir), path.join(copy, dir), { recursive: true });
    fs.copyFileSync(path.join(ROOT, 'package.json'), path.join(copy, 'package.json'));
    fs.symlinkSync(path.resolve(ROOT, '../node_modules'), path.join(copy, 'node_modules'));
    const dbc = path.join(copy, 'tiny.dbc');
    fs.writeFileSync(
      dbc,
      'VERSION ""\n\nBU_: ECU\n\nBO_ 256 SPEED: 2 ECU\n SG_ KPH : 0|16@1+ (0.1,0) [0|6553.5] "km/h" ECU\n',
    );
    const r = node([path.join(copy, 'bin', 'canlab.js'), 'lint', dbc]);
    expect(r.stderr).toContain('dist/ is missing or older than src/');
    expect({ status: r.status, stdout: r.stdout }).toEqual({
      status: 0,
      stdout: expect.stringContaining('1 message, 1 signal; 0 errors'),
    });
  } finally {
    fs.rmSync(copy, { recursive: true, force: true });
  }
});

describe('distIsCurrent', () => {
  let root: string;
  const at = (file: string, seconds: number): void => {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, '');
    fs.utimesSync(file, seconds, seconds);
  };
  beforeEach(() => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'canlab-dist-'));
    at(path.join(root, 'src', 'main.ts'), 1000);
    at(path.join(root, 'src', 'window', 'app.js'), 3000);
  });
  afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

  it('is false without a build', () => {
    expect(distIsCurrent(root)).toBe(false);
  });

  it('is true when the build is newer than every TypeScript source (src/window/ is read as it is)', () => {
    at(path.join(root, 'dist', '.tsbuildinfo'), 2000);
    expect(distIsCurrent(root)).toBe(true);
  });

  it('is false once a source, however deep, changed after the build', () => {
    at(path.join(root, 'dist', '.tsbuildinfo'), 2000);
    at(path.join(root, 'src', 'cli', 'commands', 'ids.ts'), 2001);
    expect(distIsCurrent(root)).toBe(false);
  });
});
