import { z } from 'zod';
import type { AppConfig } from '../config';

/**
 * The pure parts of OIDC sign-in (docs/oidc.md): whether it is configured, where a finished
 * sign-in may send the browser, which role a provider's claims give a new account, and how the
 * answer travels in the URL fragment.
 */

type OidcConfig = AppConfig['oidc'];

/** The settings without which there is no OIDC sign-in, by the variable that sets each. */
const REQUIRED_SETTINGS = {
  issuer: 'APP_OIDC__ISSUER',
  clientId: 'APP_OIDC__CLIENT_ID',
  clientSecret: 'APP_OIDC__CLIENT_SECRET',
  redirectUri: 'APP_OIDC__REDIRECT_URI',
} as const satisfies Partial<Record<keyof OidcConfig, string>>;

/** The variables still to set before OIDC sign-in works; none when it is configured. */
export const oidcMissing = (oidc: OidcConfig): string[] =>
  (Object.keys(REQUIRED_SETTINGS) as Array<keyof typeof REQUIRED_SETTINGS>)
    .filter((key) => !oidc[key])
    .map((key) => REQUIRED_SETTINGS[key]);

/** Whether this deployment offers OIDC sign-in (GET /api/auth/methods lists it then). */
export const oidcConfigured = (config: Pick<AppConfig, 'oidc'>): boolean =>
  oidcMissing(config.oidc).length === 0;

/**
 * A path on this origin to come back to: it starts with one `/` and has no backslash (browsers
 * read `//host` and `/\host` as another origin), no fragment (the answer goes there), no spaces or
 * control characters.
 */
export const RETURN_TO_PATTERN = /^\/(?![/\\])[^\\#\s\p{Cc}]*$/u;
export const RETURN_TO_MAX = 2048;

const ROLE_ORDER = ['annotator', 'reviewer', 'admin'] as const;
export type OidcRole = (typeof ROLE_ORDER)[number];

/** The value at a dotted path of the claims (`realm_access.roles`), or undefined. */
function claimAt(claims: Record<string, unknown>, path: string): unknown {
  let node: unknown = claims;
  for (const key of path.split('.')) {
    if (typeof node !== 'object' || node === null || Array.isArray(node)) return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  return node;
}

/**
 * The role of an account the provider creates: the highest role `roleMap` gives any value of the
 * role claim (a string or an array of strings), else the lowest role. `matched` names the values
 * that mapped, for the audit log.
 */
export function roleFromClaims(
  claims: Record<string, unknown>,
  oidc: Pick<OidcConfig, 'roleClaim' | 'roleMap'>,
): { role: OidcRole; matched: string[] } {
  if (!oidc.roleClaim) return { role: 'annotator', matched: [] };
  const value = claimAt(claims, oidc.roleClaim);
  const values = (Array.isArray(value) ? value : [value]).filter((v): v is string => typeof v === 'string');
  const matched = values.filter((v) => Object.hasOwn(oidc.roleMap, v));
  const rank = Math.max(0, ...matched.map((v) => ROLE_ORDER.indexOf(oidc.roleMap[v]!)));
  return { role: ROLE_ORDER[rank]!, matched };
}

const ProfileClaims = z.object({
  email: z.email().max(254).optional().catch(undefined),
  email_verified: z.boolean().optional().catch(undefined),
  name: z.string().trim().min(1).max(200).optional().catch(undefined),
  preferred_username: z.string().trim().min(1).max(200).optional().catch(undefined),
});

/**
 * What an account is made or matched from: the e-mail in lower case (as sign-in compares it),
 * whether the provider says it verified it, and a display name (the e-mail when the provider
 * gives none). A malformed claim counts as absent.
 */
export function profileFromClaims(claims: Record<string, unknown>): {
  email: string | null;
  emailVerified: boolean;
  name: string | null;
} {
  const p = ProfileClaims.parse(claims);
  const email = p.email?.toLowerCase() ?? null;
  return { email, emailVerified: p.email_verified === true, name: p.name ?? p.preferred_username ?? email };
}

/**
 * The Location of the callback's redirect: the return path with the sign-in's answer (a token, or
 * an MFA handle) in the fragment, which browsers never send to a server nor put in a Referer.
 */
export function returnLocation(returnTo: string, answer: Record<string, unknown>): string {
  const fragment = new URLSearchParams();
  for (const [key, value] of Object.entries(answer))
    if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean')
      fragment.set(key, String(value));
  return `${returnTo}#${fragment.toString()}`;
}
