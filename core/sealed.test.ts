import { openSecret, sealSecret } from './sealed';

test('a sealed secret opens with its key only, and a tampered one does not open', () => {
  const sealed = sealSecret('key material one', 'JBSWY3DPEHPK3PXP');
  expect(sealed).not.toContain('JBSWY3DPEHPK3PXP');
  expect(sealSecret('key material one', 'JBSWY3DPEHPK3PXP')).not.toBe(sealed); // a fresh IV each time
  expect(openSecret('key material one', sealed)).toBe('JBSWY3DPEHPK3PXP');
  expect(() => openSecret('key material two', sealed)).toThrow();
  const parts = sealed.split('.');
  parts[3] = Buffer.from('tampered').toString('base64url');
  expect(() => openSecret('key material one', parts.join('.'))).toThrow();
  expect(() => openSecret('key material one', 'plain text')).toThrow('not a sealed secret');
});
