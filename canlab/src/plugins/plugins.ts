/**
 * User plugins: JS files declaring PLUGIN_NAME, PLUGIN_VERSION and register(app). Listing reads
 * them as text (metadata.ts); code runs only for files whose SHA-256 the user approved
 * (trust.ts), and what runs is exactly the bytes that were hashed.
 */
import { readdir, readFile } from 'node:fs/promises';
import Module, { createRequire } from 'node:module';
import path from 'node:path';
import { configDir } from '../config-dir';
import { CanlabInputError } from '../errors';
import { readPluginMetadata, type PluginMetadata } from './metadata';
import { loadApprovals, saveApprovals, sha256 } from './trust';

export type PluginState = 'approved' | 'unapproved' | 'changed';

export interface PluginInfo extends PluginMetadata {
  file: string;
  sha256: string;
  /** `changed`: this path was approved with other content; the edit needs a new approval. */
  state: PluginState;
}

export function pluginsDir(dir = configDir()): string {
  return path.join(dir, 'plugins');
}

async function readPlugin(file: string): Promise<{ content: Buffer; info: Omit<PluginInfo, 'state'> }> {
  const absolute = path.resolve(file);
  let content: Buffer;
  try {
    content = await readFile(absolute);
  } catch (err) {
    throw new CanlabInputError(absolute, `cannot read plugin: ${(err as Error).message}`);
  }
  return {
    content,
    info: { file: absolute, sha256: sha256(content), ...readPluginMetadata(content.toString('utf8')) },
  };
}

/** Metadata and approval state of one plugin file; its code is not run. */
export async function inspectPlugin(file: string, config = configDir()): Promise<PluginInfo> {
  const { info } = await readPlugin(file);
  const approvals = await loadApprovals(config);
  const state: PluginState =
    approvals[info.sha256] !== undefined
      ? 'approved'
      : Object.values(approvals).some((a) => a.path === info.file)
        ? 'changed'
        : 'unapproved';
  return { ...info, state };
}

/** Every `.js`/`.cjs` file in the plugins folder (`<config_dir>/plugins` by default), by name. */
export async function listPlugins(dir = pluginsDir(), config = configDir()): Promise<PluginInfo[]> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw new CanlabInputError(dir, `cannot list plugins: ${(err as Error).message}`);
  }
  const files = names.filter((n) => /\.c?js$/.test(n)).sort();
  return Promise.all(files.map((n) => inspectPlugin(path.join(dir, n), config)));
}

/** Approves the file's current content (replacing an approval of its earlier content). */
export async function approvePlugin(file: string, config = configDir()): Promise<PluginInfo> {
  const { info } = await readPlugin(file);
  if (info.problems.length > 0)
    throw new CanlabInputError(info.file, `not approved: ${info.problems.join('; ')}`);
  const approvals = await loadApprovals(config);
  for (const [hash, a] of Object.entries(approvals)) if (a.path === info.file) delete approvals[hash];
  approvals[info.sha256] = {
    path: info.file,
    name: info.name,
    version: info.version,
    approvedAt: new Date().toISOString(),
  };
  await saveApprovals(approvals, config);
  return { ...info, state: 'approved' };
}

/** Withdraws approval of the file (any content of it); false when it had none. */
export async function revokePlugin(file: string, config = configDir()): Promise<boolean> {
  const absolute = path.resolve(file);
  const approvals = await loadApprovals(config);
  const hashes = Object.entries(approvals)
    .filter(([, a]) => a.path === absolute)
    .map(([h]) => h);
  for (const h of hashes) delete approvals[h];
  if (hashes.length > 0) await saveApprovals(approvals, config);
  return hashes.length > 0;
}

export interface LoadedPlugin {
  info: PluginInfo;
  error?: string;
}

/**
 * Runs every approved plugin in `dir` and calls its register(app); unapproved and changed ones
 * are returned untouched (their code is never evaluated). A plugin that throws is reported, not
 * fatal. The code run is the buffer that was hashed, so a file swapped after the check never runs.
 */
export async function loadPlugins(
  app: unknown,
  dir = pluginsDir(),
  config = configDir(),
): Promise<LoadedPlugin[]> {
  const approvals = await loadApprovals(config);
  const results: LoadedPlugin[] = [];
  for (const info of await listPlugins(dir, config)) {
    if (info.state !== 'approved') {
      results.push({ info });
      continue;
    }
    const { content, info: current } = await readPlugin(info.file);
    if (approvals[current.sha256] === undefined) {
      results.push({ info: { ...current, state: 'changed' } });
      continue;
    }
    try {
      const exports = runModule(content.toString('utf8'), info.file);
      const register = (exports as { register?: unknown }).register;
      if (typeof register !== 'function') throw new Error('exports no register function');
      await (register as (app: unknown) => unknown)(app);
      results.push({ info });
    } catch (err) {
      results.push({ info, error: err instanceof Error ? err.message : String(err) });
    }
  }
  return results;
}

/** Evaluates CommonJS source as the module at `file` (full privileges, as the spec says plugins have). */
function runModule(source: string, file: string): unknown {
  const mod = new Module(file);
  mod.filename = file;
  mod.paths = (Module as unknown as { _nodeModulePaths(dir: string): string[] })._nodeModulePaths(
    path.dirname(file),
  );
  const wrapper = new Function('exports', 'require', 'module', '__filename', '__dirname', source) as (
    ...args: unknown[]
  ) => void;
  wrapper.call(mod.exports, mod.exports, createRequire(file), mod, file, path.dirname(file));
  return mod.exports;
}
