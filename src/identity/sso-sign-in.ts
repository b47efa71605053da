import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Clock } from '../shared/clock.js';
import { NotFound, TooManyRequests } from '../shared/problems.js';
import type { RevokedSessionsRepository } from '../users/revoked-sessions.store.js';
import { IdentityRefused, type OidcSettings, type SamlSettings } from './external-identity.js';
import type { IdentityProvider } from './identity-provider.js';
import type { IdentityProvidersRepository, SsoAttempt } from './identity-providers.store.js';
import type { IdentitySignIn } from './identity-sign-in.js';
import { oidcFinish, type OidcProtocol, oidcStart } from './oidc.js';
import { type BrowserStart, samlFinish, samlMetadata, type SamlProtocol, samlStart, type ServiceProvider } from './saml.js';

/** How long a browser may stay at its provider before its sign-in must begin again (docs/security.md#identity-providers). */
export const ATTEMPT_SECONDS = 600;
/**
 * Sign-ins under way at once, at most: from one address (a stranger starting sign-ins in a loop is
 * refused), and in all (past it, the one begun longest ago goes, so nobody can keep others from starting).
 */
export const MAX_ATTEMPTS_AN_ADDRESS = 20;
export const MAX_ATTEMPTS = 10_000;
/**
 * The browser's key of its sign-in under way: set when it leaves for the provider (`SameSite=Lax`,
 * sent on the provider's top-level return, only to the SSO routes), asked back when it returns. A
 * provider's answer carried to another browser (a login CSRF) finds no key there.
 */
export const SSO_COOKIE = '_cmi_sso';
export const SSO_PATH = '/console/sso/';
const BROWSER_KEY = /^[A-Za-z0-9_-]{43}$/;
const ATTEMPT_ID = /^[A-Za-z0-9_-]{43}$/;

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** The provider's paths at cmi, from the address cmi is reached at (CMI_PUBLIC_URL, or the request's). */
export const ssoPaths = (base: string, providerId: number) => {
  const root = `${base}${SSO_PATH}${providerId}`;
  return { start: `${root}/start`, callback: `${root}/callback`, acs: `${root}/acs`, metadata: `${root}/metadata`, complete: `${root}/complete` };
};

const serviceProvider = (base: string, providerId: number): ServiceProvider => {
  const paths = ssoPaths(base, providerId);
  return { entityId: paths.metadata, acsUrl: paths.acs };
};

/** Who signed in, for the console to give a session: the account, and the console page asked for. */
export interface SsoSignedIn {
  userId: number;
  next: string;
}

/**
 * The browser sign-ins through OpenID Connect and SAML (docs/security.md#identity-providers): `start`
 * keeps an attempt (what the protocol must find again, the hash of the browser's key, where to go
 * next) and sends the browser to its provider; its return is checked by the protocol's module against
 * that attempt, the attempt used once, in the browser that began it, and the person's account found,
 * made or re-mapped by the identity sign-in. The console gives the session (users/authentication.ts
 * signInVouched).
 */
