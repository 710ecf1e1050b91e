import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { EventEmitter, once } from 'node:events';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import { simpleParser } from 'mailparser';
import { generate } from 'otplib';
import { SMTPServer } from 'smtp-server';
import { hashSecretToken } from '../activities/identity/secret-tokens';
import { inviteUser } from '../api/routes/identity/admin-cli';
import { createUserWithToken, startTestApi, type TestApi } from '../testkit/api';
import { createTestDatabase, type TestDatabase } from '../testkit/database';
import { REPO_ROOT, localStackEnv, testConfig } from '../testkit/stack';
import { capturedLogger, expectSecretsKept, freshAddress, identityClient } from './helpers/identity';

/**
 * Password sign-in, reset by e-mail, sign-up, password change and sessions (docs/identity.md),
 * against the real API and PostgreSQL, with a real SMTP server on loopback (smtp-server, with
 * authentication) whose mail is parsed with mailparser.
 */

const SMTP_USER = 'drivelab-mailer';
const SMTP_PASSWORD = `smtp-${randomBytes(9).toString('hex')}`;
const LOGIN_ADDRESS_MAX = 15;

interface Mail {
  to: string;
  subject: string;
  text: string;
}
const inbox: Mail[] = [];
const arrivals = new EventEmitter();
let smtp: SMTPServer;
let smtpPort = 0;

let db: TestDatabase;
/** Sign-up by invitation, mail over SMTP. */
let api: TestApi;
/** Sign-up by e-mail domain, mail over SMTP. */
let domainApi: TestApi;
/** The defaults: sign-up off, no SMTP. */
let bareApi: TestApi;
let adminToken: string;
const logs = capturedLogger();
const { call, responses } = identityClient();
/** Secrets made during the run, checked against every log line and response at the end. */
const secrets = { never: [SMTP_PASSWORD], shownOnce: [] as string[] };
/** Addresses the answers must not reveal anything about: no mail may ever go to them. */
const neverMailed = ['ghost@example.org', 'nobody@example.org'];

const mailEnv = () => ({
  APP_MAIL__HOST: '127.0.0.1',
  APP_MAIL__PORT: String(smtpPort),
  APP_MAIL__USER: SMTP_USER,
  APP_MAIL__PASSWORD: SMTP_PASSWORD,
  APP_MAIL__FROM: 'drivelab <no-reply@drivelab.test>',
});

beforeAll(async () => {
  smtp = new SMTPServer({
    disabledCommands: ['STARTTLS'],
    allowInsecureAuth: true,
    onAuth(auth, _session, done) {
      if (auth.username === SMTP_USER && auth.password === SMTP_PASSWORD) done(null, { user: auth.username });
      else done(new Error('wrong SMTP credentials'));
    },
    onData(stream, session, done) {
      simpleParser(stream).then((parsed) => {
        for (const rcpt of session.envelope.rcptTo)
          inbox.push({ to: rcpt.address, subject: parsed.subject ?? '', text: parsed.text ?? '' });
        arrivals.emit('mail');
        done();
      }, done);
    },
  });
  await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', resolve));
  smtpPort = (smtp.server.address() as AddressInfo).port;
  db = await createTestDatabase();
  const base = { DATABASE_URL: db.url, APP_AUTH__LOGIN_ADDRESS_MAX: String(LOGIN_ADDRESS_MAX) };
  api = await startTestApi(
    testConfig({ ...base, ...mailEnv(), APP_AUTH__SIGNUP_MODE: 'invitation' }),
    logs.logger,
  );
  domainApi = await startTestApi(
    testConfig({
      ...base,
      ...mailEnv(),
      APP_AUTH__SIGNUP_MODE: 'domain',
      APP_AUTH__SIGNUP_DOMAINS: 'lab.test',
    }),
    logs.logger,
  );
  bareApi = await startTestApi(testConfig(base), logs.logger);
  adminToken = (await createUserWithToken(api.deps, 'admin')).token;
});
afterAll(async () => {
  await Promise.all([api?.close(), domainApi?.close(), bareApi?.close()]);
  await db?.drop();
  await new Promise<void>((resolve) => (smtp ? smtp.close(resolve) : resolve()));
});

