import { planRelabelBackfill, type BackfillObject } from './relabel-backfill';

const groups: Record<string, { l0: string; l1: string }> = {
  car: { l0: 'object', l1: 'vehicle' },
  van: { l0: 'object', l1: 'vehicle' },
  pedestrian: { l0: 'object', l1: 'vru' },
};
const obj = (i: number, cls: string, source = 'fused', state = 'review'): BackfillObject => ({
  objectId: `o${i}`,
  frameIndex: i,
  source,
  state,
  class: { name: cls, ...groups[cls]! },
});

describe('planRelabelBackfill', () => {
  it('moves the machine objects to the class people gave the track, in frame order', () => {
    const plan = planRelabelBackfill([obj(3, 'car'), obj(0, 'van', 'human'), obj(1, 'car'), obj(2, 'van')]);
    expect(plan).toMatchObject({ target: 'van', action: 'relabel', human_votes: { van: 1 } });
    expect(plan.moves).toEqual([
      { object_id: 'o1', frame_index: 1, from_class: 'car' },
      { object_id: 'o3', frame_index: 3, from_class: 'car' },
    ]);
  });

  it('takes the majority of human objects, and no target when they tie', () => {
    const majority = planRelabelBackfill([
      obj(0, 'van', 'human'),
      obj(1, 'van', 'human'),
      obj(2, 'car', 'human'),
      obj(3, 'car'),
    ]);
    expect([majority.target, majority.moves.map((m) => m.object_id)]).toEqual(['van', ['o3']]);
    const tie = planRelabelBackfill([obj(0, 'van', 'human'), obj(1, 'car', 'human'), obj(2, 'car')]);
    expect([tie.action, tie.reason, tie.target]).toEqual(['skip', 'humans_disagree', null]);
  });

  it('skips without human labels, with nothing to move, and ignores rejected objects and imported ones', () => {
    expect(planRelabelBackfill([obj(0, 'car'), obj(1, 'van')]).reason).toBe('no_human_label');
    expect(planRelabelBackfill([obj(0, 'van', 'human'), obj(1, 'van')]).reason).toBe('nothing_to_move');
    const plan = planRelabelBackfill([
      obj(0, 'van', 'human'),
      obj(1, 'car', 'fused', 'rejected'),
      obj(2, 'car', 'imported'),
      obj(3, 'car', 'human', 'rejected'),
    ]);
    expect([plan.reason, plan.human_votes]).toEqual(['nothing_to_move', { van: 1 }]);
  });

  it('skips the whole track when one move crosses l1 groups', () => {
    const plan = planRelabelBackfill([obj(0, 'car', 'human'), obj(1, 'van'), obj(2, 'pedestrian')]);
    expect([plan.action, plan.reason]).toEqual(['skip', 'implausible_move']);
    expect(plan.refused).toEqual([
      expect.objectContaining({ from_class: 'pedestrian', to_class: 'car', rule: 'same_l1' }),
    ]);
    expect(plan.moves.map((m) => m.object_id)).toEqual(['o1', 'o2']);
  });
});
