import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type Browser, chromium, type Page } from 'playwright-core';
import { ADMIN, createTestApp, listenLocally, type TestApp } from './support/app.js';
import { report } from './support/error-reports.js';
import { eventually } from './support/eventually.js';
import { type WebhookReceiver, webhookReceiver } from './support/webhook-receiver.js';

// The error page's layout (docs/console.md#one-error) in Debian's Chromium (playwright-core) against
// one real cmi for the file: what is in the first screen at 1280x800, the folded frames, the context
// table, the occurrence navigator, and 390 px without horizontal scrolling.

const SECRET = 'error-page-secret';
const BACKTRACE = [
  "src/hypervisor/pool.ts:88:in 'allocate'",
  'at process.processTicksAndRejections (node:internal/process/task_queues:95:5)',
  'at Object.run (/srv/cmi/node_modules/fastify/lib/route.js:12:3)',
  "src/server/routes/pools.ts:31:in 'handler'",
].join('\n');

describe('the error page in a browser', { timeout: 300_000 }, () => {
  let browser: Browser;
  let receiver: WebhookReceiver;
  let t: TestApp;
  let base: string;
  let id: number;

  before(async () => {
    receiver = await webhookReceiver(SECRET);
    t = await createTestApp({ CMI_ALERT_WEBHOOK_URL: receiver.url, CMI_WEBHOOK_SECRET: SECRET, CMI_WEBHOOK_POLL_INTERVAL: '20', CMI_WEBHOOK_TIMEOUT: '1000' });
    base = `http://127.0.0.1:${await listenLocally(t.app)}`;
    browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox'] });
    // Eight occurrences over eight hours: six of release 1.4.2, two of 1.4.1, on two hosts.
    t.time.set('2026-11-19T06:10:00.000Z');
    for (let i = 0; i < 8; i++) {
      const res = await report(t, {
        error_class: 'PoolExhausted', message: `pool exhausted after ${i} tries`, host: i % 2 ? 'hv-02' : 'hv-01', component: 'scheduler', backtrace: BACKTRACE,
        context: { release: i < 2 ? '1.4.1' : '1.4.2', environment: 'production', tags: { zone: 'eu-1' }, user: { id: `u-${i % 3}` }, request: { method: 'POST', url: '/pools' }, attempt: i },
      });
      assert.ok(res.statusCode === 200 || res.statusCode === 201, res.body);
      id = (JSON.parse(res.body) as { infrastructure_error: { id: number } }).infrastructure_error.id;
      // The new error's alert, delivered (and so marked by the outbox) before the clock moves on.
      if (i === 0) {
        await eventually(async () => {
          const delivered = await t.app.inject({ method: 'GET', url: '/sysadmin_tools/infrastructure/deliveries.json?state=delivered', headers: { authorization: t.adminAuth } });
          assert.equal((JSON.parse(delivered.body) as unknown[]).length, 1, delivered.body);
        });
        assert.equal(receiver.received.length, 1);
      }
      t.time.advance(3600);
    }
  });
  after(async () => {
    await browser?.close();
    await t?.close();
    await receiver?.stop();
  });

  async function signedIn(width: number, height: number): Promise<Page> {
    const context = await browser.newContext({ viewport: { width, height } });
    await context.route('**/*', (route) => (new URL(route.request().url()).hostname === '127.0.0.1' ? route.continue() : route.abort()));
    const page = await context.newPage();
    await page.goto(`${base}/console/sign-in`);
    await page.fill('#login', ADMIN.login);
    await page.fill('#password', ADMIN.password);
    await Promise.all([page.waitForURL((url) => !url.pathname.startsWith('/console/sign-in')), page.press('#password', 'Enter')]);
    await page.goto(`${base}/console/errors/${id}`);
    return page;
  }

  it('answers what, how bad, where and since when in the first screen at 1280x800', async () => {
    const page = await signedIn(1280, 800);
    for (const selector of ['h1', '#error-message', '#triage-status', '#triage-assignee', '#triage-actions', '#counter', '#first-seen', '#last-seen', 'svg.histogram']) {
      const box = await page.locator(selector).boundingBox();
      assert.ok(box && box.y + box.height <= 800, `${selector}: ${JSON.stringify(box)}`);
    }
    assert.equal(await page.locator('h1').textContent(), 'PoolExhausted');
    assert.equal(await page.locator('#counter').textContent(), '8');
    assert.equal(await page.locator('#first-seen').textContent(), '8 h ago');
    assert.equal(await page.locator('#first-seen time').getAttribute('title'), '2026-11-19T06:10:00+00:00');
    assert.equal(await page.locator('#last-seen').textContent(), '1 h ago');
    assert.equal(await page.locator('#hosts-affected').textContent(), '2');
    // The new error's alert, marked at its hour; the axis in hours.
    assert.equal(await page.locator('svg.histogram .alert-mark').count(), 1);
    assert.equal(await page.locator('svg.histogram .alert-mark title').textContent(), 'new alert sent 2026-11-19T06:10:00+00:00');
    assert.deepEqual(await page.locator('svg.histogram text.time').allTextContents(), ['15:00', '18:00', '21:00', 'Nov 19', '03:00', '06:00', '09:00', '12:00']);
    assert.deepEqual(await page.locator('table.breakdown caption').allTextContents(), ['Host (2)', 'Component (1)', 'Release (2)', 'Environment (1)']);
    await page.context().close();
  });

  it('folds the runtime\'s and the libraries\' frames, which open on click', async () => {
    const page = await signedIn(1280, 800);
    const fold = page.locator('ol.frames li.folded details');
    assert.equal(await fold.count(), 1);
    assert.equal(await fold.locator('summary').textContent(), '2 library and runtime frames');
    const internal = fold.locator('ol.frames-other li').first();
    assert.equal(await internal.isVisible(), false);
    await fold.locator('summary').click();
    assert.equal(await internal.isVisible(), true);
    assert.equal(await internal.textContent(), 'at process.processTicksAndRejections (node:internal/process/task_queues:95:5)');
    assert.deepEqual(await page.locator('ol.frames > li:not(.folded)').allTextContents(), ['src/hypervisor/pool.ts:88 in allocate', 'src/server/routes/pools.ts:31 in handler']);
    await page.context().close();
  });

  it('shows each context value once with how many occurrences carried it', async () => {
    const page = await signedIn(1280, 800);
    const row = (value: string) => page.locator('table.context tbody tr').filter({ has: page.locator('td.value', { hasText: new RegExp(`^${value.replaceAll('.', '\\.')}$`) }) });
    assert.equal(await row('1.4.2').count(), 1);
    assert.equal(await row('1.4.2').locator('td.number').textContent(), '6');
    assert.equal(await row('1.4.1').locator('td.number').textContent(), '2');
    assert.equal(await row('production').locator('td.number').textContent(), '8');
    assert.equal(await row('eu-1').locator('th').textContent(), 'tags.zone');
    assert.equal(await page.locator('table.context caption').textContent(), 'Context of the 8 kept occurrences');
    await page.context().close();
  });

  it('moves between occurrences: newest, previous, next, oldest', async () => {
    const page = await signedIn(1280, 800);
    const position = () => page.locator('#occurrence-position').textContent();
    const message = () => page.locator('table.occurrence tr', { hasText: 'message' }).locator('td').textContent();
    assert.equal(await position(), '1');
    assert.equal(await message(), 'pool exhausted after 7 tries');
    await page.getByRole('link', { name: 'Next ›' }).click();
    assert.equal(await position(), '2');
    assert.equal(await message(), 'pool exhausted after 6 tries');
    await page.getByRole('link', { name: 'Oldest »' }).click();
    assert.equal(await position(), '8');
    assert.equal(await message(), 'pool exhausted after 0 tries');
    assert.equal(await page.locator('.occurrence-nav [aria-disabled="true"]').allTextContents().then((t) => t.join(',')), 'Next ›,Oldest »');
    await page.getByRole('link', { name: '‹ Previous' }).click();
    assert.equal(await position(), '7');
    await page.getByRole('link', { name: '« Newest' }).click();
    assert.equal(await position(), '1');
    await page.context().close();
  });

  it('is readable at 390 px without horizontal scrolling', async () => {
    const page = await signedIn(390, 844);
    assert.ok(await page.evaluate<number>('document.documentElement.scrollWidth') <= 390);
    await page.locator('ol.frames li.folded summary').click();
    assert.ok(await page.evaluate<number>('document.documentElement.scrollWidth') <= 390);
    await page.context().close();
  });
});
