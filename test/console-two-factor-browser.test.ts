import assert from 'node:assert/strict';
import { after, afterEach, before, beforeEach, describe, it } from 'node:test';
import { authenticator } from 'otplib';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { ALICE, createTestApp, listenLocally, type TestApp } from './support/app.js';

// The console's sign-in with a second factor in a real headless Chromium (as test/console-browser.test.ts
// launches it): the password, then a page asking for the code, whose token is never a session.

describe('the console\'s sign-in with a second factor, in a browser', () => {
  let browser: Browser;
  let t: TestApp;
  let base: string;
  let context: BrowserContext;
  let page: Page;
  let problems: string[];
  let secret: string;
  let recoveryCodes: string[];

  before(async () => {
    browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox'] });
  });
  after(() => browser.close());

  const codeOf = (offsetSteps = 0) => authenticator.clone({ epoch: t.time.clock().getTime() + offsetSteps * 30_000 }).generate(secret);

  beforeEach(async () => {
    t = await createTestApp();
    base = `http://127.0.0.1:${await listenLocally(t.app)}`;
    // Alice enrols and confirms through the API, with a code otplib computes.
    const enrolled = await t.app.inject({ method: 'POST', url: '/users/2/two_factor.json', headers: { authorization: t.aliceAuth } });
    ({ secret, recovery_codes: recoveryCodes } = (JSON.parse(enrolled.body) as { two_factor: { secret: string; recovery_codes: string[] } }).two_factor);
    const confirmed = await t.app.inject({ method: 'PUT', url: '/users/2/two_factor.json', headers: { authorization: t.aliceAuth, 'content-type': 'application/json' }, payload: JSON.stringify({ two_factor: { code: codeOf() } }) });
    assert.equal(confirmed.statusCode, 200, confirmed.body);
    problems = [];
    context = await browser.newContext();
    await context.route('**/*', (route) => (new URL(route.request().url()).hostname === '127.0.0.1' ? route.continue() : route.abort()));
    page = await context.newPage();
    page.on('console', (message) => {
      if (message.type() === 'error' && !message.text().startsWith('Failed to load resource: the server responded with a status of 4')) problems.push(message.text());
    });
    page.on('pageerror', (error) => problems.push(error.message));
  });

  afterEach(async () => {
    await context.close();
    await t.close();
    assert.deepEqual(problems, []);
  });

  /** The password step: answered by the page asking for the code, no cookie yet. */
  async function password(): Promise<void> {
    await page.goto(`${base}/console/sign-in`);
    await page.getByLabel('Login or email').fill(ALICE.login);
    await page.getByLabel('Password').fill(ALICE.password);
    await Promise.all([page.waitForLoadState('load'), page.getByRole('button', { name: 'Sign in' }).click()]);
    assert.equal(await page.locator('h1').textContent(), 'Second factor');
    assert.deepEqual((await context.cookies()).map((cookie) => cookie.name), []);
  }

  async function code(value: string): Promise<void> {
    await page.getByLabel('Code of your authenticator app, or a recovery code').fill(value);
    await Promise.all([page.waitForLoadState('load'), page.getByRole('button', { name: 'Verify' }).click()]);
  }

  it('asks for the code after the password: a wrong or replayed code is refused, the next one signs in', async () => {
    await password();
    // The code that confirmed the enrolment was accepted once already.
    await code(codeOf());
    assert.equal(await page.locator('p.error').textContent(), 'The code is wrong, or was used already.');
    assert.equal(await page.locator('h1').textContent(), 'Second factor');
    await code(codeOf(1));
    assert.equal(page.url(), `${base}/console/users`);
    assert.deepEqual((await context.cookies()).map((cookie) => cookie.name), ['_cmi_console']);
    const audit = await t.database.db.selectFrom('audit_events').select(['action', 'changes']).where('action', '=', 'session.create').execute();
    assert.deepEqual(audit, [{ action: 'session.create', changes: '{"second_factor":true}' }]);
  });

  it('takes a recovery code once; the step expires after five minutes', async () => {
    await password();
    await code(recoveryCodes[0] as string);
    assert.equal(page.url(), `${base}/console/users`);
    await context.clearCookies();
    await password();
    await code(recoveryCodes[0] as string);
    assert.equal(await page.locator('p.error').textContent(), 'The code is wrong, or was used already.');
    t.time.advance(301);
    await code(codeOf());
    assert.equal(await page.locator('p.error').textContent(), 'The sign-in took too long, or the account changed: sign in again.');
    assert.equal(await page.locator('h1').textContent(), 'Sign in to cmi');
    assert.deepEqual((await context.cookies()).map((cookie) => cookie.name), []);
  });
});
