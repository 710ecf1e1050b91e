import { z } from 'zod';
import { ConflictError, InputError, NotAuthenticatedError, RefusedError } from '../../../core/errors';
import { classifySecondFactor } from '../../../core/identity/recovery-codes';
import { openSecret, sealSecret } from '../../../core/sealed';
import type { Principal } from '../../auth/principal';
import type { RouteGroup } from '../../http/route-group';
import { auditSelf, clientAddress, signedIn, type IdentityContext } from './context';
import {
  newRecoveryCodes,
  newTotpSecret,
  spendSecondFactor,
  TOTP_DIGITS,
  TOTP_PERIOD_SECONDS,
  totpStep,
} from './second-factor';
import { CodeIn } from './validators';

const HANDLE_REFUSED =
  'this sign-in step is unknown, expired, used or out of attempts: sign in with your password again';

/** Second step of a sign-in, and turning MFA (TOTP, RFC 6238) on and off. */
export function addMfaRoutes(group: RouteGroup, ctx: IdentityContext): void {
  const { db, config } = ctx.deps;
  const { sealingKey } = config.auth;
  const maxAttempts = config.auth.mfaChallengeMaxAttempts;

  /** The caller's user row, refused for service accounts (they have no second factor to set). */
  const personOf = async (principal: Principal) => {
    const user = await db.user.findUniqueOrThrow({ where: { id: principal.userId } });
    if (user.kind !== 'person')
      throw new RefusedError('a service account signs in with its token only: no MFA');
    return user;
  };

  /** A route that checks a code spends the account's MFA budget first, like the sign-in step. */
  const personCheckingCode = async (principal: Principal) => {
    await ctx.limiter.consume('mfa-account', principal.userId);
    return personOf(principal);
  };

  const mfaState = async (userId: string) => {
    const user = await db.user.findUniqueOrThrow({ where: { id: userId } });
    return {
      mfa_enabled: user.mfaEnabled,
      setup_pending: user.mfaPendingSecret !== null,
      recovery_codes_left: await db.mfaRecoveryCode.count({ where: { userId, usedAt: null } }),
    };
  };

  group
    .post(
      '/api/auth/login/mfa',
      {
        summary: `Second step of a sign-in (CodeIn): a TOTP code or a recovery code with the \`mfa_handle\` of the password step. ${maxAttempts} codes per handle; limited per account and per client address across all API processes`,
        access: 'public',
        body: { name: 'CodeIn', schema: CodeIn },
        statuses: {
          401: 'wrong code (`attempts_left` says how many the handle has), or a handle that is unknown, expired, used or out of attempts',
        },
      },
      async ({ body, req }) => {
        if (body.mfa_handle === null)
          throw new InputError('mfa_handle is required: the handle the password step answered', [
            { field: 'body.mfa_handle', message: 'required to sign in' },
          ]);
        await ctx.limiter.consume('mfa-address', clientAddress(req));
        const handle = z.uuid().safeParse(body.mfa_handle);
        if (!handle.success) throw new NotAuthenticatedError(HANDLE_REFUSED);
        // The attempt is counted before the code is looked at, in the row every process shares.
        const claimed = await db.mfaChallenge.updateMany({
          where: {
            id: handle.data,
            consumedAt: null,
            expiresAt: { gt: new Date() },
            attempts: { lt: maxAttempts },
          },
          data: { attempts: { increment: 1 } },
        });
        if (claimed.count === 0) throw new NotAuthenticatedError(HANDLE_REFUSED);
        const challenge = await db.mfaChallenge.findUniqueOrThrow({ where: { id: handle.data } });
        await ctx.limiter.consume('mfa-account', challenge.userId);
        const user = await db.user.findUnique({ where: { id: challenge.userId } });
        if (!user || user.disabledAt || !user.mfaEnabled) throw new NotAuthenticatedError(HANDLE_REFUSED);
        const factor = await spendSecondFactor(db, sealingKey, user, body.code);
        if (!factor) {
          const left = maxAttempts - challenge.attempts;
          throw new NotAuthenticatedError(`wrong code; ${left} attempt(s) left with this handle`, {
            attempts_left: left,
          });
        }
        const consumed = await db.mfaChallenge.updateMany({
          where: { id: challenge.id, consumedAt: null },
          data: { consumedAt: new Date() },
        });
        if (consumed.count === 0) throw new NotAuthenticatedError(HANDLE_REFUSED);
        await auditSelf(db, user.id, 'user.login.mfa', req, { factor });
        return signedIn(ctx, user, 'mfa', req);
      },
    )
    .post(
      '/api/auth/mfa/setup',
      {
        summary:
          'Start turning MFA on: a new pending TOTP secret (replacing any pending one), shown this once with its otpauth URI; POST /api/auth/mfa/confirm with a code turns it on',
        access: 'annotator',
        statuses: { 409: 'MFA is on already (disable it first)', 422: 'the caller is a service account' },
      },
      async ({ principal, req }) => {
        const user = await personOf(principal);
        if (user.mfaEnabled)
          throw new ConflictError('MFA is on already; disable it first (POST /api/auth/mfa/disable)');
        const { secret, uri } = newTotpSecret(config.auth.issuer, user.email);
        await db.user.update({
          where: { id: user.id },
          data: { mfaPendingSecret: sealSecret(sealingKey, secret) },
        });
        await auditSelf(db, user.id, 'user.mfa.setup_started', req);
        return {
          secret,
          otpauth_uri: uri,
          algorithm: 'SHA1',
          digits: TOTP_DIGITS,
          period_seconds: TOTP_PERIOD_SECONDS,
          confirm_with: 'POST /api/auth/mfa/confirm',
        };
      },
    )
    .post(
      '/api/auth/mfa/setup-pending',
      {
        summary:
          "The caller's MFA state: on or off, whether a setup waits for its confirming code, and how many recovery codes are left (never the secret)",
        access: 'annotator',
      },
      async ({ principal }) => mfaState(principal.userId),
    )
    .post(
      '/api/auth/mfa/confirm',
      {
        summary:
          'Turn MFA on with a code of the pending secret (CodeIn): answers 10 recovery codes, shown this once and stored hashed',
        access: 'annotator',
        body: { name: 'CodeIn', schema: CodeIn },
        statuses: {
          409: 'no setup is pending, MFA is on already, or the setup changed meanwhile',
          422: 'the code does not match the pending secret, or the caller is a service account',
        },
      },
      async ({ body, principal, req }) => {
        const user = await personCheckingCode(principal);
        if (user.mfaEnabled) throw new ConflictError('MFA is on already');
        const pending = user.mfaPendingSecret;
        if (!pending) throw new ConflictError('no MFA setup is pending: POST /api/auth/mfa/setup first');
        const code = classifySecondFactor(body.code);
        const step =
          code?.kind === 'totp' ? await totpStep(openSecret(sealingKey, pending), code.code, null) : null;
        if (step === null)
          throw new RefusedError(
            'the code does not match the pending secret: send the current 6-digit code (check the device clock)',
          );
        const { codes, hashes } = await newRecoveryCodes();
        await db.$transaction(async (tx) => {
          const on = await tx.user.updateMany({
            where: { id: user.id, mfaEnabled: false, mfaPendingSecret: pending },
            data: { mfaEnabled: true, mfaSecret: pending, mfaPendingSecret: null, mfaLastStep: step },
          });
          if (on.count === 0) throw new ConflictError('the MFA setup changed meanwhile; start it again');
          await tx.mfaRecoveryCode.deleteMany({ where: { userId: user.id } });
          await tx.mfaRecoveryCode.createMany({
            data: hashes.map((codeHash) => ({ userId: user.id, codeHash })),
          });
          await auditSelf(tx, user.id, 'user.mfa.enabled', req);
        });
        return { mfa_enabled: true, recovery_codes: codes };
      },
    )
    .post(
      '/api/auth/mfa/disable',
      {
        summary: 'Turn MFA off (CodeIn): needs a current TOTP code or an unused recovery code',
        access: 'annotator',
        body: { name: 'CodeIn', schema: CodeIn },
        statuses: {
          409: 'MFA is off',
          422: 'the code is neither a current code nor an unused recovery code, or the caller is a service account',
        },
      },
      async ({ body, principal, req }) => {
        const user = await personCheckingCode(principal);
        if (!user.mfaEnabled) throw new ConflictError('MFA is off already');
        const factor = await spendSecondFactor(db, sealingKey, user, body.code);
        if (!factor) throw new RefusedError('the code is neither a current code nor an unused recovery code');
        await db.$transaction(async (tx) => {
          await tx.user.update({
            where: { id: user.id },
            data: { mfaEnabled: false, mfaSecret: null, mfaPendingSecret: null, mfaLastStep: null },
          });
          await tx.mfaRecoveryCode.deleteMany({ where: { userId: user.id } });
          await auditSelf(tx, user.id, 'user.mfa.disabled', req, { factor });
        });
        return mfaState(user.id);
      },
    );
}
