import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { detectAll } from '../../src/detect';
import { detectFromFramesOnly } from '../../src/eval/run';
import { generateCapture } from '../../src/eval/generate';
import { parseDbc } from '../../src/dbc/parse';
import { fixture } from '../fixtures';

function sourcesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory()
      ? sourcesUnder(path.join(dir, e.name))
      : e.name.endsWith('.ts')
        ? [path.join(dir, e.name)]
        : [],
  );
}

describe('the detectors never see ground truth', () => {
  it('detector and analysis sources import no evaluator, parser, codec or file system module', () => {
    const root = path.resolve(__dirname, '../../src');
    const files = [...sourcesUnder(path.join(root, 'detect')), ...sourcesUnder(path.join(root, 'analysis'))];
    expect(files.length).toBeGreaterThan(5);
    for (const file of files) {
      const imports = [...readFileSync(file, 'utf8').matchAll(/from\s+'([^']+)'/g)].map((m) => m[1]!);
      for (const spec of imports) {
        expect(`${path.basename(file)} imports ${spec}`).not.toMatch(
          /eval|dbc\/(parse|codec|write)|node:fs|formats/,
        );
      }
    }
  });

  it('the evaluator hands the detectors plain frames only, and findings do not depend on the truth', () => {
    const text = readFileSync(fixture('dbc-opendbc', 'ford_fusion_2018_pt.dbc'), 'latin1');
    const db = parseDbc(text, 'ford.dbc');
    const { frames, truth } = generateCapture(db, { framesPerMessage: 300, seed: 3 });
    const keys = [
      'brs',
      'channel',
      'data',
      'dlc',
      'error',
      'esi',
      'extended',
      'fd',
      'id',
      'remote',
      'timestamp',
    ];
    for (const f of frames) expect(Object.keys(f).sort()).toEqual(keys);
    const a = detectFromFramesOnly(frames);
    // Scramble every piece of truth after generation: the findings must not change.
    for (const m of truth)
      for (const s of m.signals)
        Object.assign(s, {
          name: 'X',
          signed: !s.signed,
          role: 'data',
          field: { startBit: 0, length: 1, byteOrder: 'little_endian' },
        });
    db.messages.length = 0;
    const b = detectFromFramesOnly(frames);
    expect(JSON.stringify(b)).toEqual(JSON.stringify(a));
    // And the same findings come from the plain detector entry point on the raw frames.
    expect(JSON.stringify(detectAll(frames))).toEqual(JSON.stringify(a));
  });
});
