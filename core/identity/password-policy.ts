/**
 * The password policy (docs/identity.md), after NIST SP 800-63B: length rather than composition
 * rules, and refusing what an attacker would try first. Pure: the caller hashes and stores, and
 * compares with the current password's hash (a change must change it).
 */

/** Long enough for any passphrase; longer inputs only make hashing a denial of service. */
export const PASSWORD_MAX_LENGTH = 1024;

/** Fewer distinct characters than this is a repetition ("aaaaaaaaaaaa", "abababababab"), not a secret. */
export const PASSWORD_MIN_DISTINCT = 5;

/** A local part this short ("al") appears inside ordinary words, so only longer ones are refused. */
const MIN_LOCAL_PART_CHECKED = 3;

export interface PasswordContext {
  /** The account's e-mail address: a password containing its local part is the first guess. */
  email: string;
}

/** Every rule the password breaks, as sentences for the caller; empty when it passes. */
export function passwordProblems(password: string, minLength: number, context: PasswordContext): string[] {
  const problems: string[] = [];
  const length = [...password].length;
  if (length < minLength) problems.push(`must be at least ${minLength} characters long (it has ${length})`);
  if (length > PASSWORD_MAX_LENGTH) problems.push(`must be at most ${PASSWORD_MAX_LENGTH} characters long`);
  if (new Set(password).size < PASSWORD_MIN_DISTINCT)
    problems.push(`must use at least ${PASSWORD_MIN_DISTINCT} different characters`);
  const lower = password.toLowerCase();
  const localPart = context.email.slice(0, context.email.lastIndexOf('@')).toLowerCase();
  if (localPart.length >= MIN_LOCAL_PART_CHECKED && lower.includes(localPart))
    problems.push('must not contain the e-mail address or its name part');
  return problems;
}
