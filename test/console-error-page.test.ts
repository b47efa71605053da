import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { contextValues, frameOrigin } from '../src/console/errors-item-page.js';
import type { StoredOccurrence } from '../src/tracker/infrastructure-error.js';
import { ADMIN, ALICE, createTestApp, type TestApp } from './support/app.js';
import { PERMISSIONS } from '../src/roles/permissions.js';
import { ERRORS, report } from './support/error-reports.js';

// The error page's pieces (docs/console.md#one-error) as exact HTML and values, where a browser is
// not needed: whose code a frame runs, the context's distinct values, the summary, the navigator.

describe("the error page's frames and context", () => {
  it('tells the application\'s frames from the libraries\' and the runtime\'s, in Node, Python and Go', () => {
    const cases: Array<[string, string]> = [
      ["src/hypervisor/pool.ts:88:in 'allocate'", 'application'],
      ['at handler (/srv/cmi/dist/routes.js:10:5)', 'application'],
      ['at Module._compile (node:internal/modules/cjs/loader:1256:14)', 'runtime'],
      ['at node:fs:123:4', 'runtime'],
      ['at Object.run (/srv/cmi/node_modules/fastify/lib/route.js:12:3)', 'library'],
      ['File "/srv/app/worker.py", line 10, in run', 'application'],
      ['File "/usr/lib/python3.12/threading.py", line 1010, in run', 'runtime'],
      ['File "<frozen runpy>", line 198, in _run_module_as_main', 'runtime'],
      ['File "/srv/venv/lib/python3.12/site-packages/requests/api.py", line 59, in request', 'library'],
      ['/home/ci/src/cmi/agent/main.go:42 +0x1d', 'application'],
      ['runtime/panic.go:770 +0x132', 'runtime'],
      ['/usr/local/go/src/net/http/server.go:2171 +0x29', 'runtime'],
      ['$GOROOT/src/runtime/proc.go:271', 'runtime'],
      ['/root/go/pkg/mod/github.com/lib/pq@v1.10.9/conn.go:1 +0x5', 'library'],
    ];
    assert.deepEqual(cases.map(([line]) => [line, frameOrigin(line)]), cases);
  });

  it('counts each context key\'s distinct values over the occurrences, the most carried first', () => {
    const occurrence = (context: string | null, id: number): StoredOccurrence => ({ id, occurred_at: new Date(0), host: null, component: null, request_id: null, message: 'm', context });
    const values = contextValues([
      occurrence('{"event_id":"a","release":"1.2","tags":{"zone":"eu"},"user":{"id":"u1"}}', 1),
      occurrence('{"event_id":"b","release":"1.3","tags":{"zone":"eu"},"user":null}', 2),
      occurrence('{"event_id":"c","release":"1.3","deep":{"a":{"b":1}},"list":[1,2]}', 3),
      occurrence('not json', 4),
      occurrence(null, 5),
    ]);
    assert.deepEqual(values, [
      { key: 'release', values: [{ value: '1.3', count: 2 }, { value: '1.2', count: 1 }] },
      { key: 'tags.zone', values: [{ value: 'eu', count: 2 }] },
      { key: 'user.id', values: [{ value: 'u1', count: 1 }] },
      { key: 'deep.a', values: [{ value: '{"b":1}', count: 1 }] },
      { key: 'list', values: [{ value: '[1,2]', count: 1 }] },
    ]);
  });
});

