import { createHash } from 'node:crypto';
import * as client from 'openid-client';
import { type ExternalIdentity, IdentityRefused, type OidcSettings, ProviderUnavailable } from './external-identity.js';
import { isLoopbackHost } from './identity-provider.js';

/**
 * OpenID Connect sign-in (docs/sso-oidc.md): the authorization code flow with PKCE (S256), the caller's
 * `state` (its attempt's id) and a fresh `nonce`, the ID token checked by openid-client (issuer,
 * audience, expiry, nonce, signature), the claims read from it and, for what it lacks, from userinfo.
 */

/** What the browser's attempt must keep until it returns (all strings, JSON-storable). */
export interface OidcProtocol {
  nonce: string;
  code_verifier: string;
}

/** How long a provider's discovery document is kept (docs/sso-oidc.md#what-cmi-checks). */
const DISCOVERY_TTL_MS = 5 * 60_000;
/** The longest any one request to the provider may take: a provider that hangs must not hang a sign-in. */
const TIMEOUT_SECONDS = 5;
/** The most characters of the provider's own error text repeated in a message. */
const MAX_DESCRIPTION = 200;

interface Discovered {
  config: Promise<client.Configuration>;
  expires: number;
}

/** Discovered configurations by issuer, client id and secret (hashed: the key names no secret). */
const discovered = new Map<string, Discovered>();

const cacheKey = (settings: OidcSettings): string => createHash('sha256').update(JSON.stringify([settings.issuer, settings.client_id, settings.client_secret])).digest('hex');

/** The issuer as a URL: https, or http for this machine only (as identity-provider.ts validates it). */
function issuerUrl(settings: OidcSettings): URL {
  let url: URL;
  try {
    url = new URL(settings.issuer);
  } catch {
    throw new ProviderUnavailable('The provider\'s issuer is not a URL: check its issuer setting');
  }
  if (url.protocol === 'https:' || (url.protocol === 'http:' && isLoopbackHost(url.hostname))) return url;
  throw new ProviderUnavailable('The provider\'s issuer must be an https URL (http only for this machine: localhost, 127.0.0.1, ::1)');
}

/** A short, printable excerpt of text the provider sent (its error description), or undefined. */
function printable(text: unknown): string | undefined {
  if (typeof text !== 'string') return undefined;
  const clean = text.replace(/[^\x20-\x7e]/g, ' ').trim();
  if (clean === '') return undefined;
  return clean.length > MAX_DESCRIPTION ? `${clean.slice(0, MAX_DESCRIPTION)}...` : clean;
}

/** An OAuth error code as the provider sent it, when it looks like one. */
const errorCode = (code: unknown): string => (typeof code === 'string' && /^[\x21-\x7e]{1,64}$/.test(code) ? code : 'an unnamed error');

/** What a failed connection says: refused, a name not found, a TLS certificate refused, a timeout. */
function networkReason(error: Error): string | undefined {
  const cause = (error.cause ?? {}) as { code?: unknown; message?: unknown };
  const code = typeof cause.code === 'string' ? cause.code : '';
  if (code === 'ECONNREFUSED') return 'the connection was refused';
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return 'its host name was not found';
  if (code === 'ECONNRESET' || code === 'UND_ERR_SOCKET') return 'the connection was closed';
  if (code.includes('CERT') || code.includes('TLS') || code.includes('SSL') || /certificate/i.test(String(cause.message))) {
    return `its TLS certificate was refused (${code || 'certificate error'})`;
  }
  if (error.message === 'fetch failed') return code === '' ? 'the request failed' : `the request failed (${code})`;
  return undefined;
}

/** The stage a failure happened at, which decides whether it is the provider's (unavailable) or the answer's (refused). */
type Stage = 'discovery' | 'token' | 'userinfo';

const WHAT: Record<Stage, string> = {
  discovery: 'The provider\'s discovery document could not be read',
  token: 'The provider\'s token endpoint could not be used',
  userinfo: 'The provider\'s userinfo endpoint could not be used',
};

/**
 * What openid-client's `error` means for the sign-in: ProviderUnavailable when the provider cannot be
 * spoken to (down, a timeout, TLS, an HTTP error, its client credentials refused), IdentityRefused when
 * its answer is (an error in the callback, the state, a used code, an ID token failing a check). The
 * messages name what failed, never a code, token or secret.
 */
