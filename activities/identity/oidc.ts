import * as oidc from 'openid-client';
import type { AppConfig } from '../../core/config';
import { ConflictError, NotAuthenticatedError, RefusedError, UnavailableError } from '../../core/errors';
import { profileFromClaims, roleFromClaims } from '../../core/identity/oidc';
import { Prisma, type User } from '../../generated/prisma/client';
import { recordAudit } from '../audit';
import type { Db } from '../db';

/**
 * OIDC sign-in with the authorization-code flow, PKCE (S256), state and nonce (docs/oidc.md). The
 * protocol — discovery, the token request, ID token signature and claim checks, userinfo — is
 * openid-client's; this file keeps the in-flight state in `oidc_states`, where every API process
 * sees it, and turns a verified identity into a local account.
 */

/** `config.oidc` once every required setting is there. */
export type OidcSettings = AppConfig['oidc'] & {
  issuer: string;
  clientId: string;
  clientSecret: string;
  redirectUri: string;
};

/** A provider-verified identity: the issuer and subject that key the account link, and every claim. */
export interface OidcIdentity {
  issuer: string;
  subject: string;
  claims: Record<string, unknown>;
}

export interface OidcClient {
  /** Records a new sign-in's state and gives the provider's authorization URL to send the browser to. */
  begin(returnTo: string | null): Promise<{ state: string; authorizationUrl: URL }>;
  /**
   * Finishes the sign-in the callback's query belongs to: claims its state (once, before it
   * expires), redeems the code with the PKCE verifier, checks the ID token (signature, issuer,
   * audience, expiry, nonce) and reads userinfo.
   */
  finish(callbackQuery: URLSearchParams): Promise<OidcIdentity & { returnTo: string | null }>;
}

/** Consumed and expired states are kept this long after expiry, so a replay is refused by name. */
const KEEP_SPENT_MS = 24 * 3_600_000;

export function createOidcClient(db: Db, settings: OidcSettings): OidcClient {
  const issuer = new URL(settings.issuer);
  let discovered: Promise<oidc.Configuration> | null = null;
  // Discovered once per process; a failed discovery is forgotten so the next sign-in tries again.
  const configuration = () =>
    (discovered ??= oidc
      .discovery(issuer, settings.clientId, undefined, oidc.ClientSecretBasic(settings.clientSecret), {
        // The config allows http only for a provider on a loopback address.
        execute: issuer.protocol === 'http:' ? [oidc.allowInsecureRequests] : [],
      })
      .catch((err: unknown) => {
        discovered = null;
        throw providerFailure(err, 'discovery');
      }));

  return {
    async begin(returnTo) {
      const config = await configuration();
      const state = oidc.randomState();
      const nonce = oidc.randomNonce();
      const codeVerifier = oidc.randomPKCECodeVerifier();
      const now = Date.now();
      await db.oidcState.deleteMany({ where: { expiresAt: { lt: new Date(now - KEEP_SPENT_MS) } } });
      await db.oidcState.create({
        data: {
          state,
          nonce,
          codeVerifier,
          returnTo,
          expiresAt: new Date(now + settings.stateTtlSeconds * 1000),
        },
      });
      const authorizationUrl = oidc.buildAuthorizationUrl(config, {
        redirect_uri: settings.redirectUri,
        scope: settings.scopes,
        state,
        nonce,
        code_challenge: await oidc.calculatePKCECodeChallenge(codeVerifier),
        code_challenge_method: 'S256',
      });
      return { state, authorizationUrl };
    },

    async finish(callbackQuery) {
      const config = await configuration();
      const flight = await claimState(db, callbackQuery.get('state') ?? '');
      // The URL the provider sent the browser to, built on the registered redirect URI rather than
      // on the request's Host header, which the client chooses.
      const currentUrl = new URL(settings.redirectUri);
      currentUrl.search = callbackQuery.toString();
      try {
        const tokens = await oidc.authorizationCodeGrant(config, currentUrl, {
          pkceCodeVerifier: flight.codeVerifier,
          expectedState: flight.state,
          expectedNonce: flight.nonce,
        });
        const idToken = tokens.claims()!;
        const userinfo = config.serverMetadata().userinfo_endpoint
          ? await oidc.fetchUserInfo(config, tokens.access_token, idToken.sub)
          : {};
        return {
          issuer: idToken.iss,
          subject: idToken.sub,
          // The ID token's claims are signed, so they win over userinfo where both say something.
          claims: { ...userinfo, ...idToken },
          returnTo: flight.returnTo,
        };
      } catch (err) {
        throw providerFailure(err, 'sign-in');
      }
    },
  };
}

