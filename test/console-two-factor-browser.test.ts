import assert from 'node:assert/strict';
import { after, afterEach, before, beforeEach, describe, it } from 'node:test';
import { authenticator } from 'otplib';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import qrcode from 'qrcode-generator';
import { callApi } from './support/http.js';
import { ADMIN, ALICE, createTestApp, listenLocally, type TestApp } from './support/app.js';

// The console's second factor in a real headless Chromium (as test/console-browser.test.ts launches it):
// the sign-in (the password, then a page asking for the code, whose token is never a session), and
// setting one up and turning it off on the user's page.

let browser: Browser;
before(async () => {
  browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox'] });
});
after(() => browser.close());

/** A new browser context reaching only 127.0.0.1, and a page whose console errors and script errors land in `problems`. */
async function openPage(problems: string[]): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext();
  await context.route('**/*', (route) => (new URL(route.request().url()).hostname === '127.0.0.1' ? route.continue() : route.abort()));
  const page = await context.newPage();
  page.on('console', (message) => {
    if (message.type() === 'error' && !message.text().startsWith('Failed to load resource: the server responded with a status of 4')) problems.push(message.text());
  });
  page.on('pageerror', (error) => problems.push(error.message));
  return { context, page };
}

describe('the console\'s sign-in with a second factor, in a browser', () => {
  let t: TestApp;
  let base: string;
  let context: BrowserContext;
  let page: Page;
  let problems: string[];
  let secret: string;
  let recoveryCodes: string[];

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
    ({ context, page } = await openPage(problems));
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

describe('setting up and turning off a second factor on the user\'s page, in a browser', () => {
  let t: TestApp;
  let base: string;
  let context: BrowserContext;
  let page: Page;
  let problems: string[];

  beforeEach(async () => {
    t = await createTestApp();
    base = `http://127.0.0.1:${await listenLocally(t.app)}`;
    problems = [];
    ({ context, page } = await openPage(problems));
  });

  afterEach(async () => {
    await context.close();
    await t.close();
    assert.deepEqual(problems, []);
  });

  const codeOf = (secret: string, offsetSteps = 0) => authenticator.clone({ epoch: t.time.clock().getTime() + offsetSteps * 30_000 }).generate(secret);
  const section = () => page.locator('section[aria-labelledby="two-factor-heading"]');

  async function signIn(): Promise<void> {
    await page.goto(`${base}/console/sign-in`);
    await page.getByLabel('Login or email').fill(ALICE.login);
    await page.getByLabel('Password').fill(ALICE.password);
    await Promise.all([page.waitForLoadState('load'), page.getByRole('button', { name: 'Sign in' }).click()]);
  }

  /** Submits the form of `button`; the answer's status. */
  async function submit(button: string): Promise<number> {
    const [response] = await Promise.all([page.waitForResponse((r) => r.request().method() === 'POST'), page.getByRole('button', { name: button }).click()]);
    await page.waitForLoadState('load');
    return response.status();
  }

  it('a holder of a role requiring one is sent to its page, scans the QR code, keeps the recovery codes, confirms, and goes on', async () => {
    const role = await callApi(t.app, 'POST', '/roles.json', { auth: t.adminAuth, body: { role: { label: 'Staff', requires_two_factor: true, permission_ids: [] } } });
    assert.equal(role.statusCode, 201, role.body);
    assert.equal((await callApi(t.app, 'PUT', '/users/2.json', { auth: t.adminAuth, body: { user: { role_ids: [2, 3] } } })).statusCode, 204);
    await signIn();
    assert.equal(page.url(), `${base}/console/users/2?notice=two_factor_required`);
    assert.equal(await section().locator('p.muted').textContent(), 'Off: the password alone signs in.');

    // A wrong password sets nothing up, and says so beside the field.
    await section().getByLabel('Your current password').fill('not-her-password');
    assert.equal(await submit('Set up a second factor'), 422);
    assert.equal(await section().locator('.field-error').textContent(), 'current password is incorrect');
    assert.equal(await t.database.db.selectFrom('user_two_factor').select('user_id').executeTakeFirst(), undefined);

    await section().getByLabel('Your current password').fill(ALICE.password);
    const [answer] = await Promise.all([page.waitForResponse((r) => r.request().method() === 'POST'), page.getByRole('button', { name: 'Set up a second factor' }).click()]);
    await page.waitForLoadState('load');
    assert.deepEqual([answer.status(), answer.headers()['cache-control']], [200, 'no-store']);
    assert.equal(await page.locator('h1').textContent(), 'Set up a second factor');
    const secret = (await page.locator('#totp-secret').textContent())!.replaceAll(' ', '');
    assert.match(secret, /^[A-Z2-7]{32}$/);
    const uri = await page.getByRole('link', { name: 'the otpauth link' }).getAttribute('href');
    assert.equal(uri, `otpauth://totp/cmi:alice?secret=${secret}&issuer=cmi&algorithm=SHA1&digits=6&period=30`);
    // The QR code is that URI's: each dark module drawn, inside a 4-module quiet zone.
    const qr = page.getByRole('img', { name: 'QR code of the second factor for the authenticator app' });
    const expected = qrcode(0, 'M');
    expected.addData(uri, 'Byte');
    expected.make();
    const count = expected.getModuleCount();
    const dark: string[] = [];
    for (let row = 0; row < count; row++) for (let column = 0; column < count; column++) if (expected.isDark(row, column)) dark.push(`M${column + 4} ${row + 4}h1v1h-1z`);
    assert.equal(await qr.locator('path').getAttribute('d'), dark.join(''));
    assert.equal(await qr.getAttribute('viewBox'), `0 0 ${count + 8} ${count + 8}`);
    const recoveryCodes = await page.locator('ol.recovery-codes code').allTextContents();
    assert.equal(recoveryCodes.length, 10);
    assert.equal(new Set(recoveryCodes).size, 10);

    // A wrong code: the form again, without the secret, nothing turned on.
    await page.getByLabel('Code of your authenticator app').fill(codeOf(secret, 5));
    assert.equal(await submit('Turn on the second factor'), 422);
    assert.equal(await page.locator('.field-error').textContent(), 'code is incorrect');
    assert.equal(await page.locator('#totp-secret').count(), 0);
    await page.getByLabel('Code of your authenticator app').fill(codeOf(secret));
    await Promise.all([page.waitForURL(`${base}/console/users/2?notice=two_factor_enabled`), page.getByRole('button', { name: 'Turn on the second factor' }).click()]);
    assert.match((await section().locator('p').first().textContent())!, /^On since .+: signing in to the console asks for a code of the authenticator app after the password\. 10 recovery codes left\.$/);
    // The role's requirement is met: the rest of the console opens.
    await page.goto(`${base}/console/users`);
    assert.equal(page.url(), `${base}/console/users`);
    const audit = await t.database.db.selectFrom('audit_events').select('action').where('action', 'like', 'user.two_factor.%').orderBy('id').execute();
    assert.deepEqual(audit.map((row) => row.action), ['user.two_factor.create', 'user.two_factor.confirm']);
    // The page never carried the secret after the enrolment's answer.
    await page.goto(`${base}/console/users/2`);
    assert.equal((await page.content()).includes(secret), false);
  });

  it('turns one\'s own off with a recovery code (a wrong code is refused); an administrator turns another\'s off', async () => {
    const enrolled = await callApi(t.app, 'POST', '/users/2/two_factor.json', { auth: t.aliceAuth });
    const { secret, recovery_codes: codes } = (JSON.parse(enrolled.body) as { two_factor: { secret: string; recovery_codes: string[] } }).two_factor;
    assert.equal((await callApi(t.app, 'PUT', '/users/2/two_factor.json', { auth: t.aliceAuth, body: { two_factor: { code: codeOf(secret) } } })).statusCode, 200);
    await signIn();
    await page.getByLabel('Code of your authenticator app, or a recovery code').fill(codeOf(secret, 1));
    await Promise.all([page.waitForLoadState('load'), page.getByRole('button', { name: 'Verify' }).click()]);
    await page.goto(`${base}/console/users/2`);
    await section().getByLabel('Code of your authenticator app, or a recovery code').fill('000000');
    assert.equal(await submit('Turn off the second factor'), 422);
    assert.equal(await section().locator('p.error').textContent(), 'X-Cmi-OTP is incorrect');
    await section().getByLabel('Code of your authenticator app, or a recovery code').fill(codes[3] as string);
    await Promise.all([page.waitForURL(`${base}/console/users/2?notice=two_factor_disabled`), page.getByRole('button', { name: 'Turn off the second factor' }).click()]);
    assert.equal(await section().locator('p.muted').textContent(), 'Off: the password alone signs in.');
    assert.equal(await t.database.db.selectFrom('user_two_factor').select('user_id').executeTakeFirst(), undefined);

    // Alice again, and the administrator turning it off for her (no code: users.update).
    const again = await callApi(t.app, 'POST', '/users/2/two_factor.json', { auth: t.aliceAuth });
    const second = (JSON.parse(again.body) as { two_factor: { secret: string } }).two_factor.secret;
    assert.equal((await callApi(t.app, 'PUT', '/users/2/two_factor.json', { auth: t.aliceAuth, body: { two_factor: { code: codeOf(second) } } })).statusCode, 200);
    await context.clearCookies();
    await page.goto(`${base}/console/sign-in`);
    await page.getByLabel('Login or email').fill('admin');
    await page.getByLabel('Password').fill(ADMIN.password);
    await Promise.all([page.waitForLoadState('load'), page.getByRole('button', { name: 'Sign in' }).click()]);
    await page.goto(`${base}/console/users/2`);
    assert.equal(await section().getByLabel('Code of your authenticator app, or a recovery code').count(), 0);
    await Promise.all([page.waitForURL(`${base}/console/users/2?notice=two_factor_disabled`), page.getByRole('button', { name: 'Turn off alice\'s second factor' }).click()]);
    assert.equal(await t.database.db.selectFrom('user_two_factor').select('user_id').executeTakeFirst(), undefined);
  });
});
