import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Page } from 'playwright-core';
import { startServer } from './shared/server-process.js';

/**
 * The console's screenshots in docs/ (docs/console.md), taken again: a real `cmi serve` on a database
 * of its own in a temporary directory, data reported through the API as a cloud would report it (a
 * week of storage timeouts over three hypervisors, a burst of quota errors, a regression, a triaged
 * error with a note, an alert destination whose deliveries fail), then Debian's Chromium
 * (playwright-core) signs in and photographs each page at 1280x800 and 390x844.
 *
 *   node --import tsx tools/console-screenshots.ts
 */

const DOCS = new URL('../docs/', import.meta.url);
const ADMIN = { login: 'admin', password: 'screenshots-admin-password' };
const WIDE = { width: 1280, height: 800 };
const PHONE = { width: 390, height: 844 };

const dir = mkdtempSync(join(tmpdir(), 'cmi-screenshots-'));
const server = await startServer({
  DATABASE_URL: `sqlite:${join(dir, 'cmi.sqlite3')}`, CMI_SPOOL_DIR: join(dir, 'spool'), CMI_ADMIN_LOGIN: ADMIN.login, CMI_ADMIN_PASSWORD: ADMIN.password,
  CMI_ALERT_ALLOWED_HOSTS: '127.0.0.1', CMI_WEBHOOK_POLL_INTERVAL: '200',
});
const auth = `Basic ${Buffer.from(`${ADMIN.login}:${ADMIN.password}`).toString('base64')}`;

async function api(method: string, path: string, body?: unknown): Promise<Record<string, { id: number }>> {
  const res = await fetch(`${server.baseUrl}${path}`, { method, headers: { authorization: auth, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
  return res.status === 204 ? {} : (await res.json()) as Record<string, { id: number }>;
}
const report = (fields: Record<string, unknown>) => api('POST', '/sysadmin_tools/infrastructure/errors.json', fields).then((r) => r['infrastructure_error']!.id);
const hoursAgo = (hours: number) => new Date(Date.now() - hours * 3_600_000).toISOString();

async function seed(): Promise<number> {
  // An alert destination at a port no one listens on, and a rule sending it every new error: its deliveries fail.
  await api('POST', '/sysadmin_tools/alert_destinations.json', { alert_destination: { label: 'Ops pager', kind: 'webhook', url: 'http://127.0.0.1:8099/hook', secret: 'screenshots-secret-0123456789' } });
  await api('POST', '/sysadmin_tools/alert_rules.json', { alert_rule: { label: 'Every new error', events: ['new'], destination_ids: [1] } });
  const hosts = ['hv-01', 'hv-02', 'hv-07'];
  let storage = 0;
  for (let hour = 7 * 24 - 1; hour >= 0; hour -= 1) {
    const n = (hour % 24 < 8 ? 1 : 3) + (hour % 5);
    for (let i = 0; i < n; i++) {
      storage = await report({
        error_class: 'StorageTimeout', message: `timeout after ${3000 + i * 250} ms attaching vol-${hour % 40}`, host: hosts[i % 3], component: i % 2 ? 'storage' : 'scheduler',
        backtrace: "src/storage/volume.ts:88:in 'attach'\nsrc/server/routes/volumes.ts:31:in 'handler'", context: { volume: `vol-${hour % 40}`, attempt: i }, occurred_at: hoursAgo(hour + 0.5),
      });
    }
  }
  for (let i = 0; i < 14; i++) await report({ error_class: `QuotaExceeded${i}`, message: `quota exceeded for tenant t-${100 + i}`, host: 'cp-01', component: 'billing', count: 1 + (i % 4) });
  await report({ error_class: 'DhcpLeaseFailed', message: 'no free lease in 10.0.4.0/24', host: 'net-02', component: 'network', count: 6, occurred_at: hoursAgo(30) });
  // A regression: resolved yesterday, seen again today.
  const dns = await report({ error_class: 'DnsResolutionFailed', message: 'SERVFAIL resolving api.internal', host: 'cp-02', component: 'network', occurred_at: hoursAgo(20) });
  await api('PUT', `/sysadmin_tools/infrastructure/errors/${dns}/triage.json`, { triage: { status: 'resolved' } });
  await report({ error_class: 'DnsResolutionFailed', message: 'SERVFAIL resolving api.internal', host: 'cp-02', component: 'network' });
  // Triage: assigned, with a note.
  await api('PUT', `/sysadmin_tools/infrastructure/errors/${storage}/triage.json`, { triage: { assignee_id: 1 } });
  await api('POST', `/sysadmin_tools/infrastructure/errors/${storage}/notes.json`, { note: { body: 'Started after the SAN firmware update on hv-07; vendor ticket 4471.' } });
  const bucket = await api('POST', '/billing/buckets.json', { bucket: { label: 'Resellers EU', currency_code: 'EUR', monthly_price: 20 } });
  const group = await api('POST', '/user_groups.json', { user_group: { label: 'Night shift' } });
  const operator = await api('POST', '/users.json', { user: { login: 'oksana', email: 'oksana@example.com', password: 'oksana-password', first_name: 'Oksana', last_name: 'Melnyk' } });
  await api('PUT', `/users/${operator['user']!.id}.json`, { user: { bucket_id: bucket['bucket']!.id, user_group_id: group['user_group']!.id, first_name: 'Oksana M.' } });
  return storage;
}

async function shoot(page: Page, path: string, name: string, fullPage = false): Promise<void> {
  await page.goto(`${server.baseUrl}${path}`);
  await page.screenshot({ path: new URL(name, DOCS).pathname, fullPage });
  console.log(`docs/${name}`);
}

const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox'] });
try {
  const storage = await seed();
  // The outbox tries the pager's deliveries in the background: a moment for the first tries to fail.
  await new Promise((resolve) => setTimeout(resolve, 2000));
  const context = await browser.newContext({ viewport: WIDE });
  const page = await context.newPage();
  await page.goto(`${server.baseUrl}/console/sign-in`);
  await page.fill('#login', ADMIN.login);
  await page.fill('#password', ADMIN.password);
  await Promise.all([page.waitForURL((url) => !url.pathname.startsWith('/console/sign-in')), page.press('#password', 'Enter')]);
  await shoot(page, '/console/overview', 'console-overview.png', true);
  await shoot(page, '/console/errors', 'console-errors.png');
  await shoot(page, `/console/errors/${storage}`, 'console-error.png', true);
  await shoot(page, `/console/errors/${storage}#triage`, 'console-triage.png');
  await shoot(page, '/console/roles/new', 'console-role.png', true);
  await shoot(page, '/console/audit', 'console-audit.png');
  await page.setViewportSize(PHONE);
  await shoot(page, '/console/overview', 'console-overview-390.png');
  await shoot(page, '/console/errors', 'console-errors-390.png');
  await shoot(page, `/console/errors/${storage}`, 'console-error-390.png');
  await context.close();
} finally {
  await browser.close();
  await server.stop();
  rmSync(dir, { recursive: true, force: true });
}
