import { createSign, generateKeyPairSync, type KeyObject } from 'node:crypto';
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
  /**
   * A man in the middle of the token endpoint, for the ID token's checks: each next token answer's
   * `id_token` is replaced by what `alter` makes of it (`sign` signs claims with the provider's own key,
   * so only what the test changes differs). Undefined: answers go as the provider gave them.
   */
  alterIdToken(alter: IdTokenAlteration | undefined): void;
  close(): Promise<void>;
}

export type IdTokenAlteration = (idToken: string, sign: (claims: Record<string, unknown>) => string) => string;

/** The claims of a JWT (not checked: the test reads what the provider signed). */
export const claimsOfJwt = (jwt: string): Record<string, unknown> => JSON.parse(Buffer.from(jwt.split('.')[1] ?? '', 'base64url').toString('utf8')) as Record<string, unknown>;

const KEY_ID = 'cmi-test-key';

/** `claims` as an RS256 JWT signed with `key`, as the provider signs its ID tokens. */
function signedJwt(key: KeyObject, claims: Record<string, unknown>): string {
  const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const input = `${part({ alg: 'RS256', typ: 'JWT', kid: KEY_ID })}.${part(claims)}`;
  return `${input}.${createSign('RSA-SHA256').update(input).sign(key).toString('base64url')}`;
}

/** Has `res` send the token answer with its `id_token` altered (the provider writes its JSON body with one `end`). */
function alterTokenAnswer(res: http.ServerResponse, alter: IdTokenAlteration, sign: (claims: Record<string, unknown>) => string): void {
  const end = res.end.bind(res) as (chunk?: unknown) => http.ServerResponse;
  res.end = ((chunk?: unknown) => {
    const body = JSON.parse(String(chunk)) as Record<string, unknown>;
    if (typeof body.id_token !== 'string') return end(chunk);
    const altered = JSON.stringify({ ...body, id_token: alter(body.id_token, sign) });
    res.setHeader('content-length', Buffer.byteLength(altered));
    return end(altered);
  }) as typeof res.end;
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
function configuration(options: OidcProviderOptions, privateKey: KeyObject): Configuration {
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
    jwks: { keys: [{ ...privateKey.export({ format: 'jwk' }), kid: KEY_ID, use: 'sig', alg: 'RS256' }] },
    ttl: { AccessToken: 600, AuthorizationCode: 60, IdToken: 600, Interaction: 600, Session: 600, Grant: 600 },
    features: { devInteractions: { enabled: true } },
    renderError,
  };
}

/** Makes the provider without the notices it prints at its start about its development-only parts. */
function quietProvider(Provider: ProviderClass, issuer: string, options: OidcProviderOptions, privateKey: KeyObject): Provider {
  const { warn, info } = console;
  const unlessProvider = (print: (...args: unknown[]) => void) => (...args: unknown[]) => {
    if (!String(args[0]).includes('oidc-provider ')) print(...args);
  };
  console.warn = unlessProvider(warn);
  console.info = unlessProvider(info);
  try {
    return new Provider(issuer, configuration(options, privateKey));
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
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const provider = quietProvider(Provider, issuer, options, privateKey);
  const callback = provider.callback();
  const sign = (claims: Record<string, unknown>) => signedJwt(privateKey, claims);
  let alteration: IdTokenAlteration | undefined;
  server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
    const request = `${req.method} ${(req.url ?? '').split('?')[0]}`;
    requests.push(request);
    if (request === 'POST /token' && alteration !== undefined) alterTokenAnswer(res, alteration, sign);
    void callback(req, res);
  });
  let open = true;
  return {
    issuer,
    requests,
    alterIdToken(alter) {
      alteration = alter;
    },
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
 * provider (the provider redirected it to the callback). A browser already signed in at the provider
 * whose grant was revoked (a replayed code revokes it) sees the consent page only: it is passed too.
 */
export async function signInAtOidcProvider(page: Page, login: string): Promise<void> {
  const provider = new URL(page.url()).origin;
  const left = (url: URL) => url.origin !== provider;
  const loginForm = page.locator('input[name="prompt"][value="login"]');
  const consentForm = page.locator('input[name="prompt"][value="consent"]');
  await loginForm.or(consentForm).waitFor({ state: 'attached' });
  if ((await loginForm.count()) > 0) {
    await page.locator('input[name="login"]').fill(login);
    await page.locator('input[name="password"]').fill('any password');
    await page.locator('button[type="submit"]').click();
    // Consent is asked once per grant: a second sign-in in the same browser may go straight back.
    await Promise.race([page.waitForURL(left, { waitUntil: 'commit' }).catch(() => undefined), consentForm.waitFor({ state: 'attached' }).catch(() => undefined)]);
    if (left(new URL(page.url()))) return;
  }
  await page.locator('button[type="submit"]').click();
  await page.waitForURL(left, { waitUntil: 'commit' });
}