describe("the error page's HTML", () => {
  let t: TestApp;
  let cookie: string;
  let id: number;
  const get = (url: string) => t.app.inject({ method: 'GET', url, headers: { cookie } });

  before(async () => {
    t = await createTestApp();
    t.time.set('2026-11-19T06:10:00.000Z');
    for (let i = 0; i < 25; i++) {
      const res = await report(t, { error_class: 'PoolExhausted', message: `pool <b>${i}</b>\nsecond line`, host: `hv-${i % 3}`, component: 'scheduler', context: { release: `1.${i % 2}`, attempt: i } });
      id = (JSON.parse(res.body) as { infrastructure_error: { id: number } }).infrastructure_error.id;
      t.time.advance(600);
    }
    const signIn = await t.app.inject({
      method: 'POST', url: '/console/sign-in', headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ login: ADMIN.login, password: ADMIN.password }).toString(),
    });
    cookie = String(signIn.headers['set-cookie']).split(';')[0] as string;
  });
  after(() => t.close());

  it('says how bad and since when in words, the exact time on hover', async () => {
    const page = await get(`/console/errors/${id}`);
    assert.equal(page.statusCode, 200);
    assert.ok(page.body.includes('<h1>PoolExhausted</h1>\n<p class="message" id="error-message">pool &lt;b&gt;24&lt;/b&gt;</p>'), 'the title: the class, the message\'s first line');
    assert.ok(page.body.includes(`<dl class="summary" id="summary">
<div><dt>Occurrences</dt><dd id="counter">25</dd></div>
<div><dt>First seen</dt><dd id="first-seen"><time datetime="2026-11-19T06:10:00+00:00" title="2026-11-19T06:10:00+00:00">4 h ago</time></dd></div>
<div><dt>Last seen</dt><dd id="last-seen"><time datetime="2026-11-19T10:10:00+00:00" title="2026-11-19T10:10:00+00:00">10 min ago</time></dd></div>
<div><dt>Hosts</dt><dd id="hosts-affected">3</dd></div>
<div><dt>Components</dt><dd id="components-affected">1</dd></div>
</dl>`));
    assert.ok(page.body.includes('<tr class="key-first"><th scope="row">release</th><td class="value"><code>1.0</code></td><td class="number">13</td></tr><tr><th scope="row"><span class="visually-hidden">release</span></th><td class="value"><code>1.1</code></td><td class="number">12</td></tr>'));
    assert.ok(page.body.includes('No alerts sent in this time.'));
    // The fingerprint and the raw fields are folded at the end, not in the first screen.
    assert.ok(page.body.indexOf('<details class="record">') > page.body.indexOf('id="occurrence"'));
  });

  it('shows one occurrence at a time, past the latest twenty too, and downloads it', async () => {
    const oldest = await get(`/console/errors/${id}?occurrence=24`);
    assert.ok(oldest.body.includes(`<nav class="occurrence-nav" aria-label="Occurrences"><a href="/console/errors/${id}?occurrence=0#occurrence" rel="first">« Newest</a> <a href="/console/errors/${id}?occurrence=23#occurrence" rel="prev">‹ Previous</a> <span class="disabled" aria-disabled="true">Next ›</span> <span class="disabled" aria-disabled="true">Oldest »</span></nav>`));
    assert.match(oldest.body, /<h2 id="occurrence-heading">Occurrence <span id="occurrence-position">25<\/span> of 25 kept<\/h2>/);
    assert.ok(oldest.body.includes('<tr><th scope="row">message</th><td class="pre">pool &lt;b&gt;0&lt;/b&gt;\nsecond line</td></tr>'));
    const listed = await t.app.inject({ method: 'GET', url: `${ERRORS}/${id}/occurrences.json?per_page=100`, headers: { authorization: t.adminAuth } });
    const occurrenceId = (JSON.parse(listed.body) as Array<{ occurrence: { id: number } }>).at(-1)!.occurrence.id;
    const download = await get(`/console/errors/${id}/occurrences/${occurrenceId}/message`);
    assert.equal(download.statusCode, 200);
    assert.equal(download.body, 'pool <b>0</b>\nsecond line');
    // Past the end or not a number: the oldest, or the newest.
    assert.match((await get(`/console/errors/${id}?occurrence=999`)).body, /occurrence-position">25</);
    assert.match((await get(`/console/errors/${id}?occurrence=x`)).body, /occurrence-position">1</);
    // The period is kept in the navigator's links.
    assert.ok((await get(`/console/errors/${id}?period=7d`)).body.includes(`href="/console/errors/${id}?period=7d&amp;occurrence=1#occurrence" rel="next"`));
  });

  it('names a note\'s author who may no longer be assigned errors, by login, never by id', async () => {
    const api = (method: 'POST' | 'PUT', url: string, body: unknown, authorization = t.adminAuth) =>
      t.app.inject({ method, url, headers: { authorization, 'content-type': 'application/json' }, payload: JSON.stringify(body) });
    const role = async (...identifiers: string[]) => {
      const ids = PERMISSIONS.filter(([, identifier]) => identifier === 'users.read.own' || identifiers.includes(identifier)).map(([permission]) => permission);
      const made = await api('POST', '/roles.json', { role: { label: `r ${identifiers.join(' ')}`, permission_ids: ids } });
      return (JSON.parse(made.body) as { role: { id: number } }).role.id;
    };
    assert.equal((await api('PUT', `/users/${t.alice.id}.json`, { user: { role_ids: [await role('infrastructure_errors.read', 'infrastructure_errors.notes')] } })).statusCode, 204);
    const basic = `Basic ${Buffer.from(`${ALICE.login}:${ALICE.password}`).toString('base64')}`;
    assert.equal((await api('POST', `${ERRORS}/${id}/notes.json`, { note: { body: 'seen on hv-1' } }, basic)).statusCode, 201);
    // Now she may read no errors: no longer offered as an assignee, still named.
    assert.equal((await api('PUT', `/users/${t.alice.id}.json`, { user: { role_ids: [await role()] } })).statusCode, 204);
    const page = await get(`/console/errors/${id}`);
    assert.match(page.body, /<p class="note-meta">alice, <time /);
    assert.ok(page.body.includes('<span class="actor">alice</span> <span class="what">added a note</span>'));
    assert.ok(!page.body.includes(`user #${t.alice.id}`));
    assert.ok(!page.body.includes(`<option value="${t.alice.id}"`), 'not offered as an assignee');
  });
});
