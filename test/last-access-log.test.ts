import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createTestApp, listenLocally, type TestApp } from './support/app.js';
import { eventually } from './support/eventually.js';
import { lastAccessLogRepository } from '../src/users/last-access-log.store.js';

// The last access log (docs/security.md#the-last-access-log): GET /users/:id/last_access_log, OnApp's
// `last_access_log_item` (id, user_id, ip, created_at, as the PHP wrapper reads it) with cmi's
// credential, user_agent and success; one row per verification (never per request answered from the
// verification cache), failures of known users too, written apart from the requests.

interface Item { id: number; user_id: number; ip: string; created_at: string; credential: string; user_agent: string | null; success: boolean }

describe('the last access log', () => {
  let t: TestApp;
  let base: string;
  before(async () => {
    t = await createTestApp({ CMI_LOCKOUT_MAX_FAILURES: '2' });
    base = `http://127.0.0.1:${await listenLocally(t.app)}`;
  });
  after(() => t.close());

  const send = async (path: string, headers: Record<string, string>, init: { method?: string; body?: string } = {}) => {
    const res = await fetch(`${base}${path}`, { method: init.method ?? 'GET', headers, redirect: 'manual', ...(init.body === undefined ? {} : { body: init.body }) });
    return { status: res.status, body: await res.text(), headers: res.headers };
  };
  const rowsOf = async (userId: number): Promise<Item[]> => {
    const res = await send(`/users/${userId}/last_access_log.json?per_page=1000`, { authorization: t.adminAuth, 'user-agent': 'reader' });
    assert.equal(res.status, 200, res.body);
    return (JSON.parse(res.body) as Array<{ last_access_log_item: Item }>).map((row) => row.last_access_log_item);
  };
  /** Alice's rows once there are `count` of them (they are written apart from the requests, within a second or so). */
  const aliceRows = (count: number) => eventually(async () => {
    const rows = await rowsOf(t.alice.id);
    assert.equal(rows.length, count, JSON.stringify(rows));
    return rows;
  });
  const at = () => t.time.clock().toISOString().replace(/\.\d{3}Z$/, '+00:00');

  it('a Basic sign-in is one row, however many requests the verification cache then answers', async () => {
    for (let i = 0; i < 5; i++) assert.equal((await send('/version.json', { authorization: t.aliceAuth, 'user-agent': 'onapp-php-wrapper/6.5' })).status, 200);
    const rows = await aliceRows(1);
    assert.deepEqual(rows, [{ id: rows[0]?.id, user_id: t.alice.id, ip: '127.0.0.1', created_at: at(), credential: 'password', user_agent: 'onapp-php-wrapper/6.5', success: true }]);
  });

  it('a wrong password of a known user is a failure; an unknown login writes nothing', async () => {
    assert.equal((await send('/version.json', { authorization: t.basic('nobody', 'x-password') })).status, 401);
    assert.equal((await send('/version.json', { authorization: t.basic('alice', 'wrong-password'), 'user-agent': 'guesser' })).status, 401);
    const rows = await aliceRows(2);
    assert.deepEqual(rows[1], { id: rows[1]?.id, user_id: t.alice.id, ip: '127.0.0.1', created_at: at(), credential: 'password', user_agent: 'guesser', success: false });
    assert.equal((await t.database.db.selectFrom('last_access_log').select('id').execute()).length, 2 + (await rowsOf(t.admin.id)).length);
  });

  it('an API key is credential api_key; a console sign-in is credential console, its user agent bounded to 255 characters', async () => {
    const made = await send(`/users/${t.alice.id}/make_new_api_key.json`, { authorization: t.aliceAuth, 'content-type': 'application/json' }, { method: 'POST', body: '{}' });
    assert.equal(made.status, 200, made.body);
    const apiKey = (JSON.parse(made.body) as { user: { api_key: string } }).user.api_key;
    assert.equal((await send('/version.json', { authorization: t.basic('alice', apiKey), 'user-agent': 'terraform' })).status, 200);
    const longAgent = `Mozilla/5.0 ${'x'.repeat(400)}`;
    const signedIn = await send('/console/sign-in', { 'content-type': 'application/x-www-form-urlencoded', 'user-agent': longAgent }, { method: 'POST', body: 'login=alice&password=alice-password' });
    assert.equal(signedIn.status, 303);
    // make_new_api_key was answered from the verification cache: no row of its own.
    const rows = await aliceRows(4);
    assert.deepEqual(rows.slice(2).map(({ credential, user_agent, success }) => ({ credential, user_agent, success })), [
      { credential: 'api_key', user_agent: 'terraform', success: true },
      { credential: 'console', user_agent: longAgent.slice(0, 255), success: true },
    ]);
  });

  it('a wrong password of a known user is a failure; the lockout\'s refusals are not written (no flood pushes the real sign-ins out)', async () => {
    const before = (await rowsOf(t.alice.id)).length;
    const statuses = [];
    for (let i = 0; i < 4; i++) statuses.push((await send('/version.json', { authorization: t.basic('alice', `wrong-${i}`) })).status);
    assert.deepEqual(statuses, [401, 401, 429, 429]);
    // Once the lock has passed, a right password: its row follows the two failures, with no refusal between.
    t.time.advance(24 * 3600);
    assert.equal((await send('/version.json', { authorization: t.aliceAuth })).status, 200);
    const rows = await aliceRows(before + 3);
    assert.deepEqual(rows.slice(before).map((row) => row.success), [false, false, true]);
  });

  it('answers JSON and XML with OnApp\'s root, paginated like users', async () => {
    const rows = await rowsOf(t.alice.id);
    const page = await send(`/users/${t.alice.id}/last_access_log.json/page/2/per_page/2`, { authorization: t.adminAuth });
    assert.equal(page.status, 200);
    assert.equal(page.headers.get('x-total'), String(rows.length));
    assert.equal(page.headers.get('x-limit'), '2');
    assert.equal(page.headers.get('x-page'), '2');
    const second = rows.slice(2, 4).map((row) => ({ last_access_log_item: row }));
    assert.equal(page.body, JSON.stringify(second));
    assert.ok((page.headers.get('link') ?? '').startsWith(`</users/${t.alice.id}/last_access_log.json/page/1/per_page/2>; rel="first", </users/${t.alice.id}/last_access_log.json/page/1/per_page/2>; rel="prev"`), page.headers.get('link') ?? '');

    const xml = await send(`/users/${t.alice.id}/last_access_log.xml?per_page=1`, { authorization: t.adminAuth });
    const first = rows[0] as Item;
    assert.equal(xml.body, [
      '<?xml version="1.0" encoding="UTF-8"?>',
      '<last_access_log_items type="array">',
      '  <last_access_log_item>',
      `    <id type="integer">${first.id}</id>`,
      `    <user_id type="integer">${t.alice.id}</user_id>`,
      '    <ip>127.0.0.1</ip>',
      `    <created_at type="datetime">${first.created_at}</created_at>`,
      '    <credential>password</credential>',
      '    <user_agent>onapp-php-wrapper/6.5</user_agent>',
      '    <success type="boolean">true</success>',
      '  </last_access_log_item>',
      '</last_access_log_items>',
      '',
    ].join('\n'));
  });

  it('the console shows the latest sign-ins on the user\'s page, newest first', async () => {
    const signedIn = await send('/console/sign-in', { 'content-type': 'application/x-www-form-urlencoded', 'user-agent': '<b>agent</b>' }, { method: 'POST', body: 'login=admin&password=admin-password' });
    assert.equal(signedIn.status, 303);
    const cookie = (signedIn.headers.get('set-cookie') ?? '').split(';')[0] as string;
    const rows = (await rowsOf(t.alice.id)).reverse();
    const page = await send(`/console/users/${t.alice.id}`, { cookie });
    assert.equal(page.status, 200);
    const section = /<section aria-labelledby="access-heading">[\s\S]*?<\/section>/.exec(page.body)?.[0] ?? '';
    const body = /<tbody>([\s\S]*)<\/tbody>/.exec(section)?.[1] ?? '';
    const cells = [...body.matchAll(/<tr>([\s\S]*?)<\/tr>/g)].map((tr) => [...(tr[1] as string).matchAll(/<td>([\s\S]*?)<\/td>/g)].map((td) => (td[1] as string).replace(/<[^>]+>/g, '')).slice(1, 4));
    const how: Record<string, string> = { password: 'Password', api_key: 'API key', console: 'Console' };
    assert.deepEqual(cells, rows.map((row) => [row.ip, how[row.credential], row.success ? 'Signed in' : 'Refused']));
    // The admin's own page shows its console sign-in, its user agent escaped.
    const own = await eventually(async () => {
      const body = (await send(`/console/users/${t.admin.id}`, { cookie })).body;
      assert.ok(body.includes('&lt;b&gt;agent&lt;/b&gt;'), 'the sign-in is written');
      return body;
    });
    assert.ok(!own.includes('<b>agent</b>'));
  });

  it('users.read sees anyone\'s; an unknown user is 404', async () => {
    const adminAsks = await send(`/users/${t.admin.id}/last_access_log.json`, { authorization: t.adminAuth });
    assert.equal(adminAsks.status, 200);
    const missing = await send('/users/999999/last_access_log.json', { authorization: t.adminAuth });
    assert.equal(missing.status, 404);
    assert.equal(missing.body, '{"errors":{"base":["Resource not found"]}}');
  });
});

