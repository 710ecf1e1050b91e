import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createCaptureWriter } from '../../src/formats';
import { runCli } from '../../src/cli/main';
import { parseDbc } from '../../src/dbc/parse';
import { field, makeFrames, writeField } from './synthetic';

describe('canlab ids / detect', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'canlab-detect-'));
  const capture = path.join(dir, 'cap.log');
  beforeAll(async () => {
    const frames = makeFrames(300, 8, (t, d) => {
      writeField(d, field(0, 12), Math.round(2000 + 1800 * Math.sin(t / 30)));
      writeField(d, field(52, 4), t % 16);
    });
    const w = createCaptureWriter(capture);
    for (const f of frames) await w.write(f);
    await w.close();
  });
  const run = async (...argv: string[]) => {
    let out = '';
    let err = '';
    const code = await runCli(argv, { stdout: (s) => (out += s), stderr: (s) => (err += s) });
    return { code, out, err };
  };

  it('ids prints the per-id table', async () => {
    const r = await run('ids', capture);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/300 frames, 1 ids/);
    expect(r.out).toMatch(/0x123\s+300\s+100\.00/);
  });

  it('detect prints findings and writes JSON and a loadable draft DBC', async () => {
    const json = path.join(dir, 'f.json');
    const dbc = path.join(dir, 'draft.dbc');
    const r = await run('detect', capture, '--json', json, '--dbc', dbc);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/counter\s+bit 52 len 4/);
    const findings = JSON.parse(readFileSync(json, 'utf8')) as { ids: Array<{ key: string }> };
    expect(findings.ids[0]!.key).toBe('0x123');
    const db = parseDbc(readFileSync(dbc, 'utf8'), dbc);
    expect(db.messages[0]!.signals.map((s) => s.name)).toEqual(
      expect.arrayContaining(['CNT_0x123', 'SIG_0x123_b0_12']),
    );
  });

  it('rejects a missing capture argument', async () => {
    const r = await run('detect');
    expect(r.code).not.toBe(0);
  });
});