export function ssoSignIn(providers: IdentityProvidersRepository, signIn: IdentitySignIn, revokedSessions: RevokedSessionsRepository, clock: Clock) {
  async function browserProvider(id: number): Promise<IdentityProvider> {
    const provider = await providers.find(id);
    if (provider === undefined || !provider.enabled || provider.kind === 'ldap') throw new NotFound();
    return provider;
  }

  /** The attempt `id` of `provider`, still current, begun in the browser whose key is `browserKey`. */
  async function attemptOf(provider: IdentityProvider, id: string | undefined, browserKey: string | undefined, { keyed = true } = {}): Promise<SsoAttempt> {
    const expired = new IdentityRefused('This sign-in took too long, or was begun in another browser: sign in again');
    if (id === undefined || !ATTEMPT_ID.test(id)) throw expired;
    const attempt = await providers.findAttempt(id);
    if (attempt === undefined || attempt.provider_id !== provider.id || attempt.expires_at.getTime() <= clock().getTime()) throw expired;
    if (keyed) {
      if (browserKey === undefined || !BROWSER_KEY.test(browserKey)) throw expired;
      if (!timingSafeEqual(Buffer.from(sha256(browserKey)), Buffer.from(attempt.browser_key_hash))) throw expired;
    }
    return attempt;
  }

  /** Takes the attempt away: a second return with it (a replay, a double click) finds none. */
  async function take(attempt: SsoAttempt): Promise<void> {
    if (!(await providers.takeAttempt(attempt.id))) throw new IdentityRefused('This sign-in was completed already: sign in again');
  }

  return {
    /** The providers a person can sign in with from the console's page (OpenID Connect and SAML, enabled), in id order. */
    async buttons(): Promise<Array<{ id: number; label: string }>> {
      return (await providers.enabled()).filter((provider) => provider.kind !== 'ldap').map(({ id, label }) => ({ id, label }));
    },

    /** Begins a sign-in at provider `id`: where to send the browser, and the key its cookie keeps (SSO_COOKIE). */
    async start(id: number, next: string, base: string, address: string): Promise<{ start: BrowserStart; browserKey: string }> {
      const provider = await browserProvider(id);
      await providers.pruneAttempts(clock());
      if ((await providers.countAttempts(address)) >= MAX_ATTEMPTS_AN_ADDRESS) throw new TooManyRequests(60, 'Too many sign-ins are under way from this address: try again in a few minutes');
      const underWay = await providers.countAttempts();
      if (underWay >= MAX_ATTEMPTS) await providers.dropOldestAttempts(underWay - MAX_ATTEMPTS + 1);
      const attemptId = randomBytes(32).toString('base64url');
      const browserKey = randomBytes(32).toString('base64url');
      const paths = ssoPaths(base, provider.id);
      const begun: { start: BrowserStart; protocol: OidcProtocol | SamlProtocol } = provider.kind === 'oidc'
        ? await oidcStart(provider.settings as OidcSettings, paths.callback, attemptId).then(({ url, protocol }) => ({ start: { redirect: url }, protocol }))
        : await samlStart(provider.settings as SamlSettings, serviceProvider(base, provider.id), attemptId);
      await providers.saveAttempt({
        id: attemptId, provider_id: provider.id, browser_key_hash: sha256(browserKey), protocol: { ...begun.protocol }, next, address: address.slice(0, 64), user_id: null,
        expires_at: new Date(clock().getTime() + ATTEMPT_SECONDS * 1000),
      });
      return { start: begun.start, browserKey };
    },

    /** An OpenID Connect provider's return (`path`: the callback's path and query, as the browser asked it): the account it vouched for. */
    async oidcReturn(id: number, base: string, path: string, browserKey: string | undefined, address: string): Promise<SsoSignedIn> {
      const provider = await browserProvider(id);
      if (provider.kind !== 'oidc') throw new NotFound();
      const callbackUrl = new URL(path, base);
      const attempt = await attemptOf(provider, callbackUrl.searchParams.get('state') ?? undefined, browserKey);
      await take(attempt);
      const identity = await oidcFinish(provider.settings as OidcSettings, ssoPaths(base, provider.id).callback, callbackUrl, attempt.id, attempt.protocol as unknown as OidcProtocol);
      const user = await signIn.accountOf(provider, identity, address);
      return { userId: user.id, next: attempt.next };
    },

    /**
     * A SAML provider's answer, posted cross-site to the assertion consumer (without the browser's Lax
     * key, which a cross-site POST does not carry): checked against its attempt (RelayState), refused
     * when its assertion was used before, and the account it names kept on the attempt, which
     * `samlComplete` then gives the browser that began it. Gives the attempt's id.
     */
    async samlAnswer(id: number, form: Record<string, string | undefined>, base: string, address: string): Promise<string> {
      const provider = await browserProvider(id);
      if (provider.kind !== 'saml') throw new NotFound();
      const attempt = await attemptOf(provider, form.RelayState, undefined, { keyed: false });
      const identity = await samlFinish(provider.settings as SamlSettings, serviceProvider(base, provider.id), form, attempt.protocol as unknown as SamlProtocol);
      // Each assertion once, in every process, until it would have expired anyway.
      const used = sha256(`saml ${provider.id} ${identity.assertionId}`).slice(0, 32);
      if (!(await revokedSessions.claim(used, identity.notOnOrAfter))) throw new IdentityRefused('This SAML assertion was used already: sign in again');
      const user = await signIn.accountOf(provider, identity, address);
      if (!(await providers.attemptAnswered(attempt.id, user.id))) throw new IdentityRefused('This sign-in was answered already: sign in again');
      return attempt.id;
    },

    /** The browser that began SAML sign-in `attemptId`, back from its assertion consumer's redirect with its key. */
    async samlComplete(id: number, attemptId: string | undefined, browserKey: string | undefined): Promise<SsoSignedIn> {
      const provider = await browserProvider(id);
      const attempt = await attemptOf(provider, attemptId, browserKey);
      if (attempt.user_id === null) throw new IdentityRefused('This sign-in has no answer from the identity provider: sign in again');
      await take(attempt);
      return { userId: attempt.user_id, next: attempt.next };
    },

    /** cmi's SAML service provider metadata for provider `id` (its entity id is this document's URL). */
    async metadata(id: number, base: string): Promise<string> {
      const provider = await providers.find(id);
      if (provider === undefined || provider.kind !== 'saml') throw new NotFound();
      return samlMetadata(serviceProvider(base, provider.id), (provider.settings as SamlSettings).name_id_format ?? 'persistent');
    },
  };
}

export type SsoSignIn = ReturnType<typeof ssoSignIn>;