/** The `seen`-th mail to `address` (0: the first), waiting for it to arrive. */
async function mailTo(address: string, seen = 0): Promise<Mail> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const mails = inbox.filter((m) => m.to === address);
    if (mails.length > seen) return mails[seen]!;
    if (Date.now() > deadline) throw new Error(`no mail number ${seen + 1} to ${address} arrived`);
    await Promise.race([once(arrivals, 'mail'), new Promise((r) => setTimeout(r, 500))]);
  }
}

const tokenIn = (mail: Mail, label: string): string => {
  const token = new RegExp(`${label}: (\\S+)`).exec(mail.text)?.[1];
  if (!token) throw new Error(`no "${label}" in mail: ${mail.text}`);
  secrets.never.push(token);
  return token;
};

let people = 0;
/** A person with a password, created by an admin through POST /api/users. */
async function newPerson(domain = 'example.org'): Promise<{ id: string; email: string; password: string }> {
  people += 1;
  const email = `person${people}@${domain}`;
  const password = `pass ${randomBytes(6).toString('hex')} phrase`;
  secrets.never.push(password);
  const res = await call(api, 'POST', '/api/users', {
    token: adminToken,
    body: { email, name: `Person ${people}`, password },
  });
  expect(res.status).toBe(201);
  return { id: res.body.id, email, password };
}

async function login(email: string, password: string, from = freshAddress()): Promise<string> {
  const res = await call(api, 'POST', '/api/auth/login', { body: { email, password }, from });
  expect(res.status).toBe(200);
  secrets.shownOnce.push(res.body.token);
  return res.body.token as string;
}

const me = async (token: string, on = api) => (await call(on, 'GET', '/api/users/me', { token })).status;

/** The CLI as an admin runs it, with the API's environment. */
async function adminCli(...args: string[]): Promise<string> {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [
      path.join(REPO_ROOT, 'node_modules/tsx/dist/cli.mjs'),
      path.join(REPO_ROOT, 'api/routes/identity/admin-cli.ts'),
      ...args,
    ],
    { env: { ...process.env, ...localStackEnv(), ...mailEnv(), DATABASE_URL: db.url, APP_ENV: 'test' } },
  );
  return stdout;
}

describe('sign-in methods and the route gate', () => {
  it('says which sign-in methods each deployment offers, to anyone', async () => {
    const offered = await call(api, 'GET', '/api/auth/methods');
    expect(offered.status).toBe(200);
    expect(offered.body).toEqual({
      password: { enabled: true, reset_by_email: true },
      mfa: { enabled: true, type: 'totp', digits: 6, period_seconds: 30 },
      oidc: { enabled: false },
      signup: { mode: 'invitation' },
    });
    expect((await call(domainApi, 'GET', '/api/auth/methods')).body.signup).toEqual({ mode: 'domain' });
    const bare = await call(bareApi, 'GET', '/api/auth/methods');
    expect(bare.body.password).toEqual({ enabled: true, reset_by_email: false });
    expect(bare.body.signup).toEqual({ mode: 'off' });
  });

  it('answers 401 without a token on every non-public identity route, and lets the lowest role call each', async () => {
    const routes = api.routes.filter((r) => r.group === 'identity');
    const publicPaths = routes.filter((r) => r.spec.access === 'public').map((r) => `${r.method} ${r.path}`);
    expect(publicPaths.sort()).toEqual(
      [
        'get /api/auth/methods',
        'get /api/auth/oidc/callback',
        'get /api/auth/oidc/start',
        'post /api/auth/login',
        'post /api/auth/login/mfa',
        'post /api/auth/password/reset',
        'post /api/auth/password/reset-request',
        'post /api/auth/signup',
      ].sort(),
    );
    const annotator = await createUserWithToken(api.deps, 'annotator');
    const guarded = routes.filter((r) => r.spec.access !== 'public');
    expect(guarded).toHaveLength(8);
    for (const route of guarded) {
      expect(route.spec.access).toBe('annotator');
      const method = route.method.toUpperCase();
      const none = await call(api, method, route.path);
      expect({ route: route.path, status: none.status }).toEqual({ route: route.path, status: 401 });
      const lowest = await call(api, method, route.path, { token: annotator.token });
      expect({
        route: route.path,
        allowed: ![401, 403].includes(lowest.status) && lowest.status < 500,
      }).toEqual({
        route: route.path,
        allowed: true,
      });
    }
  });
});

