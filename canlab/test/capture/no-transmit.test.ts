/**
 * The capture kit has no code path that can transmit: walking the static imports of the
 * `canlab capture` command reaches neither the transmit module nor a frame encoder, and the
 * receivers it gets expose no send method.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';

const SRC = path.resolve(__dirname, '../../src');

function resolveImport(from: string, spec: string): string | undefined {
  if (!spec.startsWith('.')) return undefined;
  const base = path.resolve(path.dirname(from), spec);
  for (const candidate of [`${base}.ts`, path.join(base, 'index.ts')]) {
    try {
      readFileSync(candidate);
      return candidate;
    } catch {
      // try the next form
    }
  }
  throw new Error(`${from}: cannot resolve ${spec}`);
}

/** Every canlab source file reachable from `entry` by import/export/require/import(). */
function moduleGraph(entry: string): Set<string> {
  const seen = new Set<string>();
  const stack = [entry];
  while (stack.length > 0) {
    const file = stack.pop()!;
    if (seen.has(file)) continue;
    seen.add(file);
    const text = readFileSync(file, 'utf8');
    const specs = [
      ...text.matchAll(/(?:from\s+|import\s*\(\s*|require\s*\(\s*|import\s+)['"]([^'"]+)['"]/g),
    ].map((m) => m[1]!);
    for (const spec of specs) {
      const resolved = resolveImport(file, spec);
      if (resolved !== undefined) stack.push(resolved);
    }
  }
  return seen;
}

it('the capture command never imports the transmit capability', () => {
  const graph = moduleGraph(path.join(SRC, 'cli/commands/capture.ts'));
  const rel = [...graph].map((f) => path.relative(SRC, f));
  // sanity: the walk does reach the receivers and the REST server
  expect(rel).toEqual(
    expect.arrayContaining([
      'adapters/receive.ts',
      'adapters/backends/virtual.ts',
      'capture/session.ts',
      'rest/server.ts',
    ]),
  );
  expect(rel).not.toContain('adapters/transmit.ts');
  for (const file of graph) {
    const text = readFileSync(file, 'utf8');
    expect({
      file: path.relative(SRC, file),
      encodes: /encodeFrameDatagram|openTransmitter/.test(text),
    }).toEqual({ file: path.relative(SRC, file), encodes: false });
  }
  // the workspace the capture serves over HTTP never gets a transmitter, so even its inject refuses
  for (const file of rel.filter((f) => f.startsWith('capture/') || f === 'cli/commands/capture.ts')) {
    expect({
      file,
      attaches: readFileSync(path.join(SRC, file), 'utf8').includes('attachTransmitter'),
    }).toEqual({ file, attaches: false });
  }
});

it('the walk does find the transmit module where it is imported', () => {
  const graph = [...moduleGraph(path.join(SRC, 'adapters/transmit.ts'))].map((f) => path.relative(SRC, f));
  expect(graph).toContain('adapters/wire.ts');
});
