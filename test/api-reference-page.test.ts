import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { chromium, type Browser } from 'playwright-core';
import { createTestApp, listenLocally, type TestApp } from './support/app.js';

/** Debian's chromium (.ci/run installs it); run as root, so without its sandbox. */
const CHROMIUM = '/usr/bin/chromium';

describe('GET /docs in a real headless Chromium', () => {
  let t: TestApp;
  let browser: Browser;
  let base: string;
  before(async () => {
    t = await createTestApp();
    base = `http://127.0.0.1:${await listenLocally(t.app)}`;
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  });
  after(async () => {
    await browser?.close();
    await t.close();
  });

  it('renders the reference from cmi alone: every request stays on 127.0.0.1, the style sheet applies, no script runs', async () => {
    const page = await browser.newPage();
    const requested: string[] = [];
    const outside: string[] = [];
    await page.route('**/*', (route) => {
      const url = new URL(route.request().url());
      requested.push(`${url.host}${url.pathname}`);
      if (url.hostname !== '127.0.0.1') {
        outside.push(url.href);
        return route.abort();
      }
      return route.continue();
    });
    const problems: string[] = [];
    page.on('console', (message) => {
      if (message.type() === 'error' || message.type() === 'warning') problems.push(message.text());
    });
    page.on('pageerror', (error) => problems.push(error.message));

    const response = await page.goto(`${base}/docs`);
    assert.equal(response?.status(), 200);
    assert.equal(response?.headers()['content-security-policy'], "default-src 'none'; style-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'");
    assert.equal(await page.title(), 'cmi 1.0 API reference');
    assert.equal(await page.locator('h1').textContent(), 'cmi API reference');
    const list = page.locator('section#getUsersJson h3');
    assert.equal(await list.textContent(), 'GET /users.json also .xml');
    // The style sheet came from cmi and applies.
    assert.equal(await page.evaluate("getComputedStyle(document.querySelector('.method')).fontWeight"), '600');
    assert.equal(await page.locator('script').count(), 0);
    assert.ok(await page.locator('section#schema-User td code', { hasText: 'password_changed_at' }).count() === 1);
    // A script smuggled into the page would not run: the policy has no script-src.
    const ran = await page.evaluate(`(() => {
      const script = document.createElement('script');
      script.textContent = 'document.body.dataset.ran = "yes"';
      document.body.append(script);
      return document.body.dataset.ran ?? 'no';
    })()`);
    assert.equal(ran, 'no');
    assert.deepEqual(outside, []);
    assert.deepEqual(requested.sort(), [`${new URL(base).host}/docs`, `${new URL(base).host}/docs/reference.css`]);
    // The one message: Chromium reporting the refused script above.
    assert.equal(problems.length, 1, problems.join('\n'));
    assert.match(problems[0] as string, /Content Security Policy/);
    await page.close();
  });
});