describe('password reset by e-mail', () => {
  it('answers a known and an unknown address alike, and mails the known one a token that works once', async () => {
    const person = await newPerson();
    const before = await login(person.email, person.password);
    const known = await call(api, 'POST', '/api/auth/password/reset-request', {
      body: { email: person.email },
    });
    const unknown = await call(api, 'POST', '/api/auth/password/reset-request', {
      body: { email: 'ghost@example.org' },
    });
    expect(known.status).toBe(202);
    expect(unknown).toEqual(known);

    const mail = await mailTo(person.email);
    expect(mail.subject).toBe('Reset your drivelab password');
    const token = tokenIn(mail, 'Reset token');
    // Stored only as its hash.
    const row = await api.deps.db.passwordReset.findUniqueOrThrow({
      where: { tokenHash: hashSecretToken(token) },
    });
    expect(row).toMatchObject({ userId: person.id, usedAt: null });

    // A refused password does not spend the token.
    const weak = await call(api, 'POST', '/api/auth/password/reset', {
      body: { token, new_password: 'aaaa' },
    });
    expect(weak.status).toBe(422);
    expect(weak.body.errors.map((e: { field: string }) => e.field)).toEqual([
      'body.new_password',
      'body.new_password',
    ]);

    const newPassword = `new ${randomBytes(6).toString('hex')} words`;
    secrets.never.push(newPassword);
    const reset = await call(api, 'POST', '/api/auth/password/reset', {
      body: { token, new_password: newPassword },
    });
    expect(reset.status).toBe(200);
    secrets.shownOnce.push(reset.body.token);
    expect(await me(reset.body.token)).toBe(200);
    // Every token of the account from before the reset is dead.
    expect(await me(before)).toBe(401);

    const again = await call(api, 'POST', '/api/auth/password/reset', {
      body: { token, new_password: `other ${newPassword}` },
    });
    expect(again.status).toBe(401);
    expect(again.body.detail).toMatch(/unknown, used or expired/);
    const old = await call(api, 'POST', '/api/auth/login', {
      body: { email: person.email, password: person.password },
    });
    expect(old.status).toBe(401);
    await login(person.email, newPassword);
  });

  it('refuses a reset token after its expiry', async () => {
    const person = await newPerson();
    await call(api, 'POST', '/api/auth/password/reset-request', { body: { email: person.email } });
    const token = tokenIn(await mailTo(person.email), 'Reset token');
    await api.deps.db.passwordReset.update({
      where: { tokenHash: hashSecretToken(token) },
      data: { expiresAt: new Date(Date.now() - 1000) },
    });
    const late = await call(api, 'POST', '/api/auth/password/reset', {
      body: { token, new_password: 'a fine new passphrase' },
    });
    expect(late.status).toBe(401);
  });

  it('without SMTP answers the same, sends nothing and says why in the log', async () => {
    const person = await newPerson();
    const withMail = await call(api, 'POST', '/api/auth/password/reset-request', {
      body: { email: 'nobody@example.org' },
    });
    const withoutMail = await call(bareApi, 'POST', '/api/auth/password/reset-request', {
      body: { email: person.email },
    });
    expect(withoutMail).toEqual(withMail);
    // The misconfiguration is logged before the answer leaves (the check comes first, synchronously).
    expect(logs.text()).toMatch(/no SMTP transport is configured \(APP_MAIL__HOST\): no mail sent/);
    expect(await api.deps.db.passwordReset.count({ where: { userId: person.id } })).toBe(0);
  });

  it('answers the reset of an account with MFA on with an mfa_handle, and no token', async () => {
    const person = await newPerson();
    const token = await login(person.email, person.password);
    const setup = await call(api, 'POST', '/api/auth/mfa/setup', { token });
    secrets.shownOnce.push(setup.body.secret);
    const confirm = await call(api, 'POST', '/api/auth/mfa/confirm', {
      token,
      body: { code: await generate({ secret: setup.body.secret }) },
    });
    expect(confirm.status).toBe(200);
    secrets.shownOnce.push(...confirm.body.recovery_codes);

    await call(api, 'POST', '/api/auth/password/reset-request', { body: { email: person.email } });
    const resetToken = tokenIn(await mailTo(person.email), 'Reset token');
    const reset = await call(api, 'POST', '/api/auth/password/reset', {
      body: { token: resetToken, new_password: 'a reset passphrase for mfa' },
    });
    expect(reset.status).toBe(200);
    expect(reset.body).toEqual({
      mfa_required: true,
      mfa_handle: expect.any(String),
      mfa_expires_at: expect.any(String),
      attempts_left: 5,
    });
    const second = await call(api, 'POST', '/api/auth/login/mfa', {
      body: { mfa_handle: reset.body.mfa_handle, code: confirm.body.recovery_codes[0] },
    });
    expect(second.status).toBe(200);
    secrets.shownOnce.push(second.body.token);
    expect(await me(second.body.token)).toBe(200);
  });
});

