import { carryTrackIds, type OldTrackMember } from './carry';

const members = (trackId: string, ids: string[], human = false): OldTrackMember[] =>
  ids.map((objectId) => ({ objectId, trackId, human }));

describe('carryTrackIds', () => {
  it('gives each new track the old identity it shares the most objects with, one to one', () => {
    const old = [...members('A', ['a1', 'a2', 'a3']), ...members('B', ['b1', 'b2'])];
    expect(carryTrackIds(old, [['b1', 'b2', 'n1'], ['a1', 'a2', 'a3', 'n2'], ['n3']])).toEqual([
      'B',
      'A',
      null,
    ]);
  });

  it("keeps the identity with the part that holds a person's boxes when a track is split", () => {
    const old = [...members('A', ['m1', 'm2', 'm3', 'm4']), ...members('A', ['h1'], true)];
    // Four machine boxes went one way, the person's box the other: the person's part stays A.
    expect(carryTrackIds(old, [['m1', 'm2', 'm3', 'm4'], ['h1']])).toEqual([null, 'A']);
  });

  it('carries nothing to a track made only of new objects, and nothing without old tracks', () => {
    expect(carryTrackIds(members('A', ['a1']), [['x'], ['y']])).toEqual([null, null]);
    expect(carryTrackIds([], [['x']])).toEqual([null]);
    expect(carryTrackIds(members('A', ['a1']), [])).toEqual([]);
  });

  it('lets two old tracks merged into one new track hand it the stronger identity only', () => {
    const old = [...members('A', ['a1', 'a2']), ...members('B', ['b1'])];
    expect(carryTrackIds(old, [['a1', 'a2', 'b1']])).toEqual(['A']);
  });
});
