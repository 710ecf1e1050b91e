import { existsSync, mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runCli } from '../../src/cli/main';
import { readPluginMetadata } from '../../src/plugins/metadata';
import { approvePlugin, listPlugins, loadPlugins, revokePlugin } from '../../src/plugins/plugins';

let tmp: string;
let config: string;
let dir: string;
let marker: string;
beforeEach(() => {
  tmp = mkdtempSync(path.join(os.tmpdir(), 'canlab-plugins-'));
  config = path.join(tmp, 'config');
  dir = path.join(config, 'plugins');
  mkdirSync(dir, { recursive: true });
  marker = path.join(tmp, 'top-level-ran');
});
afterEach(() => rmSync(tmp, { recursive: true, force: true }));

/** A plugin whose top level writes `marker`: if that file appears, its code ran. */
function writePlugin(version: string): string {
  const file = path.join(dir, 'marker.js');
  writeFileSync(
    file,
    `// PLUGIN_NAME = 'commented out'
const fs = require('node:fs');
fs.writeFileSync(${JSON.stringify(marker)}, 'ran');
const PLUGIN_NAME = "Marker \\"demo\\"";
const PLUGIN_VERSION = '${version}';
function register(app) { app.registered.push(PLUGIN_NAME + ' ' + PLUGIN_VERSION); }
module.exports = { PLUGIN_NAME, PLUGIN_VERSION, register };
`,
  );
  return file;
}

it('lists an unapproved plugin from its text without running it, runs it only after approval, and asks again after an edit', async () => {
  const file = writePlugin('1.0.0');
  const listed = await listPlugins(dir, config);
  expect(listed).toEqual([
    expect.objectContaining({
      file,
      name: 'Marker "demo"',
      version: '1.0.0',
      state: 'unapproved',
      problems: [],
    }),
  ]);
  const app = { registered: [] as string[] };
  expect((await loadPlugins(app, dir, config))[0]!.info.state).toBe('unapproved');
  expect(app.registered).toEqual([]);
  expect(existsSync(marker)).toBe(false);

  await approvePlugin(file, config);
  expect(existsSync(marker)).toBe(false); // approving does not run it either
  const loaded = await loadPlugins(app, dir, config);
  expect(loaded[0]!.error).toBeUndefined();
  expect(app.registered).toEqual(['Marker "demo" 1.0.0']);
  expect(existsSync(marker)).toBe(true);

  rmSync(marker);
  writePlugin('1.0.1'); // an edit: new hash
  expect((await listPlugins(dir, config))[0]).toMatchObject({ version: '1.0.1', state: 'changed' });
  await loadPlugins(app, dir, config);
  expect(existsSync(marker)).toBe(false);
  expect(app.registered).toHaveLength(1);

  await approvePlugin(file, config);
  expect(await revokePlugin(file, config)).toBe(true);
  await loadPlugins(app, dir, config);
  expect(existsSync(marker)).toBe(false);
});

it('reads metadata statically and names what is missing', () => {
  expect(
    readPluginMetadata(
      `exports.PLUGIN_NAME = 'a'; exports.PLUGIN_VERSION = "2"; exports.register = (app) => {};`,
    ),
  ).toEqual({ name: 'a', version: '2', problems: [] });
  expect(readPluginMetadata(`const PLUGIN_NAME = 'x' + y; /* PLUGIN_VERSION = '1' */`).problems).toEqual([
    'PLUGIN_NAME is not assigned a plain string literal',
    'PLUGIN_VERSION is not declared',
    'no register(app) function is declared',
  ]);
});

it('canlab plugins list/approve/revoke work through the config dir', async () => {
  const file = writePlugin('3.1');
  const saved = process.env['CANLAB_CONFIG_DIR'];
  process.env['CANLAB_CONFIG_DIR'] = config;
  try {
    let out = '';
    const io = { stdout: (t: string) => (out += t), stderr: (t: string) => (out += t) };
    expect(await runCli(['plugins', 'list'], io)).toBe(0);
    expect(out).toMatch(/unapproved\tMarker "demo"\t3\.1\t/);
    expect(await runCli(['plugins', 'approve', file], io)).toBe(0);
    expect(await runCli(['plugins', 'list'], io)).toBe(0);
    expect(out).toMatch(/approved\tMarker "demo"\t3\.1\t/);
    expect(await runCli(['plugins', 'revoke', file], io)).toBe(0);
    writeFileSync(path.join(dir, 'broken.js'), 'module.exports = {};');
    expect(await runCli(['plugins', 'approve', path.join(dir, 'broken.js')], io)).toBe(1);
    expect(out).toContain('not approved: PLUGIN_NAME is not declared');
    expect(existsSync(marker)).toBe(false);
  } finally {
    if (saved === undefined) delete process.env['CANLAB_CONFIG_DIR'];
    else process.env['CANLAB_CONFIG_DIR'] = saved;
  }
});
