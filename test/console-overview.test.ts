import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { PERMISSIONS } from '../src/roles/permissions.js';
import { logSourcesRepository } from '../src/logs/log-sources.store.js';
import { startSourceSilenceWatch } from '../src/logs/source-silence.js';
import { ALICE, createTestApp, type TestApp } from './support/app.js';
import { eventually } from './support/eventually.js';

// The console's overview (docs/console.md#overview), through app.inject(): each figure from the
// features' services over real data, a link to the list it counts, and only for a viewer whose
// permissions read it. Its layout in a browser is test/console-browser.test.ts.

const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
const ERRORS = '/sysadmin_tools/infrastructure/errors';

describe('the console\'s overview', () => {
  let t: TestApp;
  let admin: string;

  const api = (method: 'GET' | 'POST' | 'PUT', url: string, body?: unknown) => t.app.inject({
    method, url, headers: { authorization: t.adminAuth, ...(body === undefined ? {} : { 'content-type': 'application/json' }) }, ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
  });
  const report = async (fields: Record<string, string | number>) => {
    const res = await api('POST', `${ERRORS}.json`, fields);
    assert.ok(res.statusCode === 200 || res.statusCode === 201, res.body);
    return (JSON.parse(res.body) as { infrastructure_error: { id: number } }).infrastructure_error.id;
  };
  async function session(login: string, password: string): Promise<string> {
    const res = await t.app.inject({ method: 'POST', url: '/console/sign-in', headers: FORM, payload: new URLSearchParams({ login, password }).toString() });
    assert.equal(res.statusCode, 303, res.body);
    return String(res.headers['set-cookie']).split(';')[0] as string;
  }
  const overview = async (cookie: string) => {
    const res = await t.app.inject({ method: 'GET', url: '/console/overview', headers: { cookie } });
    assert.equal(res.statusCode, 200, res.body);
    return res.body;
  };
  /** A figure's number and link. */
  const figure = (body: string, id: string) => {
    const match = new RegExp(`<a class="figure" id="${id}" href="([^"]*)"><span class="figure-count">(\\d+)</span>`).exec(body);
    assert.ok(match, `no figure ${id}`);
    return [Number(match[2]), decodeURIComponent(match[1]!.replaceAll('&amp;', '&'))];
  };
  const items = (body: string, id: string) => {
    const list = new RegExp(`<(?:ol|ul) class="top" id="${id}">(.*?)</(?:ol|ul)>`, 's').exec(body);
    assert.ok(list, `no list ${id}`);
    return [...list[1]!.matchAll(/<li>(.*?)<\/li>/gs)].map((m) => decodeURIComponent(m[1]!).replace(/<time[^>]*>[^<]*<\/time>/g, '(time)').replaceAll('&amp;', '&'));
  };

  before(async () => {
    t = await createTestApp({ CMI_WEBHOOK_POLL_INTERVAL: '20', CMI_PUBLIC_URL: 'http://127.0.0.1:3000' });
    // Yesterday evening: seen in the last 24 h, not new today.
    t.time.set('2026-11-19T20:00:00Z');
    await report({ error_class: 'OldFault', message: 'old', host: 'hv-02', component: 'network', count: 2 });
    const gamma = await report({ error_class: 'GammaFault', message: 'g', host: 'hv-01', component: 'storage' });
    assert.equal((await api('PUT', `${ERRORS}/${gamma}/triage.json`, { triage: { status: 'resolved' } })).statusCode, 200);
    // Eight days ago: in no figure.
    t.time.set('2026-11-12T08:00:00Z');
    await report({ error_class: 'AncientFault', message: 'a', host: 'hv-09', component: 'billing', count: 50 });
    t.time.set('2026-11-20T09:30:00Z');
    await report({ error_class: 'AlphaFault', message: 'a', host: 'hv-01', component: 'storage', count: 5 });
    await report({ error_class: 'BetaFault', message: 'b', host: 'hv-03', component: 'scheduler', count: 3 });
    t.time.set('2026-11-20T10:00:00Z');
    await report({ error_class: 'GammaFault', message: 'g', host: 'hv-01', component: 'storage' });

    // A destination at an internal address (refused, so its delivery fails) and a rule for silent sources.
    const destination = await api('POST', '/sysadmin_tools/alert_destinations.json', { alert_destination: { label: 'Ops <pager>', kind: 'webhook', url: 'http://127.0.0.1:8089/hook', secret: 'overview-secret-0123456789' } });
    assert.equal(destination.statusCode, 201, destination.body);
    const rule = await api('POST', '/sysadmin_tools/alert_rules.json', { alert_rule: { label: 'Quiet', events: ['silent', 'back'], silent_minutes: 1, destination_ids: [1] } });
    assert.equal(rule.statusCode, 201, rule.body);
    await logSourcesRepository(t.database).add([
      { host: 'hv-7', program: 'nova-compute', component: 'nova', keyId: 1, lines: 10, errors: 0, firstAt: new Date('2026-11-20T09:00:00Z'), lastAt: new Date('2026-11-20T09:58:00Z') },
      { host: 'hv-8', program: 'sshd', component: null, keyId: 1, lines: 1, errors: 0, firstAt: new Date('2026-11-20T09:59:50Z'), lastAt: new Date('2026-11-20T09:59:50Z') },
    ]);
    const watch = startSourceSilenceWatch({ database: t.database, clock: t.time.clock, publicUrl: 'http://127.0.0.1:3000', wake: () => {}, onError: (error) => assert.fail(String(error)) });
    assert.equal(await watch.checkOnce(), 1);
    await watch.stop();
    await eventually(async () => {
      const row = await t.database.db.selectFrom('webhook_deliveries').select(['state', 'attempts', 'last_error']).executeTakeFirst();
      assert.deepEqual([row?.state, Number(row?.attempts) > 0], ['pending', true], 'the delivery failed once, and is tried again');
    });
    admin = await session('admin', 'admin-password');
  });
  after(() => t.close());

  it('is where /console lands, first in the navigation', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/console', headers: { cookie: admin } });
    assert.deepEqual([res.statusCode, res.headers.location], [303, '/console/overview']);
    const body = await overview(admin);
    assert.match(body, /<a class="brand" href="\/console">cmi<\/a>\n<a href="\/console\/overview">Overview<\/a>\n<a href="\/console\/errors">Errors<\/a>/);
  });

  it('counts the cloud\'s occurrences in 24 h and 7 d, the errors new today and the regressions, each a link to the list of what it counts', async () => {
    const body = await overview(admin);
    assert.deepEqual(figure(body, 'figure-day'), [2 + 1 + 5 + 3 + 1, '/console/errors?status=all&since=2026-11-19T10:00:00Z']);
    assert.deepEqual(figure(body, 'figure-week'), [12, '/console/errors?status=all&since=2026-11-13T10:00:00Z']);
    assert.deepEqual(figure(body, 'figure-new'), [2, '/console/errors?status=all&since=2026-11-20T00:00:00Z&sort=created_at']);
    assert.deepEqual(figure(body, 'figure-regressions'), [1, '/console/errors?since=2026-11-19T10:00:00Z']);
    assert.deepEqual(items(body, 'regressions'), ['<a href="/console/errors/2">GammaFault</a> (time)']);
    // The charts: 24 and 168 hourly bars, the last hour's the busiest of the day.
    assert.equal([...body.matchAll(/<rect class="bar"/g)].length, 24 + 168);
    assert.match(body, /<title>2026-11-20T09:00:00\+00:00: 8<\/title>/);
    // The list each link opens: the errors seen in the 24 h; for "new today", those seen today, the new first (by first seen).
    const day = await t.app.inject({ method: 'GET', url: encodeURI(figure(body, 'figure-day')[1] as string), headers: { cookie: admin } });
    assert.equal(day.headers['x-total'], '4');
    const today = await t.app.inject({ method: 'GET', url: encodeURI(figure(body, 'figure-new')[1] as string), headers: { cookie: admin } });
    assert.deepEqual([...today.body.matchAll(/<td><a href="\/console\/errors\/\d+">([^<]*)<\/a><\/td>/g)].map((m) => m[1]), ['BetaFault', 'AlphaFault', 'GammaFault']);
  });

  it('names the top hosts and components of the last 24 h by their occurrences, each a link to their errors', async () => {
    const body = await overview(admin);
    assert.deepEqual(items(body, 'top-hosts'), [
      '<a href="/console/errors?status=all&since=2026-11-19T10:00:00Z&host=hv-01">hv-01</a> <span class="number">7</span>',
      '<a href="/console/errors?status=all&since=2026-11-19T10:00:00Z&host=hv-03">hv-03</a> <span class="number">3</span>',
      '<a href="/console/errors?status=all&since=2026-11-19T10:00:00Z&host=hv-02">hv-02</a> <span class="number">2</span>',
    ]);
    assert.deepEqual(items(body, 'top-components').map((item) => /">([^<]+)<\/a> <span class="number">(\d+)/.exec(item)!.slice(1).join(' ')), ['storage 7', 'scheduler 3', 'network 2']);
  });

  it('names the destinations with failing deliveries (escaped), and the silent log sources', async () => {
    const body = await overview(admin);
    assert.deepEqual(items(body, 'deliveries'), ['<a href="/console/alerts/destinations/1">Ops &lt;pager&gt;</a>: 0 failed, 1 retrying']);
    assert.deepEqual(items(body, 'silent'), ['<a href="/console/sources?host=hv-7&program=nova-compute">hv-7 nova-compute</a>, last line (time)']);
  });

  it('shows each part only to a viewer whose permissions read it', async () => {
    const alice = await session(ALICE.login, ALICE.password);
    const none = await overview(alice);
    assert.doesNotMatch(none, /href="\/console\/overview"/);
    assert.match(none, /<p class="empty">Nothing here for your roles/);
    assert.doesNotMatch(none, /figure|Silent|deliveries/);
    assert.equal((await t.app.inject({ method: 'GET', url: '/console', headers: { cookie: alice } })).headers.location, '/console/users');

    const ids = PERMISSIONS.filter(([, identifier]) => ['users.read.own', 'infrastructure_errors.read'].includes(identifier)).map(([id]) => id);
    const role = await api('POST', '/roles.json', { role: { label: 'Reader', permission_ids: ids } });
    assert.equal(role.statusCode, 201, role.body);
    assert.equal((await api('PUT', `/users/${t.alice.id}.json`, { user: { role_ids: [(JSON.parse(role.body) as { role: { id: number } }).role.id] } })).statusCode, 204);
    const reader = await overview(alice);
    assert.equal(figure(reader, 'figure-day')[0], 12);
    assert.equal(items(reader, 'silent').length, 1);
    assert.doesNotMatch(reader, /Alert deliveries failing|Ops &lt;pager&gt;/);
  });
});
