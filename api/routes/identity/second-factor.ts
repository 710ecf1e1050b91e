import { randomBytes } from 'node:crypto';
import { generateSecret, generateURI, verify } from 'otplib';
import type { Db } from '../../../activities/db';
import {
  classifySecondFactor,
  formatRecoveryCode,
  RECOVERY_CODE_COUNT,
  RECOVERY_CODE_LENGTH,
} from '../../../core/identity/recovery-codes';
import { openSecret } from '../../../core/sealed';
import type { User } from '../../../generated/prisma/client';
import { hashPassword, passwordMatches } from '../../auth/passwords';

/** RFC 6238 as authenticator apps expect it: SHA-1, 6 digits, 30-second steps. */
export const TOTP_PERIOD_SECONDS = 30;
export const TOTP_DIGITS = 6;

/** A new TOTP secret (160 random bits, base32) and the otpauth URI an authenticator app scans. */
export function newTotpSecret(issuer: string, account: string): { secret: string; uri: string } {
  const secret = generateSecret();
  return { secret, uri: generateURI({ issuer, label: account, secret }) };
}

/**
 * The time step `code` belongs to, within one step either side of now (clock drift), newer than
 * `after` (the last step accepted: a code is good once); null when it is none of them.
 */
export async function totpStep(secret: string, code: string, after: bigint | null): Promise<bigint | null> {
  const epoch = Math.floor(Date.now() / 1000);
  const newest = Math.floor(epoch / TOTP_PERIOD_SECONDS) + 1;
  if (after !== null && after >= BigInt(newest)) return null;
  const result = await verify({
    secret,
    token: code,
    epoch,
    period: TOTP_PERIOD_SECONDS,
    digits: TOTP_DIGITS,
    epochTolerance: TOTP_PERIOD_SECONDS,
    afterTimeStep: after === null ? undefined : Number(after),
  });
  return result.valid && 'timeStep' in result ? BigInt(result.timeStep) : null;
}

/**
 * Spends a second-factor code of a user with MFA on: a TOTP code of a step newer than the last
 * one accepted, or an unused recovery code. Each is taken by a conditional update, so two API
 * processes given the same code accept it once. What was spent, or null.
 */
export async function spendSecondFactor(
  db: Db,
  sealingKey: string,
  user: Pick<User, 'id' | 'mfaSecret' | 'mfaLastStep'>,
  input: string,
): Promise<'totp' | 'recovery' | null> {
  const code = classifySecondFactor(input);
  if (!code || !user.mfaSecret) return null;
  if (code.kind === 'totp') {
    const step = await totpStep(openSecret(sealingKey, user.mfaSecret), code.code, user.mfaLastStep);
    if (step === null) return null;
    const taken = await db.user.updateMany({
      where: { id: user.id, OR: [{ mfaLastStep: null }, { mfaLastStep: { lt: step } }] },
      data: { mfaLastStep: step },
    });
    return taken.count === 1 ? 'totp' : null;
  }
  const unused = await db.mfaRecoveryCode.findMany({ where: { userId: user.id, usedAt: null } });
  const matches = await Promise.all(unused.map((r) => passwordMatches(r.codeHash, code.code)));
  const hit = unused.find((_, i) => matches[i]);
  if (!hit) return null;
  const spent = await db.mfaRecoveryCode.updateMany({
    where: { id: hit.id, usedAt: null },
    data: { usedAt: new Date() },
  });
  return spent.count === 1 ? 'recovery' : null;
}

/**
 * A fresh set of recovery codes: the codes to show once, and their Argon2id hashes to store (they
 * carry 60 bits, so a slow hash is what keeps a stolen table from giving them up).
 */
export async function newRecoveryCodes(): Promise<{ codes: string[]; hashes: string[] }> {
  const codes = Array.from({ length: RECOVERY_CODE_COUNT }, () =>
    formatRecoveryCode(randomBytes(RECOVERY_CODE_LENGTH)),
  );
  const hashes = await Promise.all(codes.map((c) => hashPassword(classifySecondFactor(c)!.code)));
  return { codes, hashes };
}
