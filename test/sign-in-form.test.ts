import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { authenticator } from 'otplib';
import { type Browser, chromium } from 'playwright-core';
import { createTestApp, listenLocally, type TestApp } from './support/app.js';

// POST /users/sign_in as OnApp's WHMCS users module posts it (docs/console.md#signing-in-from-another-site):
// a browser form, urlencoded user[login], user[password], commit=Sign In, from the billing site in a
// new tab. cmi listens on 127.0.0.1; the "billing site" is a page on localhost (another origin), the
// one CMI_SIGN_IN_ORIGINS names.

/** The form onappusers_AdminLink renders, posted by itself. */
const billingPage = (action: string, login: string, password: string) => `<!doctype html><html><body>
<form id="f" action="${action}" method="post" target="_self">
<input type="hidden" name="user[login]" value="${login}">
<input type="hidden" name="user[password]" value="${password}">
<input type="submit" name="commit" value="Sign In">
</form><script>document.getElementById('f').submit();</script></body></html>`;

describe('the sign-in form of another site', () => {
  let t: TestApp;
  let base: string;
  let billing: Server;
  let billingOrigin: string;
  let page = '';
  before(async () => {
    billing = createServer((_request, response) => response.writeHead(200, { 'content-type': 'text/html' }).end(page));
    await new Promise<void>((resolve) => billing.listen(0, 'localhost', resolve));
    billingOrigin = `http://localhost:${(billing.address() as AddressInfo).port}`;
    t = await createTestApp({ CMI_SIGN_IN_ORIGINS: billingOrigin });
    base = `http://127.0.0.1:${await listenLocally(t.app)}`;
  });
  after(async () => {
    await t?.close();
    await new Promise((resolve) => billing?.close(resolve));
  });

  const post = (headers: Record<string, string>, body = 'user%5Blogin%5D=alice&user%5Bpassword%5D=alice-password&commit=Sign+In') =>
    fetch(`${base}/users/sign_in`, { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers }, body });

  it('from an allowed origin: 303 to the console\'s hand-off page, whose code works once', async () => {
    const res = await post({ origin: billingOrigin });
    assert.equal(res.status, 303);
    const location = res.headers.get('location') ?? '';
    assert.match(location, /^\/console\/sign-in\/complete\?code=\d+\.\d+\.[0-9a-f]{32}\.\d+\.[A-Za-z0-9_-]{43}$/);
    // No session: only the key that binds the code to this browser, sent back to the page that redeems it.
    const [handoffCookie, ...others] = res.headers.getSetCookie();
    assert.deepEqual(others, []);
    assert.match(handoffCookie ?? '', /^_cmi_sign_in=[A-Za-z0-9_-]{43}; Path=\/console\/sign-in\/complete; Max-Age=60; HttpOnly; SameSite=Lax$/);
    const browserKey = (handoffCookie ?? '').split(';')[0] as string;
    // The code in another browser (a login CSRF: a script's code handed to a victim) is refused.
    const elsewhere = await fetch(`${base}${location}`, { redirect: 'manual' });
    assert.equal(elsewhere.status, 303);
    assert.equal(elsewhere.headers.get('location'), '/console/sign-in?failed=expired');
    const wrongKey = await fetch(`${base}${location}`, { redirect: 'manual', headers: { cookie: `_cmi_sign_in=${'A'.repeat(43)}` } });
    assert.equal(wrongKey.status, 303);
    const first = await fetch(`${base}${location}`, { redirect: 'manual', headers: { cookie: browserKey } });
    assert.equal(first.status, 200);
    assert.deepEqual(first.headers.getSetCookie().map((cookie) => cookie.split('=')[0]), ['_cmi_sign_in', '_cmi_console']);
    assert.match(first.headers.getSetCookie()[1] ?? '', /^_cmi_console=[^;]+; Path=\/console; HttpOnly; SameSite=Strict$/);
    assert.match(await first.text(), /<meta http-equiv="refresh" content="0; url=\/console">/);
    const again = await fetch(`${base}${location}`, { redirect: 'manual', headers: { cookie: browserKey } });
    assert.equal(again.status, 303);
    assert.equal(again.headers.get('location'), '/console/sign-in?failed=expired');
  });

  it('wrong credentials: 303 to the sign-in page with the reason; the Referer stands for a missing Origin', async () => {
    const res = await post({ referer: `${billingOrigin}/clientarea.php` }, 'user%5Blogin%5D=alice&user%5Bpassword%5D=wrong&commit=Sign+In');
    assert.equal(res.status, 303);
    assert.equal(res.headers.get('location'), '/console/sign-in?failed=credentials');
    const shown = await fetch(`${base}/console/sign-in?failed=credentials`);
    assert.match(await shown.text(), /The login or the password is wrong, or the account is not active\./);
  });

  it('any other origin, or none, is 403', async () => {
    const refused: Array<Record<string, string>> = [{ origin: 'http://evil.example' }, { referer: 'http://evil.example/x' }, {}, { origin: 'null' }];
    for (const headers of refused) {
      const res = await post(headers);
      assert.equal(res.status, 403, JSON.stringify(headers));
      assert.equal(await res.text(), '{"errors":{"base":["The sign-in form must be posted from this server\'s own origin or one of CMI_SIGN_IN_ORIGINS"]}}');
    }
    // cmi's own origin always.
    assert.equal((await post({ origin: base })).status, 303);
  });

  describe('in Chromium', () => {
    let browser: Browser;
    before(async () => {
      browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox'] });
    });
    after(() => browser?.close());

    it('the billing site\'s page posts the form and the browser ends on the console, signed in', async () => {
      page = billingPage(`${base}/users/sign_in`, 'alice', 'alice-password');
      const context = await browser.newContext();
      const tab = await context.newPage();
      await tab.goto(`${billingOrigin}/clientarea.php`);
      await tab.waitForURL(`${base}/console/users**`, { timeout: 20_000 });
      assert.match(await tab.content(), /alice/);
      assert.ok(!(await tab.content()).includes('Sign in to cmi'));
      await context.close();
    });

    it('wrong credentials end on the sign-in page, saying why', async () => {
      page = billingPage(`${base}/users/sign_in`, 'alice', 'wrong-password');
      const context = await browser.newContext();
      const tab = await context.newPage();
      await tab.goto(`${billingOrigin}/clientarea.php`);
      await tab.waitForURL(`${base}/console/sign-in?failed=credentials`, { timeout: 20_000 });
      assert.match(await tab.content(), /The login or the password is wrong/);
      await context.close();
    });
  });

  it('an account with a second factor: 303 to the console\'s code page, which signs in once the code is right', async () => {
    // Bob enrols over the API, with a code otplib computes from the secret the enrolment answered.
    const bobAuth = `Basic ${Buffer.from('bob:bob-password-1').toString('base64')}`;
    const created = await fetch(`${base}/users.json`, { method: 'POST', headers: { authorization: t.adminAuth, 'content-type': 'application/json' }, body: JSON.stringify({ user: { login: 'bob', email: 'bob@example.com', first_name: 'Bob', last_name: 'B', password: 'bob-password-1' } }) });
    assert.equal(created.status, 201);
    const bob = ((await created.json()) as { user: { id: number } }).user.id;
    const enrolment = ((await (await fetch(`${base}/users/${bob}/two_factor.json`, { method: 'POST', headers: { authorization: bobAuth } })).json()) as { two_factor: { secret: string } }).two_factor;
    const codeNow = (offsetSteps: number) => authenticator.clone({ epoch: t.time.clock().getTime() + offsetSteps * 30_000 }).generate(enrolment.secret);
    const confirmed = await fetch(`${base}/users/${bob}/two_factor.json`, { method: 'PUT', headers: { authorization: bobAuth, 'content-type': 'application/json' }, body: JSON.stringify({ two_factor: { code: codeNow(0) } }) });
    assert.equal(confirmed.status, 200);

    const res = await post({ origin: billingOrigin }, 'user%5Blogin%5D=bob&user%5Bpassword%5D=bob-password-1&commit=Sign+In');
    assert.equal(res.status, 303);
    const location = res.headers.get('location') ?? '';
    assert.match(location, /^\/console\/sign-in\/code\?token=\d+\.\d+\.\d+\.[A-Za-z0-9_-]{43}$/);
    assert.deepEqual(res.headers.getSetCookie(), []);
    const step = await fetch(`${base}${location}`, { redirect: 'manual' });
    assert.equal(step.status, 200);
    assert.deepEqual(step.headers.getSetCookie(), []);
    const token = new URL(location, base).searchParams.get('token') ?? '';
    assert.ok((await step.text()).includes(`<input type="hidden" name="token" value="${token}">`));
    // A forged or expired token is sent back to the sign-in page.
    const forged = await fetch(`${base}/console/sign-in/code?token=${token.slice(0, -1)}${token.endsWith('A') ? 'B' : 'A'}`, { redirect: 'manual' });
    assert.equal(forged.status, 303);
    assert.equal(forged.headers.get('location'), '/console/sign-in?failed=expired');

    const signedIn = await fetch(`${base}/console/sign-in/code`, {
      method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token, code: codeNow(1), next: '/console' }).toString(),
    });
    assert.equal(signedIn.status, 303);
    assert.equal(signedIn.headers.get('location'), '/console');
    assert.match(signedIn.headers.getSetCookie()[0] ?? '', /^_cmi_console=[^;]+; Path=\/console; HttpOnly; SameSite=Strict$/);
  });
});
