import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import net from 'node:net';
import { after, before, describe, it } from 'node:test';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Browser, type BrowserContext, chromium } from 'playwright-core';
import { type ExternalIdentity, IdentityRefused, type OidcSettings, ProviderUnavailable } from '../src/identity/external-identity.js';
import { oidcCheck, oidcFinish, type OidcProtocol, oidcStart } from '../src/identity/oidc.js';
import { eventually } from './support/eventually.js';
import { claimsOfJwt, type IdTokenAlteration, type RunningOidcProvider, signInAtOidcProvider, startOidcProvider } from './support/oidc-provider.js';

const SECRET = 'the-client-secret-of-cmi-0123456789';
const OTHER_SECRET = 'the-other-client-secret-9876543210';

const ALICE = { sub: 'alice-subject-1', email: 'alice@example.org', preferred_username: 'alice', given_name: 'Alice', family_name: 'Liddell', groups: ['ops', 'dev'] };

/** A small HTTP server standing for cmi's callback: it records each URL it is called with. */
async function callbackServer() {
  const called: URL[] = [];
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', `http://${req.headers.host}`);
    if (url.pathname !== '/console/sso/1/callback') return void res.writeHead(404).end();
    called.push(url);
    res.writeHead(200, { 'content-type': 'text/plain' }).end('back at cmi');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    called,
    redirectUri: `http://127.0.0.1:${port}/console/sso/1/callback`,
    close: () => {
      const closed = new Promise((resolve) => server.close(resolve));
      server.closeAllConnections();
      return closed;
    },
  };
}

/** Asserts `promise` rejects with an error of `type` whose message matches `message` and names none of `secrets`. */
async function rejectsWith(promise: Promise<unknown>, type: typeof IdentityRefused | typeof ProviderUnavailable, message: RegExp, secrets: string[] = []): Promise<Error> {
  const error = await promise.then(() => undefined, (caught: unknown) => caught);
  assert.ok(error instanceof type, `expected a ${type.name}, got ${String(error)}`);
  assert.match(error.message, message);
  for (const secret of [SECRET, OTHER_SECRET, ...secrets]) assert.ok(!error.message.includes(secret), `the message names a secret: ${error.message}`);
  return error;
}

