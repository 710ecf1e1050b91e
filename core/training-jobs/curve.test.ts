import { bestEpoch, pace } from './curve';

describe('pace', () => {
  it('is unknown until an epoch has finished in this attempt', () => {
    expect(pace([1000], 5)).toEqual({ epoch_seconds: null, eta_seconds: null });
  });

  it('averages the recent epochs and multiplies by the epochs left', () => {
    expect(pace([0, 2000, 4000, 6000], 3)).toEqual({ epoch_seconds: 2, eta_seconds: 6 });
    // Only the last five epochs count: a slow first epoch (loading) stops weighing in.
    expect(pace([0, 60_000, 61_000, 62_000, 63_000, 64_000, 65_000], 10)).toEqual({
      epoch_seconds: 1,
      eta_seconds: 10,
    });
    expect(pace([0, 1000], 0).eta_seconds).toBe(0);
  });
});

describe('bestEpoch', () => {
  it('keeps the epoch with the highest validation mAP, the earlier on a tie, ignoring epochs without one', () => {
    let best = bestEpoch(null, 1, 0.2);
    expect(best).toEqual({ best_epoch: 1, best_map50: 0.2 });
    best = bestEpoch(best, 2, 0.5);
    best = bestEpoch(best, 3, 0.5);
    best = bestEpoch(best, 4, null);
    expect(best).toEqual({ best_epoch: 2, best_map50: 0.5 });
    // Only the two fields come back, whatever else the previous progress carried.
    expect(bestEpoch({ best_epoch: 1, best_map50: 0.9, ...{ epoch: 1 } }, 2, 0.1)).toEqual({
      best_epoch: 1,
      best_map50: 0.9,
    });
  });
});
