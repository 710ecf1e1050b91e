/**
 * Every capture a content test can be tried on: all files under canlab/test/fixtures/ and
 * ../shared/fixtures/can/python-can/, each with the head `readCapture` would hand a format's `sniff`.
 */
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { readHead } from '../../src/formats/common';
import { fixture } from '../fixtures';

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? filesUnder(path.join(dir, e.name)) : [path.join(dir, e.name)],
  );
}

export async function sniffCorpus(): Promise<{ file: string; head: Buffer }[]> {
  const files = [...filesUnder(path.resolve(__dirname, '../fixtures')), ...filesUnder(fixture('python-can'))];
  return Promise.all(files.map(async (file) => ({ file, head: await readHead(file) })));
}

/** Asserts that `sniff` claims exactly the corpus files `own` picks, by path. */
export async function expectSniffClaims(sniff: (head: Buffer) => boolean, own: (file: string) => boolean) {
  const corpus = await sniffCorpus();
  const wrong = corpus
    .filter(({ file, head }) => sniff(head) !== own(file))
    .map(({ file }) => `${path.basename(file)} ${own(file) ? 'not claimed' : 'claimed'}`);
  expect(wrong).toEqual([]);
  expect(corpus.some(({ file }) => own(file))).toBe(true);
}