describe('OpenID Connect sign-in against a real provider (oidc-provider, Chromium)', () => {
  let provider: RunningOidcProvider;
  let callback: Awaited<ReturnType<typeof callbackServer>>;
  let browser: Browser;
  let settings: OidcSettings;
  let attempts = 0;

  before(async () => {
    callback = await callbackServer();
    provider = await startOidcProvider({
      clients: [
        { client_id: 'cmi', client_secret: SECRET, redirect_uris: [callback.redirectUri] },
        { client_id: 'cmi-second', client_secret: OTHER_SECRET, redirect_uris: [callback.redirectUri] },
      ],
      accounts: {
        alice: ALICE,
        bob: { sub: 'bob-subject-2', email: 'bob@example.org', preferred_username: 'bob', groups: 'ops' },
        carol: { sub: 'carol-subject-3', preferred_username: 'carol', groups: ['ops', 5, null, { name: 'dev' }, ''] },
      },
    });
    settings = {
      issuer: provider.issuer, client_id: 'cmi', client_secret: SECRET, scopes: ['openid', 'email', 'profile', 'groups'],
      login_claim: 'preferred_username', email_claim: 'email', groups_claim: 'groups',
    };
    browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox'] });
  });

  after(async () => {
    await browser?.close();
    await provider?.close();
    await callback?.close();
  });

  /** One browser context a person: its provider session makes the next sign-ins go straight back (no login, no consent). */
  const contexts = new Map<string, BrowserContext>();

  /**
   * One sign-in: cmi's start, the provider's login and consent pages (the first time for `login`), back
   * at the callback. Gives the URL the callback was called with, and what the attempt kept.
   */
  async function signIn(login: string, given: OidcSettings = settings) {
    const state = `attempt-${++attempts}`;
    const { url, protocol } = await oidcStart(given, callback.redirectUri, state);
    let context = contexts.get(login);
    if (context === undefined) {
      context = await browser.newContext();
      contexts.set(login, context);
    }
    const page = await context.newPage();
    try {
      const before = callback.called.length;
      await page.goto(url, { waitUntil: 'domcontentloaded' });
      if (new URL(page.url()).origin === provider.issuer) await signInAtOidcProvider(page, login);
      const callbackUrl = await eventually(() => {
        assert.ok(callback.called.length > before, 'the callback was not called yet');
        return callback.called[callback.called.length - 1] as URL;
      });
      return { url: new URL(url), callbackUrl, state, protocol };
    } finally {
      await page.close();
    }
  }

  it('a full sign-in gives the exact identity: the subject, login, email, groups and names (the claims the ID token lacks read from userinfo)', async () => {
    const { url, callbackUrl, state, protocol } = await signIn('alice');
    assert.equal(url.origin, provider.issuer);
    assert.equal(url.searchParams.get('response_type'), 'code');
    assert.equal(url.searchParams.get('client_id'), 'cmi');
    assert.equal(url.searchParams.get('redirect_uri'), callback.redirectUri);
    assert.equal(url.searchParams.get('scope'), 'openid email profile groups');
    assert.equal(url.searchParams.get('state'), state);
    assert.equal(url.searchParams.get('nonce'), protocol.nonce);
    assert.equal(url.searchParams.get('code_challenge_method'), 'S256');
    assert.match(url.searchParams.get('code_challenge') ?? '', /^[\w-]{43}$/);
    assert.equal(url.searchParams.has('code_verifier'), false);
    assert.deepEqual(Object.keys(protocol).sort(), ['code_verifier', 'nonce']);
    assert.equal(callbackUrl.origin + callbackUrl.pathname, callback.redirectUri);
    assert.equal(callbackUrl.searchParams.get('state'), state);

    const userinfoBefore = provider.requests.filter((request) => request === 'GET /me').length;
    const identity = await oidcFinish(settings, callback.redirectUri, callbackUrl, state, protocol);
    assert.deepEqual(identity, {
      subject: 'alice-subject-1', login: 'alice', email: 'alice@example.org', groups: ['ops', 'dev'], firstName: 'Alice', lastName: 'Liddell',
    } satisfies ExternalIdentity);
    assert.equal(provider.requests.filter((request) => request === 'GET /me').length, userinfoBefore + 1);
  });

  it('reads the claims from the ID token when it holds them all, without asking userinfo', async () => {
    const fromIdToken = { ...settings, login_claim: 'sub', email_claim: 'sub', groups_claim: 'sub' };
    const { callbackUrl, state, protocol } = await signIn('alice', fromIdToken);
    const userinfoBefore = provider.requests.filter((request) => request === 'GET /me').length;
    const identity = await oidcFinish(fromIdToken, callback.redirectUri, callbackUrl, state, protocol);
    assert.deepEqual(identity, { subject: 'alice-subject-1', login: 'alice-subject-1', email: 'alice-subject-1', groups: ['alice-subject-1'] });
    assert.equal(provider.requests.filter((request) => request === 'GET /me').length, userinfoBefore);
  });

  it('takes a single group as a list of one, and ignores groups that are not strings', async () => {
    const bob = await signIn('bob');
    assert.deepEqual(await oidcFinish(settings, callback.redirectUri, bob.callbackUrl, bob.state, bob.protocol), {
      subject: 'bob-subject-2', login: 'bob', email: 'bob@example.org', groups: ['ops'],
    });
    const carol = await signIn('carol');
    assert.deepEqual(await oidcFinish(settings, callback.redirectUri, carol.callbackUrl, carol.state, carol.protocol), {
      subject: 'carol-subject-3', login: 'carol', email: undefined, groups: ['ops'],
    });
  });

  it('reads the discovery document once for many sign-ins (kept 5 minutes)', async () => {
    const discoveries = () => provider.requests.filter((request) => request === 'GET /.well-known/openid-configuration').length;
    await oidcStart(settings, callback.redirectUri, 'warm');
    const before = discoveries();
    await oidcStart(settings, callback.redirectUri, 'one');
    await oidcStart(settings, callback.redirectUri, 'two');
    assert.equal(discoveries(), before);
    // oidcCheck (cmi doctor) reads it afresh.
    await oidcCheck(settings);
    assert.equal(discoveries(), before + 1);
  });

  it('refuses an answer whose state is not the attempt\'s, without redeeming its code', async () => {
    const { callbackUrl, state, protocol } = await signIn('alice');
    const tokenRequests = provider.requests.filter((request) => request === 'POST /token').length;
    await rejectsWith(oidcFinish(settings, callback.redirectUri, callbackUrl, 'attempt-of-someone-else', protocol), IdentityRefused,
      /^The provider's answer is not for this sign-in \(its state does not match\): sign in again$/, [callbackUrl.searchParams.get('code') ?? '']);
    assert.equal(provider.requests.filter((request) => request === 'POST /token').length, tokenRequests);
    // The code is still good for the attempt it belongs to.
    assert.equal((await oidcFinish(settings, callback.redirectUri, callbackUrl, state, protocol)).subject, 'alice-subject-1');
  });

  it('refuses a code used twice', async () => {
    const { callbackUrl, state, protocol } = await signIn('alice');
    await oidcFinish(settings, callback.redirectUri, callbackUrl, state, protocol);
    await rejectsWith(oidcFinish(settings, callback.redirectUri, callbackUrl, state, protocol), IdentityRefused,
      /^The provider refused the sign-in's code \(invalid_grant: grant request is invalid\): it is wrong, expired or already used; sign in again$/,
      [callbackUrl.searchParams.get('code') ?? '']);
  });

  it('refuses a made-up code, and one redeemed without the attempt\'s PKCE verifier', async () => {
    const { callbackUrl, state, protocol } = await signIn('alice');
    const madeUp = new URL(callbackUrl);
    madeUp.searchParams.set('code', 'a-code-nobody-issued');
    await rejectsWith(oidcFinish(settings, callback.redirectUri, madeUp, state, protocol), IdentityRefused, /^The provider refused the sign-in's code \(invalid_grant/, ['a-code-nobody-issued']);
    const otherVerifier: OidcProtocol = { ...protocol, code_verifier: 'x'.repeat(43) };
    await rejectsWith(oidcFinish(settings, callback.redirectUri, callbackUrl, state, otherVerifier), IdentityRefused, /^The provider refused the sign-in's code \(invalid_grant/);
  });

  it('refuses the sign-in the person cancelled at the provider (error=access_denied), saying so', async () => {
    const state = `attempt-${++attempts}`;
    const { url, protocol } = await oidcStart(settings, callback.redirectUri, state);
    const context = await browser.newContext();
    let callbackUrl: URL;
    try {
      const page = await context.newPage();
      const before = callback.called.length;
      await page.goto(url, { waitUntil: 'domcontentloaded' });
      await page.getByText('[ Cancel ]').click();
      callbackUrl = await eventually(() => {
        assert.ok(callback.called.length > before, 'the callback was not called yet');
        return callback.called[callback.called.length - 1] as URL;
      });
    } finally {
      await context.close();
    }
    assert.equal(callbackUrl.searchParams.get('error'), 'access_denied');
    await rejectsWith(oidcFinish(settings, callback.redirectUri, callbackUrl, state, protocol), IdentityRefused,
      /^The provider refused the sign-in \(access_denied: End-User aborted interaction\)$/);
  });

  it('checks the ID token\'s nonce: an ID token for another attempt is refused', async () => {
    const { callbackUrl, state, protocol } = await signIn('alice');
    await rejectsWith(oidcFinish(settings, callback.redirectUri, callbackUrl, state, { ...protocol, nonce: 'the-nonce-of-another-attempt' }), IdentityRefused,
      /^The provider's ID token is not for this sign-in \(its nonce does not match\): sign in again$/, [protocol.nonce]);
  });

  /** A sign-in whose token answer carries the ID token `alter` makes, redeemed by oidcFinish. */
  async function finishWithIdToken(alter: IdTokenAlteration): Promise<ExternalIdentity> {
    const { callbackUrl, state, protocol } = await signIn('alice');
    provider.alterIdToken(alter);
    try {
      return await oidcFinish(settings, callback.redirectUri, callbackUrl, state, protocol);
    } finally {
      provider.alterIdToken(undefined);
    }
  }

  it('checks the ID token: its signature, audience, issuer and expiry (each changed by a man in the middle of the token endpoint)', async () => {
    // Signed again with the provider's key and unchanged: taken, so each refusal below is the change's.
    assert.equal((await finishWithIdToken((token, sign) => sign(claimsOfJwt(token)))).subject, 'alice-subject-1');
    await rejectsWith(finishWithIdToken((token) => `${token.slice(0, token.lastIndexOf('.') + 1)}${'A'.repeat(342)}`), IdentityRefused,
      /^The provider's ID token was refused: JWT signature verification failed$/);
    await rejectsWith(finishWithIdToken((token) => {
      const [header, , signature] = token.split('.');
      return `${header}.${Buffer.from(JSON.stringify({ ...claimsOfJwt(token), sub: 'mallory' })).toString('base64url')}.${signature}`;
    }), IdentityRefused, /^The provider's ID token was refused: JWT signature verification failed$/);
    await rejectsWith(finishWithIdToken((token, sign) => sign({ ...claimsOfJwt(token), aud: 'another-client' })), IdentityRefused,
      /^The provider's ID token was refused: unexpected JWT "aud" \(audience\) claim value$/);
    await rejectsWith(finishWithIdToken((token, sign) => sign({ ...claimsOfJwt(token), iss: 'http://localhost:1' })), IdentityRefused,
      /^The provider's ID token was refused: unexpected JWT "iss" \(issuer\) claim value$/);
    const now = Math.floor(Date.now() / 1000);
    await rejectsWith(finishWithIdToken((token, sign) => sign({ ...claimsOfJwt(token), iat: now - 7200, exp: now - 3600 })), IdentityRefused,
      /^The provider's ID token was refused: unexpected JWT "exp" \(expiration time\) claim value, expiration is past current timestamp$/);
  });

  it('a wrong client_secret: ProviderUnavailable, since every sign-in fails the same until an administrator fixes the setting', async () => {
    const wrong = { ...settings, client_secret: 'not-the-secret-of-cmi' };
    const { callbackUrl, state, protocol } = await signIn('alice', wrong);
    await rejectsWith(oidcFinish(wrong, callback.redirectUri, callbackUrl, state, protocol), ProviderUnavailable,
      /^The provider refused cmi's client credentials \(invalid_client\): check the provider's client_id and client_secret$/,
      ['not-the-secret-of-cmi', callbackUrl.searchParams.get('code') ?? '']);
  });

  it('requires https for an issuer not on this machine (no request made)', async () => {
    const remote = { ...settings, issuer: 'http://sso.example.org' };
    const message = /^The provider's issuer must be an https URL \(http only for this machine: localhost, 127\.0\.0\.1, ::1\)$/;
    await rejectsWith(oidcCheck(remote), ProviderUnavailable, message);
    await rejectsWith(oidcStart(remote, callback.redirectUri, 'attempt'), ProviderUnavailable, message);
    await rejectsWith(oidcCheck({ ...settings, issuer: 'ftp://127.0.0.1/' }), ProviderUnavailable, message);
    await rejectsWith(oidcCheck({ ...settings, issuer: 'not a url' }), ProviderUnavailable, /^The provider's issuer is not a URL: check its issuer setting$/);
  });

  it('a provider answering errors is unavailable, and its failed discovery is not kept', async () => {
    let asked = 0;
    const failing = http.createServer((_req, res) => {
      asked += 1;
      res.writeHead(503, { 'content-type': 'text/plain' }).end('down for maintenance');
    });
    await new Promise<void>((resolve) => failing.listen(0, '127.0.0.1', resolve));
    try {
      const down = { ...settings, issuer: `http://127.0.0.1:${(failing.address() as AddressInfo).port}` };
      await rejectsWith(oidcStart(down, callback.redirectUri, 'one'), ProviderUnavailable, /^The provider's discovery document could not be read: it answered HTTP 503$/);
      await rejectsWith(oidcStart(down, callback.redirectUri, 'two'), ProviderUnavailable, /^The provider's discovery document could not be read: it answered HTTP 503$/);
      assert.equal(asked, 2);
    } finally {
      failing.closeAllConnections();
      await new Promise((resolve) => failing.close(resolve));
    }
  });

  it('a provider repeating the code or the secret in its error text: cut out of the message', async () => {
    const code = 'the-code-the-provider-repeats-4242';
    const fake = http.createServer((req, res) => {
      const issuer = `http://127.0.0.1:${(fake.address() as AddressInfo).port}`;
      if (req.url === '/.well-known/openid-configuration') {
        return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ issuer, authorization_endpoint: `${issuer}/auth`, token_endpoint: `${issuer}/token`, jwks_uri: `${issuer}/jwks` }));
      }
      res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'invalid_grant', error_description: `code ${code} unknown to client cmi with secret ${SECRET}` }));
    });
    await new Promise<void>((resolve) => fake.listen(0, '127.0.0.1', resolve));
    try {
      const echoing = { ...settings, issuer: `http://127.0.0.1:${(fake.address() as AddressInfo).port}` };
      const callbackUrl = new URL(`${callback.redirectUri}?code=${code}&state=the-attempt`);
      await rejectsWith(oidcFinish(echoing, callback.redirectUri, callbackUrl, 'the-attempt', { nonce: 'n'.repeat(43), code_verifier: 'v'.repeat(43) }), IdentityRefused,
        /^The provider refused the sign-in's code \(invalid_grant: code \[hidden\] unknown to client cmi with secret \[hidden\]\): it is wrong, expired or already used; sign in again$/, [code]);
    } finally {
      fake.closeAllConnections();
      await new Promise((resolve) => fake.close(resolve));
    }
  });

  it('a discovery document naming another issuer is unusable', async () => {
    const impostor = http.createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ issuer: provider.issuer, authorization_endpoint: `${provider.issuer}/auth`, token_endpoint: `${provider.issuer}/token` }));
    });
    await new Promise<void>((resolve) => impostor.listen(0, '127.0.0.1', resolve));
    try {
      await rejectsWith(oidcCheck({ ...settings, issuer: `http://127.0.0.1:${(impostor.address() as AddressInfo).port}` }), ProviderUnavailable,
        /^The provider's discovery document could not be read: discovered metadata issuer does not match the expected issuer$/);
    } finally {
      impostor.closeAllConnections();
      await new Promise((resolve) => impostor.close(resolve));
    }
  });

  it('a provider whose TLS certificate is not trusted (self-signed) is unavailable', async () => {
    const directory = await mkdtemp(join(tmpdir(), 'cmi-oidc-tls-'));
    try {
      execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-days', '1', '-subj', '/CN=localhost',
        '-addext', 'subjectAltName=DNS:localhost,IP:127.0.0.1', '-keyout', join(directory, 'key.pem'), '-out', join(directory, 'cert.pem')], { stdio: 'ignore' });
      const tls = https.createServer({ key: await readFile(join(directory, 'key.pem')), cert: await readFile(join(directory, 'cert.pem')) }, (_req, res) => res.end('{}'));
      await new Promise<void>((resolve) => tls.listen(0, '127.0.0.1', resolve));
      try {
        await rejectsWith(oidcCheck({ ...settings, issuer: `https://127.0.0.1:${(tls.address() as AddressInfo).port}` }), ProviderUnavailable,
          /^The provider's discovery document could not be read: its TLS certificate was refused \(DEPTH_ZERO_SELF_SIGNED_CERT\)$/);
      } finally {
        tls.closeAllConnections();
        await new Promise((resolve) => tls.close(resolve));
      }
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
  });

  it('a provider that hangs fails the check within the timeout (5 s), not the sign-in\'s whole life', async () => {
    const sockets = new Set<Socket>();
    const hanging = net.createServer((socket) => sockets.add(socket));
    await new Promise<void>((resolve) => hanging.listen(0, '127.0.0.1', resolve));
    try {
      const started = Date.now();
      await rejectsWith(oidcCheck({ ...settings, issuer: `http://127.0.0.1:${(hanging.address() as AddressInfo).port}` }), ProviderUnavailable,
        /^The provider's discovery document could not be read: it did not answer within 5 seconds$/);
      const took = Date.now() - started;
      assert.ok(took >= 4500 && took < 10_000, `took ${took} ms`);
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => hanging.close(resolve));
    }
  });

  it('the provider stopped: oidcCheck and oidcStart say it cannot be reached, and so does oidcFinish at the token endpoint', async () => {
    const { callbackUrl, state, protocol } = await signIn('alice');
    await provider.close();
    // The document read at the start is kept: the code's redemption is what fails.
    await rejectsWith(oidcFinish(settings, callback.redirectUri, callbackUrl, state, protocol), ProviderUnavailable,
      /^The provider's token endpoint could not be used: the connection was refused$/, [callbackUrl.searchParams.get('code') ?? '']);
    const unreachable = /^The provider's discovery document could not be read: the connection was refused$/;
    await rejectsWith(oidcCheck(settings), ProviderUnavailable, unreachable);
    // Settings never discovered before (another client): oidcStart must read the document, and cannot.
    await rejectsWith(oidcStart({ ...settings, client_id: 'cmi-second', client_secret: OTHER_SECRET }, callback.redirectUri, 'attempt'), ProviderUnavailable, unreachable);
    // oidcCheck dropped the kept document: oidcStart reads it again, and cannot.
    await rejectsWith(oidcStart(settings, callback.redirectUri, 'attempt'), ProviderUnavailable, unreachable);
  });
});
