import assert from 'node:assert/strict';
import { after, afterEach, before, beforeEach, describe, it } from 'node:test';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { ADMIN, ALICE, createTestApp, listenLocally, type TestApp } from './support/app.js';
import { ERRORS, report } from './support/error-reports.js';
import { login, withCookie } from './support/http.js';
import { PERMISSIONS } from '../src/roles/permissions.js';

// The operator console in a real headless Chromium (Debian's, driven by playwright-core) against a
// real cmi on a free port of 127.0.0.1 (docs/console.md). Every request the browser makes is checked:
// one to anywhere but that server fails the test. The layouts are asserted as what is in the first
// screen at 1280x800 and 390x844; the screenshots in docs/ are tools/console-screenshots.ts's, not these tests'.

const XSS = '<img src=x onerror=alert(1)>';
const WIDE = { width: 1280, height: 800 };
const PHONE = { width: 390, height: 844 };

describe('the operator console in a browser', () => {
  let browser: Browser;
  let t: TestApp;
  let base: string;
  let context: BrowserContext;
  let page: Page;
  /** Requests that went anywhere but cmi, and what the page logged as an error (CSP refusals among them). */
  let outside: string[];
  let problems: string[];

  before(async () => {
    browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox'] });
  });
  after(() => browser.close());

  beforeEach(async () => {
    t = await createTestApp();
    base = `http://127.0.0.1:${await listenLocally(t.app)}`;
    outside = [];
    problems = [];
    context = await browser.newContext({ viewport: WIDE });
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base });
    await context.route('**/*', (route) => {
      const url = new URL(route.request().url());
      if (url.hostname === '127.0.0.1') return route.continue();
      outside.push(route.request().url());
      return route.abort();
    });
    page = await context.newPage();
    page.on('console', (message) => {
      // A 4xx page the test asks for is no problem; anything else logged as an error (a CSP refusal) is.
      if (message.type() === 'error' && !message.text().startsWith('Failed to load resource: the server responded with a status of 4')) problems.push(message.text());
    });
    page.on('pageerror', (error) => problems.push(error.message));
    page.on('dialog', (dialog) => {
      problems.push(`dialog: ${dialog.message()}`);
      void dialog.dismiss();
    });
  });

  afterEach(async () => {
    await context.close();
    await t.close();
    assert.deepEqual(outside, [], 'requests left 127.0.0.1');
  });

  /** Errors spread over the last hours, so the sparklines and the chart have a shape. */
  async function seed(): Promise<void> {
    const hosts = ['hv-01', 'hv-02', 'hv-07'];
    t.time.set('2026-11-19T14:10:00.000Z');
    for (let hour = 0; hour < 20; hour++) {
      for (let i = 0; i < (hour % 5) + 1; i++) {
        const res = await report(t, {
          error_class: 'StorageTimeout', message: `timeout after ${3000 + i} ms on 10.0.0.${i}`, host: hosts[i % 3], component: i % 2 ? 'storage' : 'scheduler',
          backtrace: "src/storage/volume.ts:88:in 'attach'\nsrc/server/routes/volumes.ts:31:in 'handler'", context: { volume: `vol-${hour}`, attempt: i },
        });
        assert.ok(res.statusCode === 200 || res.statusCode === 201, res.body);
      }
      t.time.advance(3600);
    }
    for (let i = 0; i < 27; i++) {
      const res = await report(t, { error_class: `QuotaExceeded${i}`, message: `quota ${i} exceeded for tenant ${i}`, host: 'cp-01', component: 'billing' });
      assert.equal(res.statusCode, 201, res.body);
    }
    const xss = await report(t, { error_class: 'TemplateError', message: XSS, host: 'web-01', component: 'ui' });
    assert.equal(xss.statusCode, 201, xss.body);
  }

  /** Signs in with the keyboard alone: the login field has focus, Tab to the password, Enter to send. */
  async function signIn(login: string, password: string): Promise<void> {
    await page.goto(`${base}/`);
    assert.match(page.url(), /\/console\/sign-in\?next=%2Fconsole$/);
    // Chromium gives autofocus a moment after load: keys typed before it would go nowhere.
    await page.locator('#login:focus').waitFor();
    await page.keyboard.type(login);
    await page.keyboard.press('Tab');
    await page.keyboard.type(password);
    assert.deepEqual([await page.inputValue('#login'), await page.inputValue('#password')], [login, password]);
    await Promise.all([page.waitForURL((url) => !url.pathname.startsWith('/console/sign-in')), page.keyboard.press('Enter')]);
  }

  const rows = () => page.locator('table.errors tbody tr');
  /** Opens the list's filters (folded behind one button) when they are closed. */
  const openFilters = async () => {
    if ((await page.locator('details.filter-panel[open]').count()) === 0) await page.locator('details.filter-panel > summary').click();
  };
  /** Presses a bulk action of the list, in its menu. */
  const bulk = async (name: string) => {
    await page.locator('details.bulk-menu > summary').click();
    await page.getByRole('button', { name, exact: true }).click();
  };
  /** Whether the element is whole inside the first screen (the viewport, unscrolled). */
  const inFirstScreen = async (selector: string, index = 0) => {
    const box = await page.locator(selector).nth(index).boundingBox();
    const viewport = page.viewportSize()!;
    return box !== null && box.y >= 0 && box.x >= 0 && box.y + box.height <= viewport.height && box.x + box.width <= viewport.width + 0.5;
  };
  /** How many of the elements are whole inside the first screen. */
  const countInFirstScreen = async (selector: string) => {
    let n = 0;
    for (let i = 0; i < (await page.locator(selector).count()); i++) if (await inFirstScreen(selector, i)) n += 1;
    return n;
  };
  const scrollWidth = () => page.evaluate('document.documentElement.scrollWidth');
  const idOf = async (errorClass: string): Promise<number> => {
    const res = await t.app.inject({ method: 'GET', url: `${ERRORS}.json?error_class=${errorClass}`, headers: { authorization: t.adminAuth } });
    return (JSON.parse(res.body) as Array<{ infrastructure_error: { id: number } }>)[0]!.infrastructure_error.id;
  };

  it('signs in, lists, pages, filters, opens an error with its chart, reports it, deletes it, and signs out', async () => {
    await seed();
    await signIn(ADMIN.login, ADMIN.password);
    assert.equal(page.url(), `${base}/console/overview`);
    await page.getByRole('link', { name: 'Errors', exact: true }).click();
    assert.equal(page.url(), `${base}/console/errors`);
    assert.equal(await page.locator('#total').textContent(), '29 errors');
    assert.equal(await rows().count(), 25);
    assert.equal(await page.locator('svg.sparkline').count(), 25);
    // The message shows as text: the page holds no <img>, and no script ran (no dialog).
    const xssRow = rows().filter({ hasText: 'TemplateError' });
    assert.equal(await xssRow.locator('td.message').textContent(), XSS);
    assert.equal(await page.locator('main img').count(), 0);
    assert.equal(await rows().first().locator('td').nth(1).textContent(), 'TemplateError');

    await page.getByRole('link', { name: 'Next →' }).click();
    // The navigation loaded whole before the reload (a reload racing its commit finds no page).
    await page.waitForURL(`${base}/console/errors?page=2`);
    await page.reload();
    assert.equal(await rows().count(), 4);
    assert.equal(await page.locator('.pager span').textContent(), 'Page 2 of 2');

    await openFilters();
    await page.getByLabel('Class').fill('StorageTimeout');
    await page.getByLabel('Reported').selectOption('false');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL(`${base}/console/errors?reported=false&error_class=StorageTimeout`);
    await page.reload();
    assert.equal(await page.getByLabel('Class').inputValue(), 'StorageTimeout');
    assert.equal(await page.locator('#total').textContent(), '1 error match');
    assert.equal(await rows().locator('td.number').textContent(), '60');

    await rows().getByRole('link', { name: 'StorageTimeout' }).click();
    const id = await idOf('StorageTimeout');
    assert.equal(page.url(), `${base}/console/errors/${id}`);
    assert.equal(await page.locator('h1').textContent(), 'StorageTimeout');
    assert.deepEqual(await page.locator('ol.frames li').allTextContents(), ['src/storage/volume.ts:88 in attach', 'src/server/routes/volumes.ts:31 in handler']);
    // The chart is drawn: 24 hourly bars, the busiest as tall as the plot.
    const bars = page.locator('svg.histogram rect.bar');
    assert.equal(await bars.count(), 24);
    const heights = (await Promise.all((await bars.all()).map((bar) => bar.getAttribute('height')))).map(Number);
    assert.equal(Math.max(...heights), 170);
    assert.ok((await page.locator('svg.histogram').boundingBox())!.width > 600);
    assert.equal(await page.locator('table.breakdown').first().locator('caption').textContent(), 'Host (3)');
    assert.equal(await page.locator('table.occurrences tbody tr').count(), 20);
    await page.getByRole('link', { name: '7 d' }).click();
    assert.equal(await bars.count(), 168);

    await page.getByRole('button', { name: 'Report', exact: true }).click();
    assert.equal(page.url(), `${base}/console/errors/${id}?notice=reported`);
    assert.equal(await page.locator('.notice').textContent(), 'Reported.');
    assert.equal(await page.locator('.badge').textContent(), 'Reported');

    await page.getByRole('link', { name: 'Delete…' }).click();
    assert.equal(await page.locator('h1').textContent(), `Delete error #${id}?`);
    await page.getByRole('button', { name: 'Delete' }).click();
    assert.equal(page.url(), `${base}/console/errors?notice=deleted&count=1`);
    assert.equal(await page.locator('.notice').textContent(), 'Deleted 1 error.');
    const gone = await t.app.inject({ method: 'GET', url: `${ERRORS}/${id}.json`, headers: { authorization: t.adminAuth } });
    assert.equal(gone.statusCode, 404);

    // Several at once: report two, then delete them (after the confirmation).
    await openFilters();
    await page.getByLabel('Text').fill('QuotaExceeded1');
    await page.getByRole('button', { name: 'Filter' }).click();
    assert.equal(await page.locator('#total').textContent(), '11 errors match');
    await page.getByLabel(`Select error ${await idOf('QuotaExceeded1')}`).check();
    await page.getByLabel(`Select error ${await idOf('QuotaExceeded10')}`).check();
    await bulk('Report selected');
    assert.equal(await page.locator('.notice').textContent(), 'Reported 2 errors.');
    assert.equal(await rows().filter({ hasText: 'yes' }).count(), 2);
    await page.getByLabel('Select all on this page').check();
    await bulk('Delete selected');
    assert.equal(await page.locator('h1').textContent(), 'Delete 11 errors?');
    await page.getByRole('button', { name: 'Delete' }).click();
    assert.equal(await page.locator('.notice').textContent(), 'Deleted 11 errors.');
    assert.equal(await page.locator('.empty').textContent(), 'No errors match these filters.');

    await page.getByRole('button', { name: 'Sign out' }).click();
    assert.equal(page.url(), `${base}/console/sign-in?signed_out=1`);
    await page.goto(`${base}/console/errors`);
    assert.match(page.url(), /\/console\/sign-in\?next=%2Fconsole%2Ferrors$/);
    assert.deepEqual(problems, []);
  });

  it('triages: opens on the unresolved, filters by component, resolves two selected, assigns one, adds a note with markup shown as text, and shows the activity', async () => {
    await seed();
    const first = await idOf('QuotaExceeded0');
    const resolvedBefore = await t.app.inject({ method: 'PUT', url: `${ERRORS}/${first}/triage.json`, headers: { authorization: t.adminAuth, 'content-type': 'application/json' }, payload: '{"triage":{"status":"resolved"}}' });
    assert.equal(resolvedBefore.statusCode, 200, resolvedBefore.body);
    await signIn(ADMIN.login, ADMIN.password);
    await page.getByRole('link', { name: 'Errors', exact: true }).click();
    assert.equal(page.url(), `${base}/console/errors`);
    assert.equal(await page.getByLabel('Status').inputValue(), '');
    assert.equal(await page.locator('#total').textContent(), '28 errors');
    assert.deepEqual([...new Set(await page.locator('td.triage-status').allTextContents())], ['unresolved']);

    await openFilters();
    await page.getByLabel('Component').fill('billing');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL(`${base}/console/errors?component=billing`);
    assert.equal(await page.locator('#total').textContent(), '26 errors match');
    assert.equal(await rows().filter({ hasText: 'QuotaExceeded0' }).count(), 0);
    const [one, two] = [await idOf('QuotaExceeded25'), await idOf('QuotaExceeded26')];
    await page.getByLabel(`Select error ${one}`).check();
    await page.getByLabel(`Select error ${two}`).check();
    await bulk('Resolve');
    await page.waitForURL(/notice=triaged/);
    assert.equal(await page.locator('.notice').textContent(), 'Resolved 2 errors.');
    assert.equal(await page.locator('#total').textContent(), '24 errors match');
    for (const id of [one, two]) {
      const triage = await t.app.inject({ method: 'GET', url: `${ERRORS}/${id}/triage.json`, headers: { authorization: t.adminAuth } });
      assert.match(triage.body, /"status":"resolved"/);
    }
    await openFilters();
    await page.getByLabel('Status').selectOption('resolved');
    await page.getByRole('button', { name: 'Filter' }).click();
    assert.deepEqual((await rows().locator('td:nth-child(2)').allTextContents()).sort(), ['QuotaExceeded0', 'QuotaExceeded25', 'QuotaExceeded26']);

    await rows().getByRole('link', { name: 'QuotaExceeded25', exact: true }).click();
    assert.equal(page.url(), `${base}/console/errors/${one}`);
    assert.equal(await page.locator('#triage-status').textContent(), 'resolved');
    await page.getByLabel('Assignee').selectOption({ label: 'admin (me)' });
    await page.getByRole('button', { name: 'Assign', exact: true }).click();
    assert.equal(page.url(), `${base}/console/errors/${one}?notice=triaged`);
    assert.equal(await page.locator('#triage-assignee').textContent(), 'admin');
    const note = '<b>bold</b> <script>alert("note")</script> & \'quoted\'';
    await page.getByLabel('New note').fill(note);
    await page.getByRole('button', { name: 'Add note' }).click();
    assert.equal(await page.locator('.notice').textContent(), 'Note added.');
    assert.equal(await page.locator('.note-body').textContent(), note);
    assert.equal(await page.locator('main b').count(), 0);
    assert.equal(await page.locator('main script').count(), 0);
    assert.deepEqual(await page.locator('ol.activity .what').allTextContents(), ['first seen', 'status unresolved → resolved', 'assigned no one → admin', 'added a note']);
    assert.deepEqual(problems, []);
  });

  it('creates a user (field errors beside the fields), suspends it, activates it, ends its sessions, gives it an API key, and ends one\'s own sessions', async () => {
    await signIn(ADMIN.email, ADMIN.password);
    await page.getByRole('link', { name: 'Users', exact: true }).click();
    await page.getByRole('link', { name: 'New user' }).click();
    await page.getByLabel('Login').fill('bob');
    await page.getByLabel('Email').fill('bob@example');
    await page.getByLabel('Password').fill('short');
    await page.getByRole('button', { name: 'Create user' }).click();
    assert.equal(await page.locator('#password-error').textContent(), 'password is too short (minimum is 8 characters)');
    assert.equal(await page.getByLabel('Login').inputValue(), 'bob');
    await page.getByLabel('Password').fill('bob-password');
    await page.getByRole('button', { name: 'Create user' }).click();
    assert.match(page.url(), /\/console\/users\/\d+\?notice=created$/);
    const bobPage = page.url().replace(/\?.*$/, '');
    assert.equal(await page.locator('h1 .status').textContent(), 'active');

    await page.getByRole('button', { name: 'Suspend' }).click();
    assert.equal(await page.locator('h1 .status').textContent(), 'suspended');
    const basic = t.basic('bob', 'bob-password');
    assert.equal((await t.app.inject({ method: 'GET', url: '/version.json', headers: { authorization: basic } })).statusCode, 401);
    await page.getByRole('button', { name: 'Activate' }).click();
    assert.equal(await page.locator('h1 .status').textContent(), 'active');

    // Ending bob's sessions ends the cookie his client holds, not his password (docs/security.md#ending-sessions).
    const bobSession = await login(t.app, basic);
    await page.getByRole('button', { name: 'End all sessions' }).click();
    assert.equal(page.url(), `${bobPage}?notice=sessions_ended`);
    assert.equal(await page.locator('.notice').textContent(), 'Every session of the user has ended: its browsers and API cookies sign in again (its password and API keys keep working).');
    assert.equal((await t.app.inject({ method: 'GET', url: '/version.json', headers: withCookie(bobSession) })).statusCode, 401);
    assert.equal((await t.app.inject({ method: 'GET', url: '/version.json', headers: { authorization: basic } })).statusCode, 200);

    // A new key needs the administrator's own current password (docs/security.md#self-service).
    await page.locator('#new-key-current_password').fill(ADMIN.password);
    await page.getByRole('button', { name: 'New API key' }).click();
    const key = await page.getByRole('textbox', { name: 'API key' }).inputValue();
    assert.match(key, /^[A-Za-z0-9_-]{20,}$/);
    await page.getByRole('button', { name: 'Copy' }).click();
    await page.locator('[data-copied-for="api-key"]', { hasText: 'Copied.' }).waitFor();
    assert.equal(await page.evaluate('navigator.clipboard.readText()'), key);
    const withKey = await t.app.inject({ method: 'GET', url: '/version.json', headers: { authorization: t.basic('bob@example', key) } });
    assert.equal(withKey.statusCode, 200);
    // Shown once: the page again has no key.
    await page.goto(bobPage);
    assert.equal(await page.getByRole('textbox', { name: 'API key' }).count(), 0);

    await page.getByRole('link', { name: 'Users', exact: true }).click();
    assert.deepEqual(await page.locator('table.users tbody td:first-child').allTextContents(), ['admin', 'alice', 'bob']);

    // One's own: this console session ends with the rest, and the sign-in page says so.
    await page.getByRole('link', { name: 'admin', exact: true }).click();
    await page.getByRole('button', { name: 'End all my sessions' }).click();
    assert.equal(new URL(page.url()).pathname + new URL(page.url()).search, '/console/sign-in?ended=1');
    await page.goto(bobPage);
    assert.equal(new URL(page.url()).pathname, '/console/sign-in');
    assert.deepEqual(problems, []);
  });

  it('creates a role with the permission picker and gives it to a user, who then sees the errors', async () => {
    await seed();
    await signIn(ADMIN.login, ADMIN.password);
    await page.getByRole('link', { name: 'Roles', exact: true }).click();
    assert.deepEqual(await page.locator('table.roles tbody td:first-child').allTextContents(), ['Administrator system', 'User system']);
    await page.getByRole('link', { name: 'New role' }).click();
    await page.getByLabel('Label').fill('Error <b>watchers</b>');
    // The script's "all" box of an area ticks its permissions; one is then unticked by hand.
    await page.getByLabel('All of infrastructure_errors.*').check();
    assert.deepEqual(await Promise.all((await page.locator('fieldset[data-area="infrastructure_errors"] input[name="permission_ids"]:checked').all()).map((box) => box.getAttribute('value'))), PERMISSIONS.filter(([, identifier]) => identifier.startsWith('infrastructure_errors.')).map(([id]) => String(id)));
    await page.getByLabel('Delete infrastructure errors').uncheck();
    assert.equal(await page.getByLabel('All of infrastructure_errors.*').isChecked(), false);
    await page.getByLabel('See the own user').check();
    await page.getByRole('button', { name: 'Create role' }).click();
    assert.match(page.url(), /\/console\/roles\/3\?notice=created$/);
    assert.equal(await page.locator('h1').textContent(), 'Error <b>watchers</b>');
    const role = JSON.parse((await t.app.inject({ method: 'GET', url: '/roles/3.json', headers: { authorization: t.adminAuth } })).body) as { role: { permissions: Array<{ permission: { identifier: string } }> } };
    const area = PERMISSIONS.map(([, identifier]) => identifier).filter((identifier) => identifier.startsWith('infrastructure_errors.') && identifier !== 'infrastructure_errors.delete');
    assert.deepEqual(role.role.permissions.map((p) => p.permission.identifier), ['users.read.own', ...area]);

    // Alice gets it on her page; her roles link to theirs.
    await page.getByRole('link', { name: 'Users', exact: true }).click();
    await page.getByRole('link', { name: 'alice' }).click();
    await page.getByRole('checkbox', { name: 'Error <b>watchers</b>' }).check();
    await page.getByRole('button', { name: 'Save' }).click();
    assert.match(page.url(), /\?notice=saved$/);
    assert.deepEqual(await page.locator('dd ul.inline li').allTextContents(), ['User', 'Error <b>watchers</b>']);
    await page.getByRole('link', { name: 'Error <b>watchers</b>' }).click();
    assert.match(page.url(), /\/console\/roles\/3$/);
    assert.equal(await page.locator('dl.fields dd').nth(2).textContent(), '1');
    // The picker holds at 390 px too.
    await page.setViewportSize(PHONE);
    assert.equal(await scrollWidth(), 390);
    await page.setViewportSize(WIDE);
    await page.getByRole('button', { name: 'Sign out' }).click();

    await signIn(ALICE.login, ALICE.password);
    await page.getByRole('link', { name: 'Errors', exact: true }).click();
    assert.equal(await page.locator('h1').textContent(), 'Errors');
    assert.equal(await page.getByRole('link', { name: 'Roles' }).count(), 0);
    assert.deepEqual(problems, []);
  });

  it('keeps a regular user from the errors, and refuses a forged cross-site POST', async () => {
    await seed();
    await signIn(ALICE.login, ALICE.password);
    assert.equal(page.url(), `${base}/console/users`);
    assert.equal(await page.locator('h1').textContent(), 'My account');
    assert.equal(await page.getByRole('link', { name: 'Errors' }).count(), 0);
    const refused = await page.goto(`${base}/console/errors`);
    assert.equal(refused?.status(), 403);
    assert.equal(await page.locator('h1').textContent(), 'Not allowed');
    assert.equal(await page.locator('table.errors').count(), 0);
    await page.getByRole('button', { name: 'Sign out' }).click();

    // An administrator signed in, then a page of another site (answered by the browser itself: no
    // request leaves) posts to the console in its name.
    await signIn(ADMIN.login, ADMIN.password);
    const id = await idOf('TemplateError');
    await context.route('http://evil.example/**', (route) => route.fulfill({
      contentType: 'text/html',
      body: `<form method="post" action="${base}/console/errors/${id}/delete"><input name="_csrf" value="guess"><button>Win a prize</button></form>`,
    }));
    await page.goto('http://evil.example/');
    await page.getByRole('button', { name: 'Win a prize' }).click();
    await page.waitForURL(`${base}/console/errors/${id}/delete`);
    assert.equal(await page.locator('h1').textContent(), 'That did not work');
    assert.match(await page.locator('.error').textContent() ?? '', /did not come from a page of this console/);
    const still = await t.app.inject({ method: 'GET', url: `${ERRORS}/${id}.json`, headers: { authorization: t.adminAuth } });
    assert.equal(still.statusCode, 200);
  });

  it('is readable at 390 px: nothing wider than the screen but the tables, which scroll', async () => {
    await seed();
    await page.setViewportSize(PHONE);
    await signIn(ADMIN.login, ADMIN.password);
    assert.equal(await scrollWidth(), 390);
    await page.goto(`${base}/console/errors/${await idOf('StorageTimeout')}`);
    assert.equal(await scrollWidth(), 390);
    const chart = await page.locator('svg.histogram').boundingBox();
    assert.ok(chart && chart.width <= 390 && chart.width > 300, JSON.stringify(chart));
    assert.deepEqual(problems, []);
  });

  it('lays the overview out with its figures and the day\'s chart in the first screen at 1280x800, and its figures at 390x844', async () => {
    await seed();
    await signIn(ADMIN.login, ADMIN.password);
    assert.equal(page.url(), `${base}/console/overview`);
    const figures = ['#figure-day', '#figure-week', '#figure-new', '#figure-regressions'];
    for (const figure of figures) assert.ok(await inFirstScreen(figure), `${figure} in the first screen`);
    assert.ok(await inFirstScreen('svg.histogram'), 'the 24 h chart in the first screen');
    assert.equal(await page.locator('#figure-day .figure-count').textContent(), String(60 + 27 + 1));
    await page.locator('#figure-new').click();
    assert.equal(await page.locator('h1').textContent(), 'Errors');
    await page.goBack();
    await page.setViewportSize(PHONE);
    assert.equal(await scrollWidth(), 390);
    for (const figure of figures) assert.ok(await inFirstScreen(figure), `${figure} in the first screen at 390 px`);
    assert.deepEqual(problems, []);
  });

  it('shows the errors list\'s first rows in the first screen: ten at 1280x800, eight at 390x844 with the filters and bulk actions folded', async () => {
    await seed();
    await signIn(ADMIN.login, ADMIN.password);
    await page.goto(`${base}/console/errors`);
    assert.ok(await countInFirstScreen('table.errors tbody tr td:nth-child(2)') >= 10, `${await countInFirstScreen('table.errors tbody tr td:nth-child(2)')} rows in the first screen at 1280 px`);
    await page.setViewportSize(PHONE);
    await page.goto(`${base}/console/errors`);
    assert.equal(await scrollWidth(), 390);
    assert.ok(await countInFirstScreen('table.errors tbody tr td:nth-child(2)') >= 8, `${await countInFirstScreen('table.errors tbody tr td:nth-child(2)')} rows in the first screen at 390 px`);
    for (const folded of ['#error_class', 'button[value="resolve"]', 'button[value="delete"]']) assert.equal(await page.locator(folded).isVisible(), false, `${folded} folded`);
    assert.ok(await inFirstScreen('details.filter-panel > summary') && await inFirstScreen('details.bulk-menu > summary'), 'the two buttons in the first screen');
    await openFilters();
    assert.ok(await page.locator('#error_class').isVisible(), 'the filters open');
    assert.equal(await scrollWidth(), 390);
    // A filter refused opens them by itself, its error beside the field.
    await page.goto(`${base}/console/errors?since=yesterday`);
    assert.ok(await page.locator('#since').isVisible(), 'open on a refused filter');
    assert.deepEqual(problems, []);
  });

  it('shows the audit log\'s changes as field: before → after, by name, the latest in the first screen at both widths', async () => {
    await signIn(ADMIN.login, ADMIN.password);
    const res = await t.app.inject({ method: 'PUT', url: `/users/${t.alice.id}.json`, headers: { authorization: t.adminAuth, 'content-type': 'application/json' }, payload: '{"user":{"first_name":"Alicia","last_name":"<b>Liddell</b>"}}' });
    assert.equal(res.statusCode, 204, res.body);
    for (const viewport of [WIDE, PHONE]) {
      await page.setViewportSize(viewport);
      await page.goto(`${base}/console/audit`);
      const latest = page.locator('table.audit tbody tr').first();
      assert.deepEqual(await latest.locator('ul.diff li').allTextContents(), ['first_name: Alice → Alicia', 'last_name: Smith → <b>Liddell</b>'].map((line) => line.replace('Smith', t.alice.last_name === '' ? 'none' : t.alice.last_name)));
      assert.equal(await latest.locator('td').nth(5).textContent(), 'user alice');
      assert.equal(await latest.locator('td').nth(5).locator('a').getAttribute('href'), `/console/users/${t.alice.id}`);
      assert.ok(await inFirstScreen('table.audit tbody tr:first-child td:nth-child(2)'), `the latest event's actor in the first screen at ${viewport.width} px`);
      assert.equal(await scrollWidth(), viewport.width);
    }
    assert.deepEqual(problems, []);
  });
});