function classified(error: unknown, stage: Stage): Error {
  if (error instanceof ProviderUnavailable || error instanceof IdentityRefused) return error;
  if (error instanceof client.AuthorizationResponseError) {
    const description = printable(error.error_description);
    return new IdentityRefused(`The provider refused the sign-in (${errorCode(error.error)}${description === undefined ? '' : `: ${description}`})`);
  }
  if (error instanceof client.ResponseBodyError) {
    const description = printable(error.error_description);
    const said = `${errorCode(error.error)}${description === undefined ? '' : `: ${description}`}`;
    if (error.error === 'invalid_client' || error.error === 'unauthorized_client') {
      return new ProviderUnavailable(`The provider refused cmi's client credentials (${said}): check the provider's client_id and client_secret`);
    }
    if (error.status >= 500) return new ProviderUnavailable(`${WHAT[stage]}: it answered HTTP ${error.status} (${said})`);
    if (stage === 'discovery') return new ProviderUnavailable(`${WHAT[stage]}: it answered ${said}`);
    if (error.error === 'invalid_grant') return new IdentityRefused(`The provider refused the sign-in's code (${said}): it is wrong, expired or already used; sign in again`);
    return new IdentityRefused(`The provider refused the sign-in (${said})`);
  }
  if (error instanceof client.WWWAuthenticateChallengeError) {
    const challenge = error.cause[0];
    const said = errorCode(challenge?.parameters.error ?? `HTTP ${error.status}`);
    if (stage === 'token' && error.status === 401) {
      return new ProviderUnavailable(`The provider refused cmi's client credentials (${said}): check the provider's client_id and client_secret`);
    }
    if (stage === 'discovery' || error.status >= 500) return new ProviderUnavailable(`${WHAT[stage]}: it answered HTTP ${error.status} (${said})`);
    if (stage === 'userinfo') return new IdentityRefused(`The provider refused the sign-in's access token at userinfo (${said}): sign in again`);
    return new IdentityRefused(`The provider refused the sign-in (${said})`);
  }
  if (!(error instanceof Error)) return new ProviderUnavailable(`${WHAT[stage]}: it failed`);
  const network = networkReason(error);
  if (network !== undefined) return new ProviderUnavailable(`${WHAT[stage]}: ${network}`);
  if (!(error instanceof client.ClientError)) return error;
  const inner = error.cause instanceof Error ? error.cause : undefined;
  if (inner !== undefined) {
    const reason = networkReason(inner);
    if (reason !== undefined) return new ProviderUnavailable(`${WHAT[stage]}: ${reason}`);
  }
  switch (error.code) {
    case 'OAUTH_TIMEOUT':
    case 'OAUTH_ABORT':
      return new ProviderUnavailable(`${WHAT[stage]}: it did not answer within ${TIMEOUT_SECONDS} seconds`);
    case 'OAUTH_RESPONSE_IS_NOT_CONFORM': {
      const status = error.cause instanceof Response ? error.cause.status : undefined;
      return new ProviderUnavailable(`${WHAT[stage]}: it answered ${status === undefined ? 'an unexpected HTTP status' : `HTTP ${status}`}`);
    }
    case 'OAUTH_RESPONSE_IS_NOT_JSON':
    case 'OAUTH_PARSE_ERROR':
      return new ProviderUnavailable(`${WHAT[stage]}: its answer is not JSON`);
    case 'OAUTH_HTTP_REQUEST_FORBIDDEN':
    case 'OAUTH_REQUEST_PROTOCOL_FORBIDDEN':
      return new ProviderUnavailable(`${WHAT[stage]}: it names an endpoint that is not https`);
  }
  const detail = printable(inner?.message ?? error.message) ?? 'it failed';
  if (stage === 'discovery' || error.code === 'OAUTH_MISSING_SERVER_METADATA' || error.code === 'OAUTH_INVALID_SERVER_METADATA') {
    return new ProviderUnavailable(`${WHAT.discovery}: ${detail}`);
  }
  if (/"state"/.test(detail)) return new IdentityRefused('The provider\'s answer is not for this sign-in (its state does not match): sign in again');
  if (/response parameter/.test(detail)) return new IdentityRefused(`The provider's answer to the sign-in was refused: ${detail}`);
  if (/"nonce"/.test(detail)) return new IdentityRefused('The provider\'s ID token is not for this sign-in (its nonce does not match): sign in again');
  if (stage === 'userinfo') return new IdentityRefused(`The provider's userinfo answer was refused: ${detail}`);
  return new IdentityRefused(`The provider's ID token was refused: ${detail}`);
}

