import { NotAuthenticatedError } from '../../core/errors';
import { createTokenIssuer } from './tokens';

const opts = { secret: 'unit-test-secret-of-some-length', issuer: 'drivelab', ttlHours: 12 };

describe('token issuer', () => {
  it('round-trips the user id and token version with a 12-hour expiry', async () => {
    const now = new Date('2026-11-22T10:00:00Z');
    const issuer = createTokenIssuer({ ...opts, now: () => now });
    const { token, expiresAt } = await issuer.issue('u-1', 3);
    expect(expiresAt.toISOString()).toBe('2026-11-22T22:00:00.000Z');
    await expect(issuer.verify(token)).resolves.toMatchObject({ userId: 'u-1', tokenVersion: 3, expiresAt });
  });

  it('issues media tokens with their own scope and a short lifetime', async () => {
    const now = new Date('2026-11-22T10:00:00Z');
    const issuer = createTokenIssuer({ ...opts, mediaTtlMinutes: 15, now: () => now });
    const media = await issuer.issueMedia('u-1', 3);
    expect(media.expiresAt.toISOString()).toBe('2026-11-22T10:15:00.000Z');
    await expect(issuer.verify(media.token)).resolves.toMatchObject({ userId: 'u-1', scope: 'media' });
    await expect(issuer.verify((await issuer.issue('u-1', 3)).token)).resolves.toMatchObject({
      scope: 'api',
    });
  });

  it('rejects expired, tampered and foreign tokens', async () => {
    let now = new Date('2026-11-22T10:00:00Z');
    const issuer = createTokenIssuer({ ...opts, now: () => now });
    const { token } = await issuer.issue('u-1', 0);
    now = new Date('2026-11-22T22:00:01Z');
    await expect(issuer.verify(token)).rejects.toThrow(/expired/);
    now = new Date('2026-11-22T11:00:00Z');
    const [h, p, s] = token.split('.');
    const forgedPayload = Buffer.from(
      JSON.stringify({ sub: 'admin', tv: 0, iss: 'drivelab', exp: 9e9 }),
    ).toString('base64url');
    await expect(issuer.verify(`${h}.${forgedPayload}.${s}`)).rejects.toBeInstanceOf(NotAuthenticatedError);
    const other = createTokenIssuer({ ...opts, secret: 'a-different-secret-entirely', now: () => now });
    await expect(other.verify(token)).rejects.toBeInstanceOf(NotAuthenticatedError);
    await expect(issuer.verify(`${h}.${p}`)).rejects.toBeInstanceOf(NotAuthenticatedError);
  });
});
