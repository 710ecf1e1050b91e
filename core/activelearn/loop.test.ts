import { commitFrameIds, retrainDue, RETRAIN_MIN_NEW_FRAMES } from './loop';

const base = { runningJobId: null, newFrames: 0, batchesSince: 1, batchesDecidedSince: 0 };

describe('when a retrain is due', () => {
  it('is never due while one runs, however much is labelled', () => {
    const v = retrainDue({ ...base, runningJobId: 'job-1', newFrames: 500, batchesDecidedSince: 1 });
    expect(v).toEqual({ due: false, reason: expect.stringContaining('job-1') });
  });

  it('is not due with nothing new labelled', () => {
    expect(retrainDue(base)).toEqual({ due: false, reason: expect.stringMatching(/nothing new/) });
  });

  it('is due from the minimum of new frames, or once a whole batch is decided', () => {
    expect(retrainDue({ ...base, newFrames: RETRAIN_MIN_NEW_FRAMES - 1 }).due).toBe(false);
    expect(retrainDue({ ...base, newFrames: RETRAIN_MIN_NEW_FRAMES }).due).toBe(true);
    expect(retrainDue({ ...base, newFrames: 3, batchesDecidedSince: 1 }).due).toBe(true);
  });
});

describe('the frames of a commit', () => {
  it('reads frame ids from image paths of any split and nothing else', () => {
    const a = '0b8a1c3e-1111-4222-8333-944445555666';
    const b = '1b8a1c3e-1111-4222-8333-944445555666';
    const ids = commitFrameIds([
      `images/train/${a}.jpg`,
      `images/val/${b}.jpg`,
      `images/val/${a}.jpg`,
      'annotations/instances_train.json',
      `labels/train/${b}.txt`,
      `images/train/nested/${b}.jpg`,
    ]);
    expect([...ids].sort()).toEqual([a, b]);
  });
});
