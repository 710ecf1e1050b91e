import { CLASS_MOVE_RULE, classMoveRefusal, isPlausibleClassMove } from './class-moves';
import { ONTOLOGY_SEED } from './classes';

const seed = (name: string) => {
  const c = ONTOLOGY_SEED.find((x) => x.name === name);
  if (!c) throw new Error(`${name} is not a seed class`);
  return c;
};
const move = (from: string, to: string) => isPlausibleClassMove(seed(from), seed(to));

describe('class moves on the seed ontology', () => {
  it.each([
    ['car', 'van'],
    ['car', 'truck'],
    ['van', 'car'],
    ['car', 'autorickshaw'],
    ['bicycle', 'motorcycle'],
    ['motorcycle', 'bicycle'],
    ['scooter', 'kick_scooter'],
    ['pedestrian', 'bicyclist'],
    ['dog', 'cow'],
    ['traffic_cone', 'curb'],
    ['car', 'car'],
  ])('%s → %s is plausible (one l1 group)', (from, to) => {
    expect(move(from, to)).toBe(true);
    expect(classMoveRefusal(seed(from), seed(to))).toBeNull();
  });

  it.each([
    ['car', 'pedestrian'],
    ['pedestrian', 'car'],
    ['motorcycle', 'motorcyclist'],
    ['cargo_bicycle', 'cycle_rickshaw'],
    ['motorcycle', 'autorickshaw'],
    ['cow', 'person'],
    ['car', 'ego_vehicle'],
    ['truck', 'building'],
    ['traffic_sign', 'billboard'],
    ['road', 'sidewalk'],
  ])('%s → %s is refused (across l1 groups)', (from, to) => {
    expect(move(from, to)).toBe(false);
  });

  it('names the rule and both classes with their groups in a refusal', () => {
    expect(classMoveRefusal(seed('car'), seed('pedestrian'))).toEqual({
      rule: CLASS_MOVE_RULE,
      from_class: 'car',
      from_l1: 'vehicle',
      to_class: 'pedestrian',
      to_l1: 'vru',
      reason: expect.stringMatching(/car \(vehicle\) → pedestrian \(vru\)/),
    });
  });

  it('lets every seed class move to each class of its own l1 and to none outside it', () => {
    for (const from of ONTOLOGY_SEED) {
      const reachable = ONTOLOGY_SEED.filter((to) => isPlausibleClassMove(from, to));
      expect(reachable.map((c) => c.name).sort()).toEqual(
        ONTOLOGY_SEED.filter((c) => c.l1 === from.l1)
          .map((c) => c.name)
          .sort(),
      );
    }
  });

  it('refuses a move between two l1 values of the same name under different l0 (an unsound ontology)', () => {
    expect(
      isPlausibleClassMove({ name: 'a', l0: 'object', l1: 'x' }, { name: 'b', l0: 'infra', l1: 'x' }),
    ).toBe(false);
  });
});