describe('sign-up', () => {
  it('is off by default', async () => {
    const res = await call(bareApi, 'POST', '/api/auth/signup', {
      body: { invitation_token: 'x', name: 'X', password: 'a fine passphrase' },
    });
    expect(res.status).toBe(422);
    expect(res.body.detail).toBe('sign-up is off on this deployment');
  });

  it('takes an invitation made with the admin command line once, with the role it names', async () => {
    const email = 'invited@example.org';
    expect(await adminCli('invite', email, '--role', 'reviewer')).toMatch(
      new RegExp(`invitation \\S+ mailed to ${email} as reviewer`),
    );
    const token = tokenIn(await mailTo(email), 'Invitation token');
    const password = `welcome ${randomBytes(6).toString('hex')} words`;
    secrets.never.push(password);
    expect((await call(api, 'POST', '/api/auth/signup', { body: { email } })).body.detail).toMatch(
      /needs an invitation/,
    );
    const missing = await call(api, 'POST', '/api/auth/signup', { body: { invitation_token: token } });
    expect(missing.status).toBe(422);
    expect(missing.body.errors.map((e: { field: string }) => e.field)).toEqual([
      'body.name',
      'body.password',
    ]);

    const created = await call(api, 'POST', '/api/auth/signup', {
      body: { invitation_token: token, name: 'Invited Person', password },
    });
    expect(created.status).toBe(201);
    secrets.shownOnce.push(created.body.token);
    expect(created.body.user).toMatchObject({ email, role: 'reviewer' });
    expect(await me(created.body.token)).toBe(200);
    const twice = await call(api, 'POST', '/api/auth/signup', {
      body: { invitation_token: token, name: 'Again', password: `${password} again` },
    });
    expect(twice.status).toBe(401);
    await expect(adminCli('invite', email)).rejects.toThrow(/has an account already/);
  });

  it('refuses an expired invitation', async () => {
    const email = 'late@example.org';
    const made = await inviteUser(api.deps.db, api.deps.config, email, 'annotator');
    expect(made).toMatchObject({ mailed: true, token: null });
    const token = tokenIn(await mailTo(email), 'Invitation token');
    await api.deps.db.invitation.update({
      where: { id: made.invitationId },
      data: { expiresAt: new Date(Date.now() - 1000) },
    });
    const res = await call(api, 'POST', '/api/auth/signup', {
      body: { invitation_token: token, name: 'Late', password: 'a fine passphrase' },
    });
    expect(res.status).toBe(401);
  });

  it('in domain mode mails an allowed address an invitation, without saying whether it has an account', async () => {
    const existing = await newPerson('lab.test');
    neverMailed.push(existing.email);
    const fresh = await call(domainApi, 'POST', '/api/auth/signup', { body: { email: 'newcomer@lab.test' } });
    const taken = await call(domainApi, 'POST', '/api/auth/signup', { body: { email: existing.email } });
    expect(fresh.status).toBe(202);
    expect(taken).toEqual(fresh);
    const outside = await call(domainApi, 'POST', '/api/auth/signup', {
      body: { email: 'someone@other.test' },
    });
    expect(outside.status).toBe(422);
    expect(outside.body.detail).toBe('sign-up is open only to addresses in lab.test');

    const token = tokenIn(await mailTo('newcomer@lab.test'), 'Invitation token');
    const created = await call(domainApi, 'POST', '/api/auth/signup', {
      body: { invitation_token: token, name: 'Newcomer', password: 'a passphrase of my own' },
    });
    expect(created.status).toBe(201);
    secrets.shownOnce.push(created.body.token);
    expect(created.body.user).toMatchObject({ email: 'newcomer@lab.test', role: 'annotator' });
  });
});