/**
 * `error` with each of `secrets` (the callback's code, the client secret) cut out of its message, should
 * the provider's own error text have repeated one.
 */
function withoutSecrets(error: Error, secrets: readonly string[]): Error {
  if (!(error instanceof IdentityRefused || error instanceof ProviderUnavailable)) return error;
  const message = secrets.filter((secret) => secret.length >= 4).reduce((text, secret) => text.split(secret).join('[hidden]'), error.message);
  return message === error.message ? error : new (error instanceof IdentityRefused ? IdentityRefused : ProviderUnavailable)(message);
}

/** How cmi authenticates to the token endpoint: client_secret_basic, or _post when the provider offers only that. */
function clientAuthentication(metadata: client.ServerMetadata, secret: string): client.ClientAuth {
  const offered = metadata.token_endpoint_auth_methods_supported;
  const postOnly = Array.isArray(offered) && !offered.includes('client_secret_basic') && offered.includes('client_secret_post');
  return postOnly ? client.ClientSecretPost(secret) : client.ClientSecretBasic(secret);
}

/** Reads the provider's discovery document and makes the client's configuration from it. */
async function discover(settings: OidcSettings): Promise<client.Configuration> {
  const issuer = issuerUrl(settings);
  const insecure = issuer.protocol === 'http:';
  let config: client.Configuration;
  try {
    const found = await client.discovery(issuer, settings.client_id, undefined, undefined, {
      timeout: TIMEOUT_SECONDS,
      execute: insecure ? [client.allowInsecureRequests] : [],
    });
    const metadata = found.serverMetadata();
    config = new client.Configuration(metadata, settings.client_id, settings.client_secret, clientAuthentication(metadata, settings.client_secret));
  } catch (error) {
    throw classified(error, 'discovery');
  }
  config.timeout = TIMEOUT_SECONDS;
  if (insecure) client.allowInsecureRequests(config);
  // openid-client trusts an ID token from the token endpoint on TLS alone unless told: its signature is checked too.
  client.enableNonRepudiationChecks(config);
  return config;
}

/** The provider's configuration, discovered at most every 5 minutes; a failed discovery is not kept. */
function configurationOf(settings: OidcSettings): Promise<client.Configuration> {
  const key = cacheKey(settings);
  const now = Date.now();
  const kept = discovered.get(key);
  if (kept !== undefined && kept.expires > now) return kept.config;
  for (const [other, entry] of discovered) if (entry.expires <= now) discovered.delete(other);
  const config = discover(settings);
  const entry: Discovered = { config, expires: now + DISCOVERY_TTL_MS };
  discovered.set(key, entry);
  config.catch(() => {
    if (discovered.get(key) === entry) discovered.delete(key);
  });
  return config;
}

/** The scopes asked: `openid` first, then the provider's own, each once. */
const scopeOf = (settings: OidcSettings): string => [...new Set(['openid', ...settings.scopes])].join(' ');

/**
 * Begins a sign-in at the provider (docs/sso-oidc.md): the URL the browser is sent to, and what the
 * attempt must keep for `oidcFinish` (the PKCE verifier and the nonce). `state` is the attempt's id.
 * ProviderUnavailable when the provider's discovery fails.
 */
export async function oidcStart(settings: OidcSettings, redirectUri: string, state: string): Promise<{ url: string; protocol: OidcProtocol }> {
  const config = await configurationOf(settings);
  const protocol: OidcProtocol = { nonce: client.randomNonce(), code_verifier: client.randomPKCECodeVerifier() };
  try {
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: redirectUri,
      scope: scopeOf(settings),
      response_type: 'code',
      code_challenge: await client.calculatePKCECodeChallenge(protocol.code_verifier),
      code_challenge_method: 'S256',
      state,
      nonce: protocol.nonce,
    });
    return { url: url.href, protocol };
  } catch (error) {
    throw classified(error, 'discovery');
  }
}

