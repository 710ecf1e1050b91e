import fs from 'node:fs';
import path from 'node:path';
import { build } from 'esbuild';

/**
 * Builds the reviewer UI into web/dist: one bundled, minified script and stylesheet with content
 * hashes in their names (cached for a year), and index.html naming them (never cached).
 */
export async function buildWeb(opts: { outDir?: string } = {}): Promise<string> {
  const root = __dirname;
  const outDir = opts.outDir ?? path.join(root, 'dist');
  fs.rmSync(outDir, { recursive: true, force: true });
  const result = await build({
    entryPoints: { app: path.join(root, 'src/main.tsx'), style: path.join(root, 'static/app.css') },
    bundle: true,
    minify: true,
    sourcemap: true,
    format: 'esm',
    target: 'chrome120',
    jsx: 'automatic',
    jsxImportSource: 'preact',
    tsconfig: path.join(root, 'tsconfig.json'),
    outdir: path.join(outDir, 'assets'),
    entryNames: '[name]-[hash]',
    metafile: true,
    logLevel: 'warning',
  });
  const outputs = Object.entries(result.metafile.outputs);
  const named = (entry: string) => {
    const found = outputs.find(([file, o]) => o.entryPoint?.endsWith(entry) && !file.endsWith('.map'));
    if (!found) throw new Error(`the web build produced nothing for ${entry}`);
    return '/' + path.relative(outDir, path.resolve(found[0])).split(path.sep).join('/');
  };
  const html = fs
    .readFileSync(path.join(root, 'static/index.html'), 'utf8')
    .replace('%APP_JS%', named('src/main.tsx'))
    .replace('%APP_CSS%', named('static/app.css'));
  fs.writeFileSync(path.join(outDir, 'index.html'), html);
  return outDir;
}

if (require.main === module) {
  buildWeb().then(
    (dir) => console.log(`web UI built into ${dir}`),
    (err: unknown) => {
      console.error(err);
      process.exit(1);
    },
  );
}