describe('password change', () => {
  it('needs the current password, applies the policy, and ends the other sessions', async () => {
    const person = await newPerson();
    const mine = await login(person.email, person.password);
    const elsewhere = await login(person.email, person.password);
    const change = (body: object) => call(api, 'POST', '/api/auth/password/change', { token: mine, body });
    const next = `changed ${randomBytes(6).toString('hex')} words`;
    secrets.never.push(next);

    const without = await change({ new_password: next });
    expect(without.status).toBe(422);
    expect(without.body.errors[0].field).toBe('body.current_password');
    expect((await change({ new_password: next, current_password: 'not my password' })).body.detail).toBe(
      'current_password is wrong',
    );
    const same = await change({ new_password: person.password, current_password: person.password });
    expect(same.body.errors).toEqual([
      { field: 'body.new_password', message: 'must differ from the current password' },
    ]);
    const named = await change({ new_password: `${person.email} is me`, current_password: person.password });
    expect(named.body.errors[0].message).toBe('must not contain the e-mail address or its name part');

    const done = await change({ new_password: next, current_password: person.password });
    expect(done.status).toBe(200);
    expect(done.body).toEqual({ changed: true, must_change_password: false, other_sessions_ended: 1 });
    expect(await me(mine)).toBe(200);
    expect(await me(elsewhere)).toBe(401);
    await login(person.email, next);
  });

  it('lets a user with a temporary password from the admin command line do nothing but change it', async () => {
    const person = await newPerson();
    const before = await login(person.email, person.password);
    const printed = await adminCli('temporary-password', person.email);
    const temporary = /shown once\):\n(\S+)/.exec(printed)?.[1];
    expect(temporary).toBeDefined();
    secrets.never.push(temporary!);
    expect(await me(before)).toBe(401);

    const signedIn = await call(api, 'POST', '/api/auth/login', {
      body: { email: person.email, password: temporary },
    });
    expect(signedIn.body.must_change_password).toBe(true);
    const token = signedIn.body.token as string;
    secrets.shownOnce.push(token);
    const refused = await call(api, 'GET', '/api/users/me', { token });
    expect(refused.status).toBe(403);
    expect(refused.body.detail).toMatch(/must change its password first/);
    expect((await call(api, 'GET', '/api/auth/profile', { token })).body.must_change_password).toBe(true);

    const next = `my own ${randomBytes(6).toString('hex')} words`;
    secrets.never.push(next);
    const changed = await call(api, 'POST', '/api/auth/password/change', {
      token,
      body: { new_password: next },
    });
    expect(changed.status).toBe(200);
    expect(await me(token)).toBe(200);
  });
});

