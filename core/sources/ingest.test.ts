import { sourceCopyKey, sourceDriveUri, sourceKeyProblem, sourceVerdictProblem } from './ingest';

describe('sourceKeyProblem', () => {
  it.each([
    ['drives/run.mp4', 'drives/', null],
    ['run.mp4', '', null],
    ['other/run.mp4', 'drives/', /outside the source's prefix "drives\/"/],
    ['drives/', 'drives/', /names a folder/],
    ['drives/../other/run.mp4', 'drives/', /"\.\." segment/],
    ['drives//run.mp4', 'drives/', /empty/],
    ['drives/frames/0001.jpg', 'drives/', /one frame image/],
  ])('%s under %j', (key, prefix, problem) => {
    const found = sourceKeyProblem(key, prefix);
    if (problem === null) expect(found).toBeNull();
    else expect(found).toMatch(problem);
  });
});

it('names the copy by the session alone and the drive by source and key', () => {
  expect(sourceCopyKey('s1')).toBe('source-copies/s1/drive');
  expect(sourceDriveUri('src', 'drives/a.mp4')).toBe('source:src/drives/a.mp4');
});

it('says why a judged object would be refused as the declared kind', () => {
  expect(sourceVerdictProblem('video', { ingest_kind: 'video', format: 'matroska/webm' })).toBeNull();
  expect(sourceVerdictProblem('bag', { ingest_kind: 'video', format: 'mp4/mov (ISO BMFF)' })).toMatch(
    /declared as kind "bag" but the object is mp4/,
  );
  expect(sourceVerdictProblem('video', { ingest_kind: null, format: 'empty' })).toMatch(/not a drive.*empty/);
});
