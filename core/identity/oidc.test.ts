import { loadConfig } from '../config';
import {
  oidcConfigured,
  oidcMissing,
  profileFromClaims,
  RETURN_TO_PATTERN,
  returnLocation,
  roleFromClaims,
} from './oidc';

const complete = {
  APP_OIDC__ISSUER: 'https://login.example.com/realms/ml',
  APP_OIDC__CLIENT_ID: 'drivelab',
  APP_OIDC__CLIENT_SECRET: 'from-the-provider',
  APP_OIDC__REDIRECT_URI: 'https://drivelab.example.com/api/auth/oidc/callback',
};

describe('OIDC configuration', () => {
  it('is off by default and names every missing variable', () => {
    const config = loadConfig({});
    expect(oidcConfigured(config)).toBe(false);
    expect(oidcMissing(config.oidc)).toEqual([
      'APP_OIDC__ISSUER',
      'APP_OIDC__CLIENT_ID',
      'APP_OIDC__CLIENT_SECRET',
      'APP_OIDC__REDIRECT_URI',
    ]);
  });

  it('names only what is still missing, and an empty variable counts as missing', () => {
    const config = loadConfig({ ...complete, APP_OIDC__CLIENT_SECRET: '' });
    expect(oidcMissing(config.oidc)).toEqual(['APP_OIDC__CLIENT_SECRET']);
    expect(oidcConfigured(loadConfig(complete))).toBe(true);
  });

  it('refuses a plain-http issuer unless it is on a loopback address', () => {
    expect(() => loadConfig({ ...complete, APP_OIDC__ISSUER: 'http://login.example.com' })).toThrow(
      /APP_OIDC__ISSUER: must be https/,
    );
    for (const issuer of ['http://127.0.0.1:4000', 'http://localhost:4000/oidc', 'http://[::1]:4000'])
      expect(loadConfig({ ...complete, APP_OIDC__ISSUER: issuer }).oidc.issuer).toBe(issuer);
  });

  it('reads the role map as JSON of roles, and refuses anything else', () => {
    expect(loadConfig({ APP_OIDC__ROLE_MAP: '{"ml-admins":"admin"}' }).oidc.roleMap).toEqual({
      'ml-admins': 'admin',
    });
    expect(() => loadConfig({ APP_OIDC__ROLE_MAP: '{ml-admins: admin}' })).toThrow(/must be a JSON object/);
    expect(() => loadConfig({ APP_OIDC__ROLE_MAP: '{"ml-admins":"root"}' })).toThrow(/APP_OIDC__ROLE_MAP/);
    expect(() => loadConfig({ APP_OIDC__SCOPES: 'email profile' })).toThrow(/must include openid/);
  });
});

describe('return_to', () => {
  it.each(['/', '/review', '/review?session=7&frame=3', '/datasets/a%2Fb'])('accepts the path %s', (p) =>
    expect(RETURN_TO_PATTERN.test(p)).toBe(true),
  );
  it.each([
    '//evil.example/x',
    '/\\evil.example',
    'https://evil.example/',
    'review',
    '/a#b',
    '/a b',
    '/a\nb',
    '',
  ])('refuses %j', (p) => expect(RETURN_TO_PATTERN.test(p)).toBe(false));

  it('carries the answer in the fragment, primitives only', () => {
    const location = returnLocation('/review?s=1', {
      token: 'a.b.c',
      token_type: 'bearer',
      must_change_password: false,
      user: { id: 'x' },
    });
    expect(location).toBe('/review?s=1#token=a.b.c&token_type=bearer&must_change_password=false');
  });
});

describe('roleFromClaims', () => {
  const map = { roleClaim: 'groups', roleMap: { 'ml-admins': 'admin', labelers: 'reviewer' } as const };

  it('gives the lowest role without a mapping, a claim, or a matching value', () => {
    expect(roleFromClaims({ groups: ['ml-admins'] }, { roleClaim: '', roleMap: {} })).toEqual({
      role: 'annotator',
      matched: [],
    });
    expect(roleFromClaims({}, map).role).toBe('annotator');
    expect(roleFromClaims({ groups: ['staff'] }, map).role).toBe('annotator');
  });

  it('takes the highest role any value maps to, from a list or a single string', () => {
    expect(roleFromClaims({ groups: ['labelers', 'staff', 'ml-admins'] }, map)).toEqual({
      role: 'admin',
      matched: ['labelers', 'ml-admins'],
    });
    expect(roleFromClaims({ groups: 'labelers' }, map).role).toBe('reviewer');
  });

  it('reaches into objects with a dotted path, and ignores values that are not strings', () => {
    const nested = { roleClaim: 'realm_access.roles', roleMap: { admin: 'admin' } as const };
    expect(roleFromClaims({ realm_access: { roles: ['admin'] } }, nested).role).toBe('admin');
    expect(roleFromClaims({ realm_access: ['admin'] }, nested).role).toBe('annotator');
    expect(roleFromClaims({ groups: [{ name: 'ml-admins' }, 7] }, map).role).toBe('annotator');
  });

  it('does not take inherited keys of the map for claim values', () => {
    expect(roleFromClaims({ groups: ['constructor', 'toString'] }, map)).toEqual({
      role: 'annotator',
      matched: [],
    });
  });
});

describe('profileFromClaims', () => {
  it('lower-cases the e-mail and trusts email_verified only when it is true', () => {
    expect(profileFromClaims({ email: 'Ann@Example.ORG', email_verified: true, name: 'Ann' })).toEqual({
      email: 'ann@example.org',
      emailVerified: true,
      name: 'Ann',
    });
    expect(profileFromClaims({ email: 'ann@example.org', email_verified: 'true' }).emailVerified).toBe(false);
  });

  it('names the account by name, else preferred_username, else the e-mail', () => {
    expect(profileFromClaims({ email: 'a@example.org', preferred_username: 'ann' }).name).toBe('ann');
    expect(profileFromClaims({ email: 'a@example.org' }).name).toBe('a@example.org');
  });

  it('counts a malformed claim as absent', () => {
    expect(profileFromClaims({ email: 'not an address', name: 42 })).toEqual({
      email: null,
      emailVerified: false,
      name: null,
    });
  });
});