describe('sessions', () => {
  it('logout ends that sign-in only', async () => {
    const person = await newPerson();
    const [a, b] = [await login(person.email, person.password), await login(person.email, person.password)];
    expect((await call(api, 'POST', '/api/auth/logout', { token: a })).status).toBe(200);
    const dead = await call(api, 'GET', '/api/users/me', { token: a });
    expect(dead.status).toBe(401);
    expect(dead.body.detail).toMatch(/sign-in has ended/);
    expect(await me(b)).toBe(200);
    // An admin-minted token belongs to no sign-in: logout says so rather than pretend.
    const minted = await createUserWithToken(api.deps, 'annotator');
    expect((await call(api, 'POST', '/api/auth/logout', { token: minted.token })).status).toBe(422);
  });

  it("sessions/revoke ends the caller's other sessions, and the profile lists what is left", async () => {
    const person = await newPerson();
    const from = freshAddress();
    const mine = await login(person.email, person.password, from);
    const others = [await login(person.email, person.password), await login(person.email, person.password)];
    const revoked = await call(api, 'POST', '/api/auth/sessions/revoke', { token: mine });
    expect(revoked.body).toMatchObject({ revoked: 2 });
    for (const other of others) expect(await me(other)).toBe(401);
    const profile = await call(api, 'GET', '/api/auth/profile', { token: mine });
    expect(profile.status).toBe(200);
    expect(profile.body).toMatchObject({
      user: { id: person.id, email: person.email },
      role: 'annotator',
      must_change_password: false,
      mfa: { enabled: false, setup_pending: false, recovery_codes_left: 0 },
      identities: [],
    });
    expect(profile.body.sessions).toEqual([
      expect.objectContaining({
        method: 'password',
        ip: from,
        current: true,
        created_at: expect.any(String),
      }),
    ]);
  });

  it('refuses every token of a user whose tokens an admin revoked', async () => {
    const person = await newPerson();
    const token = await login(person.email, person.password);
    expect(
      (await call(api, 'POST', `/api/users/${person.id}/revoke-tokens`, { token: adminToken })).status,
    ).toBe(200);
    const res = await call(api, 'GET', '/api/auth/profile', { token });
    expect(res.status).toBe(401);
    expect(res.body.detail).toMatch(/revoked/);
  });
});

describe('brute force against login', () => {
  it('is limited per account, whatever address the guesses come from', async () => {
    const person = await newPerson();
    const max = api.deps.config.rateLimit.loginMax;
    for (let i = 0; i < max; i++) {
      const guess = await call(api, 'POST', '/api/auth/login', {
        body: { email: person.email, password: `guess ${i} x y z` },
      });
      expect(guess.status).toBe(401);
    }
    const right = await call(api, 'POST', '/api/auth/login', {
      body: { email: person.email, password: person.password },
    });
    expect(right.status).toBe(429);
  });

  it('is limited per address, whatever accounts it guesses at', async () => {
    const person = await newPerson();
    const from = freshAddress();
    for (let i = 0; i < LOGIN_ADDRESS_MAX; i++) {
      const guess = await call(api, 'POST', '/api/auth/login', {
        body: { email: `sprayed${i}@example.org`, password: 'spray spray spray' },
        from,
      });
      expect(guess.status).toBe(401);
    }
    const right = await call(api, 'POST', '/api/auth/login', {
      body: { email: person.email, password: person.password },
      from,
    });
    expect(right.status).toBe(429);
    expect(right.body.detail).toMatch(/login-address/);
  });
});

describe('after all of the above', () => {
  it('kept every secret out of the logs and out of any later response, and mailed no unknown address', () => {
    expect(logs.text()).toMatch(/"url":"\/api\/auth\/password\/reset"/);
    expectSecretsKept(logs.text(), responses, secrets);
    expect(inbox.filter((m) => neverMailed.includes(m.to))).toEqual([]);
  });
});
