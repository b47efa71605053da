import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
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
    assert.deepEqual(res.headers.getSetCookie(), []);
    const first = await fetch(`${base}${location}`, { redirect: 'manual' });
    assert.equal(first.status, 200);
    assert.match(first.headers.getSetCookie()[0] ?? '', /^_cmi_console=[^;]+; Path=\/console; HttpOnly; SameSite=Strict$/);
    assert.match(await first.text(), /<meta http-equiv="refresh" content="0; url=\/console">/);
    const again = await fetch(`${base}${location}`, { redirect: 'manual' });
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
});
