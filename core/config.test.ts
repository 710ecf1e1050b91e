import { BUILT_IN_SECRETS, ConfigError, envToTree, loadConfig } from './config';

describe('envToTree', () => {
  it('nests APP_ variables on __ and camel-cases snake_case keys', () => {
    expect(
      envToTree({
        APP_INGEST__TARGET_FPS: '5',
        APP_PII__COVERAGE_GATE: 'enforcing',
        APP_ENV: 'test',
        OTHER: 'x',
      }),
    ).toEqual({
      ingest: { targetFps: '5' },
      pii: { coverageGate: 'enforcing' },
      env: 'test',
    });
  });

  it('takes DATABASE_URL unless APP_DATABASE__URL is set', () => {
    expect(envToTree({ DATABASE_URL: 'postgresql://a' })).toEqual({ database: { url: 'postgresql://a' } });
    expect(envToTree({ DATABASE_URL: 'postgresql://a', APP_DATABASE__URL: 'postgresql://b' })).toEqual({
      database: { url: 'postgresql://b' },
    });
  });
});

describe('loadConfig', () => {
  it('applies the spec defaults on an empty environment', () => {
    const c = loadConfig({});
    expect(c.env).toBe('local');
    expect(c.ingest.targetFps).toBe(3);
    expect(c.pii.coverageGate).toBe('advisory');
    expect(c.auth.tokenTtlHours).toBe(12);
    expect(c.temporal.gpuTaskQueue).toBe('gpu');
    expect(c.temporal.cpuTaskQueue).toBe('cpu');
  });

  it('coerces and validates values, naming the variable at fault', () => {
    expect(loadConfig({ APP_INGEST__TARGET_FPS: '2.5', APP_STORAGE__USE_SSL: 'true' })).toMatchObject({
      ingest: { targetFps: 2.5 },
      storage: { useSsl: true },
    });
    expect(() => loadConfig({ APP_PII__COVERAGE_GATE: 'sometimes' })).toThrow(/APP_PII__COVERAGE_GATE/);
    expect(() => loadConfig({ APP_INGEST__TARGET_FPS: '-1' })).toThrow(/APP_INGEST__TARGET_FPS/);
    expect(() => loadConfig({ APP_ENV: 'staging' })).toThrow(ConfigError);
  });

  it('reads the harness parity epsilon (quality section), 1e-6 by default, never negative', () => {
    expect(loadConfig({}).quality.parityEpsilon).toBe(1e-6);
    expect(loadConfig({ APP_QUALITY__PARITY_EPSILON: '1e-4' }).quality.parityEpsilon).toBe(1e-4);
    expect(() => loadConfig({ APP_QUALITY__PARITY_EPSILON: '-1' })).toThrow(/APP_QUALITY__PARITY_EPSILON/);
  });

  it('refuses to start outside local/test while any built-in secret is in use, naming each (Authentication 9)', () => {
    let message = '';
    try {
      loadConfig({ APP_ENV: 'production' });
    } catch (err) {
      message = (err as Error).message;
    }
    for (const name of Object.keys(BUILT_IN_SECRETS)) expect(message).toContain(name);

    const secrets = {
      APP_ENV: 'production',
      APP_AUTH__TOKEN_SECRET: 'a-real-secret-of-enough-length',
      APP_AUTH__SEALING_KEY: 'a-real-sealing-key-of-enough-length',
      APP_STORAGE__SECRET_KEY: 'another-real-secret',
      DATABASE_URL: 'postgresql://app:real@db:5432/app',
      APP_EXPORT__SIGNING_KEY: '-----BEGIN PRIVATE KEY-----\\na deployed key\\n-----END PRIVATE KEY-----',
    };
    expect(loadConfig(secrets).env).toBe('production');
    expect(() =>
      loadConfig({ ...secrets, APP_STORAGE__SECRET_KEY: BUILT_IN_SECRETS['storage.secretKey'] }),
    ).toThrow(/storage\.secretKey/);
    expect(loadConfig({ APP_ENV: 'test' }).env).toBe('test');
  });
});

describe('identity settings (auth and mail sections, docs/identity.md)', () => {
  it('keeps sign-up off and mail unconfigured by default', () => {
    const c = loadConfig({});
    expect(c.auth).toMatchObject({ signupMode: 'off', signupDomains: [], passwordMinLength: 12 });
    expect(c.mail).toEqual({ port: 587, secure: false });
  });

  it('reads the allowed sign-up domains as a lower-case list and refuses what is not a domain', () => {
    expect(
      loadConfig({ APP_AUTH__SIGNUP_DOMAINS: ' Example.org, lab.example.org ,' }).auth.signupDomains,
    ).toEqual(['example.org', 'lab.example.org']);
    expect(() => loadConfig({ APP_AUTH__SIGNUP_DOMAINS: 'example.org,@evil' })).toThrow(
      /APP_AUTH__SIGNUP_DOMAINS/,
    );
    expect(() => loadConfig({ APP_AUTH__SIGNUP_MODE: 'open' })).toThrow(/APP_AUTH__SIGNUP_MODE/);
  });

  it('needs a From address with an SMTP host, and a user with an SMTP password', () => {
    expect(() => loadConfig({ APP_MAIL__HOST: 'smtp.example.org' })).toThrow(/APP_MAIL__FROM: required/);
    expect(() =>
      loadConfig({
        APP_MAIL__HOST: 'smtp.example.org',
        APP_MAIL__FROM: 'a@example.org',
        APP_MAIL__PASSWORD: 'x',
      }),
    ).toThrow(/APP_MAIL__USER: required/);
    expect(
      loadConfig({
        APP_MAIL__HOST: 'smtp.example.org',
        APP_MAIL__FROM: 'a@example.org',
        APP_MAIL__SECURE: 'true',
      }).mail,
    ).toMatchObject({ host: 'smtp.example.org', secure: true, port: 587 });
  });
});
