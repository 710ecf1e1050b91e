import { ConfigSchema } from '../config';
import { addressLiteral, privateTargetsAllowed, refusedAddress, webhookUrlProblem } from './targets';

describe('webhookUrlProblem', () => {
  it('takes http and https URLs', () => {
    expect(webhookUrlProblem('https://hooks.example.com/drivelab?team=7')).toBeNull();
    expect(webhookUrlProblem('http://127.0.0.1:8080/in')).toBeNull();
  });

  it('refuses other schemes, relative URLs, credentials and fragments, by name', () => {
    expect(webhookUrlProblem('ftp://example.com/x')).toMatch(/uses ftp; only http and https/);
    expect(webhookUrlProblem('file:///etc/passwd')).toMatch(/uses file/);
    expect(webhookUrlProblem('gopher://127.0.0.1:6379/_SET')).toMatch(/uses gopher/);
    expect(webhookUrlProblem('/relative')).toBe('is not an absolute URL');
    expect(webhookUrlProblem('https://user:pw@example.com/')).toMatch(/carries credentials/);
    expect(webhookUrlProblem('https://example.com/#x')).toMatch(/fragment/);
  });
});

describe('refusedAddress', () => {
  it('lets globally routable unicast addresses through', () => {
    expect(refusedAddress('93.184.215.14', false)).toBeNull();
    expect(refusedAddress('2606:2800:21f:cb07:6820:80da:af6b:8b2c', false)).toBeNull();
  });

  it.each([
    ['127.0.0.1', 'loopback'],
    ['::1', 'loopback'],
    ['10.0.0.5', 'private'],
    ['192.168.1.1', 'private'],
    ['172.16.0.1', 'private'],
    ['169.254.169.254', 'linkLocal'],
    ['0.0.0.0', 'unspecified'],
    ['100.64.0.1', 'carrierGradeNat'],
    ['fc00::1', 'uniqueLocal'],
    ['fe80::1', 'linkLocal'],
    // An IPv4-mapped IPv6 address is judged as the IPv4 address it maps.
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:10.0.0.1', 'private'],
  ])('refuses %s, a %s address, unless private targets are allowed', (address, range) => {
    expect(refusedAddress(address, false)).toBe(
      `${address} is a ${range} address; set webhooks.allowPrivateTargets to call non-public receivers`,
    );
    expect(refusedAddress(address, true)).toBeNull();
  });
});

describe('addressLiteral', () => {
  it('tells IP literals (bracketed IPv6 too) from names', () => {
    expect(addressLiteral('127.0.0.1')).toBe('127.0.0.1');
    expect(addressLiteral('[::1]')).toBe('::1');
    expect(addressLiteral('localhost')).toBeNull();
    expect(addressLiteral('hooks.example.com')).toBeNull();
  });

  it('sees the loopback behind the URL forms that spell it otherwise', () => {
    // The URL parser writes decimal and hex hosts as dotted quads, so they are judged as such.
    for (const raw of ['http://2130706433/', 'http://0x7f.1/', 'http://127.1/'])
      expect(refusedAddress(addressLiteral(new URL(raw).hostname)!, false)).toMatch(/loopback/);
  });
});

describe('privateTargetsAllowed', () => {
  const config = (env: Record<string, unknown>, webhooks: Record<string, unknown> = {}) =>
    ConfigSchema.parse({ ...env, webhooks });

  it('allows them in local and test, refuses them elsewhere, unless configured', () => {
    expect(privateTargetsAllowed(config({ env: 'local' }))).toBe(true);
    expect(privateTargetsAllowed(config({ env: 'test' }))).toBe(true);
    expect(privateTargetsAllowed(config({ env: 'production' }))).toBe(false);
    expect(privateTargetsAllowed(config({ env: 'production' }, { allowPrivateTargets: 'true' }))).toBe(true);
    expect(privateTargetsAllowed(config({ env: 'test' }, { allowPrivateTargets: 'false' }))).toBe(false);
    expect(privateTargetsAllowed(config({ env: 'production' }, { allowPrivateTargets: '' }))).toBe(false);
  });
});
