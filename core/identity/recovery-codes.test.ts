import { classifySecondFactor, formatRecoveryCode, RECOVERY_CODE_LENGTH } from './recovery-codes';

describe('recovery codes', () => {
  it('formats 12 random bytes as three groups of four base32 characters', () => {
    const bytes = Uint8Array.from({ length: RECOVERY_CODE_LENGTH }, (_, i) => i * 37);
    const code = formatRecoveryCode(bytes);
    expect(code).toMatch(/^[0-9a-hjkmnp-tv-z]{4}-[0-9a-hjkmnp-tv-z]{4}-[0-9a-hjkmnp-tv-z]{4}$/);
    // Only the low five bits count: the same code from bytes that differ above them.
    expect(formatRecoveryCode(bytes.map((b) => b | 0xe0))).toBe(code);
    expect(() => formatRecoveryCode(new Uint8Array(11))).toThrow(/12 random bytes/);
  });

  it('reads back what it formats, however the user typed it', () => {
    const code = formatRecoveryCode(Uint8Array.from({ length: 12 }, (_, i) => 200 - i * 13));
    const compact = code.replace(/-/g, '');
    expect(classifySecondFactor(code)).toEqual({ kind: 'recovery', code: compact });
    expect(classifySecondFactor(` ${code.toUpperCase().replace(/-/g, ' ')} `)).toEqual({
      kind: 'recovery',
      code: compact,
    });
  });

  it('maps the letters Crockford leaves out to the digits they look like', () => {
    expect(classifySecondFactor('OIL0-abcd-efgh')).toEqual({ kind: 'recovery', code: '0110abcdefgh' });
  });

  it('tells a six-digit TOTP code from a recovery code and refuses anything else', () => {
    expect(classifySecondFactor('123 456')).toEqual({ kind: 'totp', code: '123456' });
    expect(classifySecondFactor('12345')).toBeNull();
    expect(classifySecondFactor('1234567')).toBeNull();
    expect(classifySecondFactor('abcd-efgh-ijku')).toBeNull(); // u is not in the alphabet
    expect(classifySecondFactor('')).toBeNull();
  });
});
