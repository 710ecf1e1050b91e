import { PASSWORD_MAX_LENGTH, passwordProblems } from './password-policy';

const ctx = { email: 'ada.lovelace@example.org' };

describe('password policy', () => {
  it('accepts a long passphrase without composition rules', () => {
    expect(passwordProblems('correct horse battery staple', 12, ctx)).toEqual([]);
  });

  it('counts characters, not UTF-16 units, against the minimum length', () => {
    // Eleven emoji are 22 UTF-16 units but eleven characters: too short for 12.
    expect(passwordProblems('🐴🔋📎🦄🌵🎈🧲🪁🧊🪐🍋', 12, ctx)).toEqual([
      'must be at least 12 characters long (it has 11)',
    ]);
    expect(passwordProblems('🐴🔋📎🦄🌵🎈🧲🪁🧊🪐🍋🥝', 12, ctx)).toEqual([]);
  });

  it('refuses a password over the maximum length', () => {
    expect(passwordProblems('ab1cd2'.repeat(200), 12, ctx)).toEqual([
      `must be at most ${PASSWORD_MAX_LENGTH} characters long`,
    ]);
  });

  it('refuses repetitions of a few characters', () => {
    expect(passwordProblems('abababababababab', 12, ctx)).toEqual([
      'must use at least 5 different characters',
    ]);
  });

  it("refuses a password containing the e-mail's name part, in any case", () => {
    expect(passwordProblems('my name is ADA.LOVELACE!', 12, ctx)).toEqual([
      'must not contain the e-mail address or its name part',
    ]);
    // A two-letter name part is not checked: it sits inside ordinary words.
    expect(passwordProblems('a good long passphrase', 12, { email: 'go@example.org' })).toEqual([]);
  });

  it('lists every broken rule', () => {
    expect(passwordProblems('aaaa', 12, ctx)).toEqual([
      'must be at least 12 characters long (it has 4)',
      'must use at least 5 different characters',
    ]);
  });
});