type Claims = Record<string, unknown>;

const text = (value: unknown): string | undefined => (typeof value === 'string' && value !== '' ? value : undefined);

/** A groups claim as a list of strings: a single string is a list of one; anything else is no group. */
function groupsOf(value: unknown): string[] {
  if (typeof value === 'string') return value === '' ? [] : [value];
  if (!Array.isArray(value)) return [];
  return value.filter((item): item is string => typeof item === 'string' && item !== '');
}

/** The claim `name`: the ID token's, else userinfo's. */
const claimOf = (name: string, idToken: Claims, userinfo: Claims | undefined): unknown => (idToken[name] !== undefined ? idToken[name] : userinfo?.[name]);

/** The identity the provider's claims give, by the provider's settings (docs/sso-oidc.md#settings). */
function identityOf(settings: OidcSettings, idToken: Claims, userinfo: Claims | undefined): ExternalIdentity {
  const subject = text(idToken.sub);
  if (subject === undefined) throw new IdentityRefused('The provider\'s ID token names no subject (sub)');
  const identity: ExternalIdentity = {
    subject,
    login: text(claimOf(settings.login_claim, idToken, userinfo)),
    email: text(claimOf(settings.email_claim, idToken, userinfo)),
    groups: groupsOf(claimOf(settings.groups_claim, idToken, userinfo)),
  };
  const firstName = text(claimOf('given_name', idToken, userinfo));
  const lastName = text(claimOf('family_name', idToken, userinfo));
  if (firstName !== undefined) identity.firstName = firstName;
  if (lastName !== undefined) identity.lastName = lastName;
  return identity;
}

/**
 * Ends a sign-in (docs/sso-oidc.md): checks the provider's answer at `callbackUrl` (the URL the browser
 * came back to) against the attempt's `state` and `protocol`, exchanges the code at the token endpoint
 * (with the same `redirectUri` as `oidcStart`), has openid-client check the ID token, and reads the
 * identity from its claims, asking userinfo for the login, email or groups claim it lacks.
 * IdentityRefused when the answer is refused; ProviderUnavailable when the provider cannot be used.
 */
export async function oidcFinish(settings: OidcSettings, redirectUri: string, callbackUrl: URL, state: string, protocol: OidcProtocol): Promise<ExternalIdentity> {
  const config = await configurationOf(settings);
  // The code is redeemed for the redirect URI the authorization asked with, whatever host the callback reached.
  const current = new URL(redirectUri);
  current.search = callbackUrl.search;
  current.hash = '';
  let tokens: Awaited<ReturnType<typeof client.authorizationCodeGrant>>;
  try {
    tokens = await client.authorizationCodeGrant(config, current, {
      pkceCodeVerifier: protocol.code_verifier,
      expectedState: state,
      expectedNonce: protocol.nonce,
      idTokenExpected: true,
    });
  } catch (error) {
    throw withoutSecrets(classified(error, 'token'), [callbackUrl.searchParams.get('code') ?? '', settings.client_secret]);
  }
  const idToken = tokens.claims() as Claims | undefined;
  if (idToken === undefined) throw new IdentityRefused('The provider\'s token answer holds no ID token');
  let userinfo: Claims | undefined;
  const lacking = [settings.login_claim, settings.email_claim, settings.groups_claim].some((name) => idToken[name] === undefined);
  if (lacking && config.serverMetadata().userinfo_endpoint !== undefined) {
    try {
      userinfo = await client.fetchUserInfo(config, tokens.access_token, String(idToken.sub));
    } catch (error) {
      throw withoutSecrets(classified(error, 'userinfo'), [tokens.access_token, settings.client_secret]);
    }
  }
  return identityOf(settings, idToken, userinfo);
}

/**
 * Whether the provider's discovery works (for `cmi doctor`, docs/sso-oidc.md#what-cmi-checks):
 * resolves when it does, ProviderUnavailable saying what failed when not. It reads the document afresh.
 */
export async function oidcCheck(settings: OidcSettings): Promise<void> {
  discovered.delete(cacheKey(settings));
  await configurationOf(settings);
}
