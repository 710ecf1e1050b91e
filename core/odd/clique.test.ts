import { InputError } from '../errors';
import { ODD_ATTRIBUTES, sceneDensity } from './attributes';
import { attributeCombinations, cliqueName, hasUnknown, parseClique } from './clique';

describe('cliques', () => {
  it('has one name per combination, attributes in ODD order', () => {
    const parsed = parseClique('weather=rain|lighting=dark', 'body.clique');
    expect(parsed).toEqual([
      { attribute: 'lighting', value: 'dark' },
      { attribute: 'weather', value: 'rain' },
    ]);
    expect(cliqueName(parsed)).toBe('lighting=dark|weather=rain');
    expect(hasUnknown(parseClique('weather=unknown', 'x'))).toBe(true);
  });

  it.each([
    ['colour=red', /attribute/],
    ['lighting=dusky', /not a lighting value/],
    ['maneuver=moonwalk', /not a maneuver value/],
    ['weather=rain|weather=snow', /twice/],
    ['weather=', /not a value/],
    ['a=1|b=2|c=3|d=4', /at most 3/],
  ])('refuses %p', (name, message) => {
    expect(() => parseClique(name, 'body.clique')).toThrow(message);
    try {
      parseClique(name, 'body.clique');
    } catch (err) {
      expect(err).toBeInstanceOf(InputError);
      expect((err as InputError).fieldErrors[0]!.field).toBe('body.clique');
    }
  });

  it('enumerates attribute combinations', () => {
    expect(attributeCombinations(ODD_ATTRIBUTES, 2)).toHaveLength(15);
    expect(attributeCombinations(ODD_ATTRIBUTES, 3)).toHaveLength(20);
    expect(attributeCombinations(['weather', 'lighting', 'weather'], 2)).toEqual([['lighting', 'weather']]);
  });
});

describe('scene density bands', () => {
  it.each([
    [0, 0, 'empty'],
    [0, 1, 'sparse'],
    [1, 2, 'sparse'],
    [0, 4, 'moderate'],
    [3, 0, 'moderate'],
    [0, 11, 'dense'],
    [6, 0, 'dense'],
    [5, 5, 'moderate'],
  ])('%p VRUs and %p vehicles: %p', (vru, vehicles, band) => {
    expect(sceneDensity(vru, vehicles)).toBe(band);
  });
});