/** Marks a sign-in's state used, once, in every API process at once; refuses it by name otherwise. */
async function claimState(db: Db, state: string) {
  const flight = state ? await db.oidcState.findUnique({ where: { state } }) : null;
  if (!flight)
    throw new NotAuthenticatedError(
      'unknown OIDC state: this callback belongs to no sign-in started here; start again',
    );
  const claimed = await db.oidcState.updateMany({
    where: { state, consumedAt: null },
    data: { consumedAt: new Date() },
  });
  if (claimed.count !== 1)
    throw new NotAuthenticatedError('this OIDC sign-in was already completed or refused; start again');
  if (flight.expiresAt <= new Date())
    throw new NotAuthenticatedError(
      'this OIDC sign-in took too long at the provider and expired; start again',
    );
  return flight;
}

/**
 * A failure of the provider's side as the API answers it: the provider not answering is 503; a
 * refusal (an error in the callback, a code it will not redeem) or an answer that fails a check
 * (signature, nonce, issuer, audience, expiry) refuses the sign-in. Never the code or a token.
 */
function providerFailure(err: unknown, step: 'discovery' | 'sign-in'): Error {
  const unreachable =
    err instanceof TypeError ||
    (err instanceof oidc.ClientError && (err.code === 'OAUTH_TIMEOUT' || err.code === 'OAUTH_ABORT'));
  if (step === 'discovery' || unreachable) {
    const why = err instanceof Error ? err.message : String(err);
    return new UnavailableError(`the OIDC provider did not answer the ${step} properly: ${why}`);
  }
  if (err instanceof oidc.AuthorizationResponseError || err instanceof oidc.ResponseBodyError)
    return new NotAuthenticatedError(
      `the OIDC provider refused the sign-in: ${err.error}${err.error_description ? ` (${err.error_description})` : ''}`,
    );
  if (err instanceof oidc.ClientError) {
    const cause =
      err.cause instanceof Error && err.cause.message !== err.message ? `: ${err.cause.message}` : '';
    return new NotAuthenticatedError(`the OIDC provider's answer failed a check: ${err.message}${cause}`);
  }
  return err instanceof Error ? err : new Error(String(err));
}

/** The account an identity signs in to, and what signing in did to it. */
export interface OidcAccount {
  user: User;
  created: boolean;
  linked: boolean;
}

/**
 * The account linked to the identity's issuer and subject; on a first sign-in, a new account
 * (the lowest role unless the role claim maps it), or — only when `linkByEmail` is on — the local
 * account whose e-mail the provider has verified. Audited with the request id.
 */
export async function accountForIdentity(
  db: Db,
  settings: OidcSettings,
  identity: OidcIdentity,
  requestId: string,
): Promise<OidcAccount> {
  const key = { issuer: identity.issuer, subject: identity.subject };
  const known = await linkedAccount(db, key);
  if (known) return known;

  const profile = profileFromClaims(identity.claims);
  if (!profile.email)
    throw new RefusedError(
      'the OIDC provider gave no e-mail address for this identity, and a new account needs one: ask for the `email` scope (APP_OIDC__SCOPES) or have the provider release it',
    );
  const email = profile.email;
  try {
    return await db.$transaction(async (tx) => {
      const existing = await tx.user.findUnique({ where: { email } });
      if (existing && !settings.linkByEmail)
        throw new ConflictError(
          `an account with the e-mail ${email} already exists and is not linked to this OIDC identity; linking by e-mail is off (APP_OIDC__LINK_BY_EMAIL)`,
        );
      if (existing && !profile.emailVerified)
        throw new ConflictError(
          `an account with the e-mail ${email} already exists, and the OIDC provider does not say it verified that address (email_verified), so it is not linked`,
        );
      const { role, matched } = roleFromClaims(identity.claims, settings);
      const user = existing
        ? usable(existing)
        : await tx.user.create({ data: { email, name: profile.name ?? email, role } });
      await tx.userIdentity.create({ data: { ...key, userId: user.id, email } });
      await recordAudit(tx, {
        actorId: user.id,
        action: existing ? 'user.identity.linked' : 'user.created',
        subjectType: 'user',
        subjectId: user.id,
        detail: existing
          ? { ...key, by: 'verified e-mail' }
          : { via: 'oidc', ...key, role, role_claim_values: matched },
        requestId,
      });
      return { user, created: !existing, linked: true };
    });
  } catch (err) {
    // A concurrent first sign-in of the same identity made the account first: use it.
    const raced =
      err instanceof Prisma.PrismaClientKnownRequestError && err.code === 'P2002'
        ? await linkedAccount(db, key)
        : null;
    if (raced) return raced;
    throw err;
  }
}

/** The account already linked to an issuer and subject, when there is one. */
async function linkedAccount(db: Db, key: { issuer: string; subject: string }): Promise<OidcAccount | null> {
  const link = await db.userIdentity.findUnique({ where: { issuer_subject: key }, include: { user: true } });
  return link && { user: usable(link.user), created: false, linked: false };
}

/** A person's account that may sign in. */
function usable(user: User): User {
  if (user.disabledAt) throw new NotAuthenticatedError('this account is disabled');
  if (user.kind !== 'person') throw new RefusedError('a service account does not sign in with OIDC');
  return user;
}
