import { generateKeyPairSync } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Page } from 'playwright-core';

/**
 * The little of oidc-provider's API used here: the package ships no types, so it is imported by a name
 * TypeScript does not resolve, and typed by these.
 */
interface ProviderContext {
  type: string;
  body: unknown;
}
type Configuration = Record<string, unknown>;
interface Provider {
  callback(): (req: http.IncomingMessage, res: http.ServerResponse) => unknown;
}
type ProviderClass = new (issuer: string, configuration: Configuration) => Provider;
const PROVIDER_PACKAGE: string = 'oidc-provider';

/** A person the provider knows, by the login typed on its login page (any password is taken). */
export interface OidcAccount {
  sub: string;
  email?: string;
  preferred_username?: string;
  given_name?: string;
  family_name?: string;
  /** A list, or anything else a provider might send (a single string...), served as it is. */
  groups?: unknown;
}

/** A client (relying party) registered at the provider. */
export interface OidcClient {
  client_id: string;
  client_secret: string;
  redirect_uris: string[];
  /** Default `client_secret_basic`. */
  token_endpoint_auth_method?: 'client_secret_basic' | 'client_secret_post';
}

export interface OidcProviderOptions {
  clients: OidcClient[];
  accounts: Record<string, OidcAccount>;
  /**
   * Whether the ID token carries the scopes' claims itself. Default false: as the specification has it
   * for the code flow, the ID token holds `sub` and the rest is served by userinfo.
   */
  claimsInIdToken?: boolean;
}

export interface RunningOidcProvider {
  /** `http://localhost:<port>`: another site than cmi's 127.0.0.1 in the tests. */
  issuer: string;
  /** Each request's method and path (no query), in order: what a test asks of the provider. */
  requests: string[];
  close(): Promise<void>;
}

/** The claims each scope gives (the provider's `claims` setting). */
const CLAIMS = {
  openid: ['sub'],
  email: ['email', 'email_verified'],
  profile: ['preferred_username', 'given_name', 'family_name'],
  groups: ['groups'],
};

/** Fixed cookie keys: the provider's cookies are signed, as a real one's are. */
const COOKIE_KEYS = ['cmi-test-oidc-provider-cookie-key-1', 'cmi-test-oidc-provider-cookie-key-2'];

/** The account `login` names, with the claims the test gave it. */
function findAccount(accounts: Record<string, OidcAccount>) {
  return (_ctx: ProviderContext, login: string) => {
    const account = accounts[login];
    if (account === undefined) return undefined;
    return {
      accountId: login,
      claims: () => ({ ...account, email_verified: account.email === undefined ? undefined : true }),
    };
  };
}

/** An error page with the error's code only (the default one warns on every use). */
function renderError(ctx: ProviderContext, out: Record<string, unknown>): void {
  ctx.type = 'html';
  ctx.body = `<!DOCTYPE html><title>Error</title><h1>Error</h1><p id="error">${String(out.error).replace(/[^\w.-]/g, '')}</p>`;
}

/** The provider's configuration: PKCE required, its dev login and consent pages, fixed keys, short lifetimes. */
function configuration(options: OidcProviderOptions): Configuration {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return {
    clients: options.clients.map((client) => ({
      client_id: client.client_id,
      client_secret: client.client_secret,
      redirect_uris: client.redirect_uris,
      grant_types: ['authorization_code'],
      response_types: ['code'],
      token_endpoint_auth_method: client.token_endpoint_auth_method ?? 'client_secret_basic',
    })),
    pkce: { required: () => true, methods: ['S256'] },
    findAccount: findAccount(options.accounts),
    claims: CLAIMS,
    scopes: Object.keys(CLAIMS),
    conformIdTokenClaims: options.claimsInIdToken !== true,
    cookies: { keys: COOKIE_KEYS },
    jwks: { keys: [{ ...privateKey.export({ format: 'jwk' }), kid: 'cmi-test-key', use: 'sig', alg: 'RS256' }] },
    ttl: { AccessToken: 600, AuthorizationCode: 60, IdToken: 600, Interaction: 600, Session: 600, Grant: 600 },
    features: { devInteractions: { enabled: true } },
    renderError,
  };
}

/** Makes the provider without the notices it prints at its start about its development-only parts. */
function quietProvider(Provider: ProviderClass, issuer: string, options: OidcProviderOptions): Provider {
  const { warn, info } = console;
  const unlessProvider = (print: (...args: unknown[]) => void) => (...args: unknown[]) => {
    if (!String(args[0]).includes('oidc-provider ')) print(...args);
  };
  console.warn = unlessProvider(warn);
  console.info = unlessProvider(info);
  try {
    return new Provider(issuer, configuration(options));
  } finally {
    console.warn = warn;
    console.info = info;
  }
}

/**
 * A real OpenID Connect provider (oidc-provider) on a free port of `localhost`, serving the clients and
 * accounts given, with its development login and consent pages (see `signInAtOidcProvider`).
 */
export async function startOidcProvider(options: OidcProviderOptions): Promise<RunningOidcProvider> {
  const requests: string[] = [];
  const server = http.createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, 'localhost', () => resolve());
  });
  const issuer = `http://localhost:${(server.address() as AddressInfo).port}`;
  const { default: Provider } = (await import(PROVIDER_PACKAGE)) as { default: ProviderClass };
  const provider = quietProvider(Provider, issuer, options);
  const callback = provider.callback();
  server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
    requests.push(`${req.method} ${(req.url ?? '').split('?')[0]}`);
    void callback(req, res);
  });
  let open = true;
  return {
    issuer,
    requests,
    async close() {
      if (!open) return;
      open = false;
      const closed = new Promise((resolve) => server.close(resolve));
      server.closeAllConnections();
      await closed;
    },
  };
}

/**
 * On the provider's login page (where the browser was sent by the sign-in's URL), types `login` and a
 * password, submits, and passes the consent page when it comes; returns once the browser has left the
 * provider (the provider redirected it to the callback).
 */
export async function signInAtOidcProvider(page: Page, login: string): Promise<void> {
  const provider = new URL(page.url()).origin;
  const left = (url: URL) => url.origin !== provider;
  await page.locator('input[name="login"]').fill(login);
  await page.locator('input[name="password"]').fill('any password');
  await page.locator('button[type="submit"]').click();
  const consent = page.locator('input[name="prompt"][value="consent"]');
  // Consent is asked once per grant: a second sign-in in the same browser may go straight back.
  await Promise.race([page.waitForURL(left, { waitUntil: 'commit' }).catch(() => undefined), consent.waitFor({ state: 'attached' }).catch(() => undefined)]);
  if (!left(new URL(page.url()))) {
    await page.locator('button[type="submit"]').click();
    await page.waitForURL(left, { waitUntil: 'commit' });
  }
}
