import { mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { runCli } from '../../src/cli/main';
import { loadDbc } from '../../src/dbc/parse';
import { generateCapture } from '../../src/eval/generate';
import { createCaptureWriter } from '../../src/formats';
import { runCanTool } from '../dbc/cantools';
import { fixture } from '../fixtures';
import { pagesWithRareValue } from '../detect/synthetic';

jest.setTimeout(600_000);

/**
 * A draft DBC is only useful if the tools analysts use take it: every draft `canlab detect --dbc`
 * writes must load in cantools (strict, its default) and decode every frame of the capture it was
 * drafted from, on the real capture and on each capture of the synthetic suite (test/eval/eval.test.ts:
 * the opendbc databases, 1000 frames per message, seed 1). cantools comes from infra/can-tools.sh;
 * without it these tests fail, naming the script.
 */

interface Verdict {
  frames: number;
  decoded: number;
  undefined: number;
  error: string | null;
}

const dir = mkdtempSync(path.join(tmpdir(), 'canlab-draft-cantools-'));

async function draftAndDecode(capture: string, name: string, ...options: string[]): Promise<Verdict> {
  const dbc = path.join(dir, `${name}.dbc`);
  let out = '';
  const code = await runCli(['detect', capture, '--dbc', dbc, ...options], {
    stdout: (s) => (out += s),
    stderr: (s) => (out += s),
  });
  expect({ code, tail: out.slice(-300) }).toEqual({ code: 0, tail: expect.stringMatching(/draft DBC with/) });
  return JSON.parse(runCanTool('decode_check.py', [capture, dbc])) as Verdict;
}

describe('cantools decodes every draft DBC on the capture it came from', () => {
  const real = fixture('real', 'rav4-2018-radar.log');
  it('the real RAV4 radar capture', async () => {
    const v = await draftAndDecode(real, 'rav4');
    expect(v).toEqual({ frames: 45000, decoded: 45000, undefined: 0, error: null });
  });

  // Drafted from the first frames of each id only, the search once took radar track values for
  // selectors, and cantools stopped at the first frame whose "selector value" the draft lacked.
  it.each(['100', '200'])('the real capture drafted from its first %s frames per id', async (n) => {
    const v = await draftAndDecode(real, `rav4-${n}`, '--max-frames-per-id', n);
    expect(v).toEqual({ frames: 45000, decoded: 45000, undefined: 0, error: null });
  });

  it('a multiplexed message with a selector value too rare to analyse', async () => {
    const frames = pagesWithRareValue();
    const capture = path.join(dir, 'mux.log');
    const writer = createCaptureWriter(capture);
    for (const f of frames) await writer.write(f);
    await writer.close();
    const v = await draftAndDecode(capture, 'mux');
    expect(v).toEqual({ frames: 900, decoded: 900, undefined: 0, error: null });
  });

  const dbcDir = fixture('dbc-opendbc');
  const files = readdirSync(dbcDir)
    .filter((f) => f.endsWith('.dbc'))
    .sort();

  it.each(files)('the synthetic suite’s capture of %s', async (file) => {
    const { frames } = generateCapture(await loadDbc(path.join(dbcDir, file)), {
      framesPerMessage: 1000,
      seed: 1,
    });
    const capture = path.join(dir, file.replace(/\.dbc$/, '.log'));
    const writer = createCaptureWriter(capture);
    for (const f of frames) await writer.write(f);
    await writer.close();
    const v = await draftAndDecode(capture, file.replace(/\.dbc$/, ''));
    expect(v).toEqual({ frames: frames.length, decoded: frames.length, undefined: 0, error: null });
  });
});
