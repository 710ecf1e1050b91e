import { rmSync } from 'node:fs';
import { TOOL_NAMES } from '../../src/mcp/tools';
import { launchStdio, runLauncher, type LaunchedClient } from './launcher';
import { exerciseEveryTool, exerciseInvalidArguments, expectAllTools } from './scenario';
import { writeScene, type SceneFiles } from './scene';

jest.setTimeout(90_000);

describe('canlab-mcp over stdio', () => {
  let scene: SceneFiles;
  let launched: LaunchedClient;

  beforeAll(async () => {
    scene = await writeScene();
    launched = await launchStdio();
  });
  afterAll(async () => {
    await launched.close();
    rmSync(scene.dir, { recursive: true, force: true });
  });

  it('lists the 29 tools, loads a capture on request, answers every tool, and refuses bad arguments', async () => {
    await expectAllTools(launched.client);
    expect(launched.client.getServerVersion()).toMatchObject({ name: 'canlab' });
    const called = await exerciseEveryTool(launched.client, scene);
    expect(called.size).toBe(TOOL_NAMES.length);
    const refused = await exerciseInvalidArguments(launched.client, scene);
    expect(refused.size).toBe(TOOL_NAMES.length);
    // Nothing but protocol on stdout: any other line would have surfaced as a transport error.
    expect(launched.errors).toEqual([]);
    expect(launched.stderr()).toContain('canlab-mcp: 29 tools on stdio');
  });
});

describe('canlab-mcp usage errors', () => {
  it('names the problem on stderr, exits 2, and writes nothing on stdout', async () => {
    const bogus = await runLauncher(['--bogus']);
    expect(bogus).toMatchObject({ code: 2, stdout: '' });
    expect(bogus.stderr).toMatch(/^canlab-mcp: Unknown option '--bogus'/);
    expect(bogus.stderr).toContain('usage: canlab-mcp');
    const mixed = await runLauncher(['--attach', 'http://127.0.0.1:1/mcp', '--http']);
    expect(mixed).toMatchObject({ code: 2, stdout: '' });
    expect(mixed.stderr).toMatch(/--attach bridges stdio to a window; it takes no --http/);
    const notUrl = await runLauncher(['--attach', 'window']);
    expect(notUrl.stderr).toMatch(/--attach needs a URL/);
    expect((await runLauncher(['--http', '--port', '70000'])).stderr).toMatch(/--port must be 0\.\.65535/);
  });
});
