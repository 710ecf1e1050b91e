import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { MARKS_FILE, PROJECT_FILE } from '../../src/capture/project';
import { CanlabInputError } from '../../src/errors';
import { Workspace } from '../../src/workspace/workspace';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'canlab-project-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const csv = (rows: Array<[number, string]>) =>
  [
    'Time Stamp,ID,Extended,Dir,Bus,LEN,D1,D2,D3,D4,D5,D6,D7,D8',
    ...rows.map(([t, d]) => `${t},00000123,false,Rx,0,1,${d},,,,,,,`),
  ].join('\n') + '\n';

function project(segments: string[], marks: unknown[] = []) {
  writeFileSync(
    path.join(dir, PROJECT_FILE),
    JSON.stringify({
      format: 'canlab-capture',
      version: 1,
      segments: segments.map((file) => ({ file })),
      marksFile: MARKS_FILE,
      marks,
    }),
  );
}

it('opens a capture folder: segments in order, marks from marks.json, an open interval kept open', async () => {
  writeFileSync(
    path.join(dir, 'segment-0001.csv'),
    csv([
      [1000000, '01'],
      [2000000, '02'],
    ]),
  );
  writeFileSync(path.join(dir, 'segment-0002.csv'), csv([[3000000, '03']]));
  project(
    ['segment-0001.csv', 'segment-0002.csv'],
    [{ id: 1, label: 'stale', kind: 'point', start: 1, end: 1, source: 'http' }],
  );
  writeFileSync(
    path.join(dir, MARKS_FILE),
    JSON.stringify({
      version: 1,
      marks: [{ id: 4, label: 'brake', kind: 'interval', start: 1.5, source: 'keyboard' }],
    }),
  );

  const ws = new Workspace();
  const status = await ws.loadCapture(dir);
  expect(status.frameCount).toBe(3);
  expect(ws.frames({ n: 10 }).map((f) => f.data[0])).toEqual([1, 2, 3]);
  expect(ws.marks()).toEqual([{ id: 4, label: 'brake', kind: 'interval', start: 1.5, source: 'keyboard' }]);
  expect(status.openMarks).toEqual(['brake']);
  // The state machine carries on from the recording: the open interval can be closed, ids continue.
  expect(ws.mark('brake', 'end', 'window', 2.5)).toMatchObject({ id: 4, end: 2.5 });
  expect(ws.mark('horn', 'point', 'window', 2.6).id).toBe(5);
});

it('refuses projects that point outside their folder or are not projects', async () => {
  project(['../elsewhere.csv']);
  await expect(new Workspace().loadCapture(path.join(dir, PROJECT_FILE))).rejects.toThrow(
    /not a file of the capture folder/,
  );
  writeFileSync(path.join(dir, PROJECT_FILE), '{"format": "something-else"}');
  await expect(new Workspace().loadCapture(dir)).rejects.toThrow(/not a canlab capture project: format/);
  writeFileSync(path.join(dir, PROJECT_FILE), '{oops');
  await expect(new Workspace().loadCapture(dir)).rejects.toBeInstanceOf(CanlabInputError);
});