describe('the last access log\'s permissions and retention', () => {
  let t: TestApp;
  let base: string;
  before(async () => {
    t = await createTestApp();
    base = `http://127.0.0.1:${await listenLocally(t.app)}`;
  });
  after(() => t.close());

  it('a user reads its own log and is refused another\'s', async () => {
    const own = await fetch(`${base}/users/${t.alice.id}/last_access_log.json`, { headers: { authorization: t.aliceAuth } });
    assert.equal(own.status, 200);
    const others = await fetch(`${base}/users/${t.admin.id}/last_access_log.json`, { headers: { authorization: t.aliceAuth } });
    assert.equal(others.status, 403);
    assert.equal(await others.text(), '{"errors":{"base":["You are not authorized to perform this action (needs users.read)"]}}');
  });

  it('keeps the latest N rows of each user, and only of the users written', async () => {
    const repository = lastAccessLogRepository(t.database);
    const entry = (userId: number, i: number) => ({ userId, ip: `10.0.0.${i % 250}`, credential: 'password' as const, userAgent: null, success: true, at: new Date(Date.UTC(2026, 0, 1, 0, 0, i)) });
    await repository.insert(Array.from({ length: 7 }, (_, i) => entry(t.admin.id, i)), 100);
    await repository.insert(Array.from({ length: 12 }, (_, i) => entry(t.alice.id, i)), 5);
    assert.equal(await repository.count(t.alice.id), 5);
    assert.deepEqual((await repository.page(t.alice.id, 10, 0)).map((row) => row.ip), ['10.0.0.7', '10.0.0.8', '10.0.0.9', '10.0.0.10', '10.0.0.11']);
    assert.ok((await repository.count(t.admin.id)) >= 7);
    // A user deleted meanwhile: its entries are skipped.
    await repository.insert([entry(999_999, 1)], 5);
    assert.equal(await repository.count(999_999), 0);
  });
});
