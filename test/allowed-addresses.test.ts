import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { after, afterEach, before, beforeEach, describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { ConfigError, loadConfig } from '../src/config.js';
import type { Database } from '../src/db/database.js';
import { PERMISSIONS } from '../src/roles/permissions.js';
import { ADMIN, createTestApp, listenLocally, type TestApp } from './support/app.js';
import { runCmi } from './support/cli.js';
import { forbiddenJson, NOT_FOUND_JSON } from './support/error-reports.js';
import { callApi as call, withCookie } from './support/http.js';

// A user's allowed addresses, OnApp's user_white_lists (docs/security.md#allowed-addresses): the
// shapes the Go SDK (user_white_list.go) and the PHP wrapper (User/WhiteList.php) send and read,
// replayed here as they send them; who may change a list; and the refusal of every credential from
// any other address, from the verification cache too, behind trusted and untrusted proxies.

const XML_DECLARATION = '<?xml version="1.0" encoding="UTF-8"?>\n';
const START = '2026-11-20T10:00:00+00:00';
const ALLOWED = '192.0.2.9';
const ELSEWHERE = '198.51.100.7';
const refusedFrom = (address: string) =>
  JSON.stringify({ errors: { base: [`This account may be used only from its allowed addresses (user_white_lists); ${address} is not one of them`] } });

interface Entry { id: number; user_id: number; ip: string; description: string; created_at: string; updated_at: string }

const entryJson = (e: Entry) => JSON.stringify({ user_white_list: e });
const entryXml = (e: Entry, indent = '') => [
  `${indent}<user_white_list>`,
  `${indent}  <id type="integer">${e.id}</id>`,
  `${indent}  <user_id type="integer">${e.user_id}</user_id>`,
  `${indent}  <ip>${e.ip}</ip>`,
  e.description === '' ? `${indent}  <description></description>` : `${indent}  <description>${e.description}</description>`,
  `${indent}  <created_at type="datetime">${e.created_at}</created_at>`,
  `${indent}  <updated_at type="datetime">${e.updated_at}</updated_at>`,
  `${indent}</user_white_list>`,
].join('\n');

const idOf = (res: LightMyRequestResponse) => (JSON.parse(res.body) as { user_white_list: { id: number } }).user_white_list.id;

async function rows(database: Database) {
  return (await database.db.selectFrom('user_white_lists').selectAll().orderBy('id').execute()).map((row) => ({ ...row, id: Number(row.id), user_id: Number(row.user_id) }));
}

async function auditRows(database: Database, action: string) {
  const found = await database.db.selectFrom('audit_events').select(['actor_login', 'credential', 'address', 'action', 'target_type', 'target_id', 'changes']).where('action', '=', action).orderBy('id').execute();
  return found.map((row) => ({ ...row, target_id: row.target_id === null ? null : Number(row.target_id) }));
}

/** A role of the test's own holding `permissions`; its id. */
async function addRole(database: Database, identifier: string, permissions: string[]): Promise<number> {
  const { id } = await database.db.insertInto('roles').values({ label: identifier, identifier, created_at: START, updated_at: START }).returning('id').executeTakeFirstOrThrow();
  const ids = PERMISSIONS.filter(([, name]) => permissions.includes(name)).map(([permissionId]) => permissionId);
  await database.db.insertInto('role_permissions').values(ids.map((permission_id) => ({ role_id: Number(id), permission_id }))).execute();
  return Number(id);
}

describe('a user\'s allowed addresses: OnApp\'s shapes, as its clients send and read them', () => {
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp();
  });
  afterEach(() => t.close());

  it('the Go SDK: create (201, Location), list as an array of user_white_list, get, edit with the fields bare (204), delete with its meta as a query (204)', async () => {
    t.time.advance(60);
    // UserWhiteListCreateRequest under userWhiteListCreateRequestRoot, as encoding/json writes it.
    const created = await call(t.app, 'POST', '/users/2/user_white_lists.json', { auth: t.adminAuth, body: '{"user_white_list":{"description":"","ip":"192.0.2.0/24"}}' });
    assert.equal(created.statusCode, 201, created.body);
    assert.equal(created.headers['content-type'], 'application/json; charset=utf-8');
    const id = idOf(created);
    assert.equal(created.headers.location, `/users/2/user_white_lists/${id}.json`);
    const fields = { id, user_id: 2, ip: '192.0.2.0/24', description: '', created_at: '2026-11-20T10:01:00+00:00', updated_at: '2026-11-20T10:01:00+00:00' };
    assert.equal(created.body, entryJson(fields));
    assert.deepEqual(await rows(t.database), [{ id, user_id: 2, ip: '192.0.2.0/24', description: '', created_at: '2026-11-20T10:01:00.000Z', updated_at: '2026-11-20T10:01:00.000Z' }]);

    // List: what `var out []map[string]UserWhiteList` reads; paginated like the users.
    const list = await call(t.app, 'GET', '/users/2/user_white_lists.json?page=1&per_page=10', { auth: t.adminAuth });
    assert.equal(list.statusCode, 200, list.body);
    assert.equal(list.body, `[${entryJson(fields)}]`);
    assert.equal(list.headers['x-total'], '1');
    const one = await call(t.app, 'GET', `/users/2/user_white_lists/${id}.json`, { auth: t.adminAuth });
    assert.deepEqual([one.statusCode, one.body], [200, entryJson(fields)]);

    // Edit: UserWhiteListEditRequest is sent without its root.
    t.time.advance(60);
    const edited = await call(t.app, 'PUT', `/users/2/user_white_lists/${id}.json`, { auth: t.adminAuth, body: '{"description":"office","ip":"2001:DB8:0:0::/32"}' });
    assert.deepEqual([edited.statusCode, edited.body], [204, '']);
    const after = { ...fields, ip: '2001:db8::/32', description: 'office', updated_at: '2026-11-20T10:02:00+00:00' };
    assert.equal((await call(t.app, 'GET', `/users/2/user_white_lists/${id}.json`, { auth: t.adminAuth })).body, entryJson(after));

    const removed = await call(t.app, 'DELETE', `/users/2/user_white_lists/${id}.json?force=1`, { auth: t.adminAuth });
    assert.deepEqual([removed.statusCode, removed.body], [204, '']);
    assert.deepEqual(await rows(t.database), []);
    assert.equal((await call(t.app, 'GET', '/users/2/user_white_lists.json', { auth: t.adminAuth })).body, '[]');
    const gone = await call(t.app, 'GET', `/users/2/user_white_lists/${id}.json`, { auth: t.adminAuth });
    assert.deepEqual([gone.statusCode, gone.body], [404, NOT_FOUND_JSON]);

    const audit = await auditRows(t.database, 'user.white_list.create');
    assert.deepEqual(audit, [{ actor_login: 'admin', credential: 'password', address: '127.0.0.1', action: 'user.white_list.create', target_type: 'user', target_id: 2, changes: JSON.stringify({ white_list_id: id, ip: '192.0.2.0/24', description: '' }) }]);
    assert.deepEqual((await auditRows(t.database, 'user.white_list.update')).map((row) => row.changes), [JSON.stringify({ white_list_id: id, ip: ['192.0.2.0/24', '2001:db8::/32'], description: ['', 'office'] })]);
    assert.deepEqual((await auditRows(t.database, 'user.white_list.delete')).map((row) => row.changes), [JSON.stringify({ white_list_id: id, ip: '2001:db8::/32' })]);
  });

  it('the PHP wrapper: save() in JSON and in XML (every field it holds, user_id too), load() and getList() in XML, an edit that resends the fields it loaded', async () => {
    // OnApp_Helper_Caster_JSON: json_encode(array('user_white_list' => getFieldsToSend())).
    const json = await call(t.app, 'POST', '/users/2/user_white_lists.json', { auth: t.adminAuth, body: '{"user_white_list":{"user_id":2,"ip":"192.0.2.9","description":"home"}}' });
    assert.equal(json.statusCode, 201, json.body);
    const first = { id: idOf(json), user_id: 2, ip: '192.0.2.9', description: 'home', created_at: START, updated_at: START };
    assert.equal(json.body, entryJson(first));
    // OnApp_Helper_Caster_XML: SimpleXML's asXML() of the fields under the root.
    const xml = await call(t.app, 'POST', '/users/2/user_white_lists.xml', {
      auth: t.adminAuth, contentType: 'application/xml',
      body: '<?xml version="1.0" encoding="UTF-8"?>\n<user_white_list><user_id>2</user_id><ip>2001:db8::1</ip><description>v6 &amp; more</description></user_white_list>\n',
    });
    assert.equal(xml.statusCode, 201, xml.body);
    assert.equal(xml.headers['content-type'], 'application/xml; charset=utf-8');
    const secondId = first.id + 1;
    assert.equal(xml.headers.location, `/users/2/user_white_lists/${secondId}.xml`);
    const second = { id: secondId, user_id: 2, ip: '2001:db8::1', description: 'v6 &amp; more', created_at: START, updated_at: START };
    assert.equal(xml.body, `${XML_DECLARATION}${entryXml(second)}\n`);
    const list = await call(t.app, 'GET', '/users/2/user_white_lists.xml', { auth: t.adminAuth });
    assert.equal(list.body, `${XML_DECLARATION}<user_white_lists type="array">\n${entryXml(first, '  ')}\n${entryXml(second, '  ')}\n</user_white_lists>\n`);
    const loaded = await call(t.app, 'GET', `/users/2/user_white_lists/${first.id}.xml`, { auth: t.adminAuth });
    assert.equal(loaded.body, `${XML_DECLARATION}${entryXml(first)}\n`);
    // _edit(): the fields the object holds after load(), read-only ones too, under the root.
    const edit = await call(t.app, 'PUT', `/users/2/user_white_lists/${first.id}.json`, {
      auth: t.adminAuth, body: `{"user_white_list":{"id":${first.id},"created_at":"${START}","updated_at":"${START}","user_id":2,"ip":"192.0.2.10","description":"home"}}`,
    });
    assert.deepEqual([edit.statusCode, edit.body], [204, '']);
    assert.deepEqual((await rows(t.database)).map((row) => row.ip), ['192.0.2.10', '2001:db8::1']);
    const removed = await call(t.app, 'DELETE', `/users/2/user_white_lists/${secondId}.xml`, { auth: t.adminAuth });
    assert.deepEqual([removed.statusCode, removed.body], [204, '']);
  });

  it('validates: ip an address or CIDR range (422 naming ip, in JSON and XML), stored in its normal form, once a user; description bounded', async () => {
    const create = (body: unknown, format = 'json') => call(t.app, 'POST', `/users/2/user_white_lists.${format}`, { auth: t.adminAuth, body });
    const badIp = '{"errors":{"ip":["must be an IPv4 or IPv6 address or CIDR range (such as 192.0.2.10, 192.0.2.0/24, 2001:db8::/32)"]}}';
    for (const ip of ['not an address', '192.0.2.300', '192.0.2.0/33', '010.0.0.1', 'fe80::1%eth0', '2001:db8::/129', '192.0.2.0/-1', '192.0.2.0/08', '[::1]', 'x'.repeat(50)]) {
      const res = await create({ user_white_list: { ip, description: '' } });
      assert.deepEqual([res.statusCode, res.body], [422, ip.length > 49 ? '{"errors":{"ip":["is too long (maximum is 49 characters)"]}}' : badIp], ip);
    }
    assert.deepEqual([(await create({ user_white_list: { description: 'no ip' } })).body], ['{"errors":{"ip":["can\'t be blank"]}}']);
    assert.deepEqual([(await create({ user_white_list: { ip: 5 } })).body], ['{"errors":{"ip":["must be a string"]}}']);
    const long = await create({ user_white_list: { ip: '192.0.2.1', description: 'd'.repeat(256) } });
    assert.deepEqual([long.statusCode, long.body], [422, '{"errors":{"description":["is too long (maximum is 255 characters)"]}}']);
    const xml = await create({ user_white_list: { ip: 'nowhere' } }, 'xml');
    assert.deepEqual([xml.statusCode, xml.body], [422, `${XML_DECLARATION}<errors>\n  <error>Ip must be an IPv4 or IPv6 address or CIDR range (such as 192.0.2.10, 192.0.2.0/24, 2001:db8::/32)</error>\n</errors>\n`]);
    assert.deepEqual(await rows(t.database), []);

    // Normal forms: host bits cleared, IPv6 compressed and lower-case, an IPv4-mapped address as IPv4.
    for (const [given, stored] of [['192.0.2.77/24', '192.0.2.0/24'], ['2001:DB8:0:0:0:0:0:1', '2001:db8::1'], ['::ffff:203.0.113.4', '203.0.113.4'], [' 10.0.0.1 ', '10.0.0.1'], ['2001:db8::/128', '2001:db8::'], ['::/0', '::/0']]) {
      const res = await create({ user_white_list: { ip: given, description: '' } });
      assert.equal(res.statusCode, 201, `${given}: ${res.body}`);
      assert.equal((JSON.parse(res.body) as { user_white_list: { ip: string } }).user_white_list.ip, stored);
    }
    // The same range written another way is the same entry.
    const again = await create({ user_white_list: { ip: '192.0.2.1/24' } });
    assert.deepEqual([again.statusCode, again.body], [422, '{"errors":{"ip":["has already been taken"]}}']);
    const [firstRow, secondRow] = await rows(t.database);
    const clash = await call(t.app, 'PUT', `/users/2/user_white_lists/${secondRow!.id}.json`, { auth: t.adminAuth, body: { ip: '192.0.2.0/24' } });
    assert.deepEqual([clash.statusCode, clash.body], [422, '{"errors":{"ip":["has already been taken"]}}']);
    const badEdit = await call(t.app, 'PUT', `/users/2/user_white_lists/${firstRow!.id}.json`, { auth: t.adminAuth, body: { user_white_list: { ip: 'nowhere' } } });
    assert.deepEqual([badEdit.statusCode, badEdit.body], [422, badIp]);
    // Another user may hold the same range (the administrator keeps 0.0.0.0/0 first: ::/0 admits no IPv4 client).
    assert.equal((await call(t.app, 'POST', '/users/1/user_white_lists.json', { auth: t.adminAuth, body: { user_white_list: { ip: '0.0.0.0/0' } } })).statusCode, 201);
    assert.equal((await call(t.app, 'POST', '/users/1/user_white_lists.json', { auth: t.adminAuth, body: { user_white_list: { ip: '::/0' } } })).statusCode, 201);
    const unknown = await call(t.app, 'POST', '/users/999/user_white_lists.json', { auth: t.adminAuth, body: { user_white_list: { ip: '192.0.2.1' } } });
    assert.deepEqual([unknown.statusCode, unknown.body], [404, NOT_FOUND_JSON]);
    const unknownEntry = await call(t.app, 'PUT', '/users/2/user_white_lists/999.json', { auth: t.adminAuth, body: { ip: '192.0.2.1' } });
    assert.deepEqual([unknownEntry.statusCode, unknownEntry.body], [404, NOT_FOUND_JSON]);
  });
});

describe('who may read and change a list', () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp();
  });
  after(() => t.close());

  it('the user reads its own (users.read.own), never another\'s; changing needs users.update, not users.update.own; only for a user who holds nothing the actor lacks', async () => {
    const added = await call(t.app, 'POST', '/users/2/user_white_lists.json', { auth: t.adminAuth, body: { user_white_list: { ip: '127.0.0.0/8', description: 'here' } } });
    assert.equal(added.statusCode, 201, added.body);
    const id = idOf(added);
    const own = await call(t.app, 'GET', '/users/2/user_white_lists.json', { auth: t.aliceAuth });
    assert.equal(own.statusCode, 200, own.body);
    assert.equal((await call(t.app, 'GET', `/users/2/user_white_lists/${id}.json`, { auth: t.aliceAuth })).statusCode, 200);
    const others = await call(t.app, 'GET', '/users/1/user_white_lists.json', { auth: t.aliceAuth });
    assert.deepEqual([others.statusCode, others.body], [403, forbiddenJson('users.read')]);
    for (const [method, url, body] of [
      ['POST', '/users/2/user_white_lists.json', { user_white_list: { ip: '0.0.0.0/0' } }],
      ['PUT', `/users/2/user_white_lists/${id}.json`, { ip: '0.0.0.0/0' }],
      ['DELETE', `/users/2/user_white_lists/${id}.json`, undefined],
    ] as const) {
      const res = await call(t.app, method, url, { auth: t.aliceAuth, ...(body === undefined ? {} : { body }) });
      assert.deepEqual([res.statusCode, res.body], [403, forbiddenJson('users.update')], `${method} ${url}`);
    }
    // users.update without the administrator's other permissions: alice's list, not the administrator's.
    const [manager] = await t.addUsers(1);
    const managers = await addRole(t.database, 'user_managers', ['users.read', 'users.update', 'users.api_key']);
    await t.database.db.deleteFrom('user_roles').where('user_id', '=', manager!.id).execute();
    await t.database.db.insertInto('user_roles').values({ user_id: manager!.id, role_id: managers }).execute();
    const managerAuth = t.basic(manager!.login, 'shared-password');
    const forAlice = await call(t.app, 'POST', '/users/2/user_white_lists.json', { auth: managerAuth, body: { user_white_list: { ip: '10.0.0.0/8' } } });
    assert.equal(forAlice.statusCode, 201, forAlice.body);
    const forAdmin = await call(t.app, 'POST', '/users/1/user_white_lists.json', { auth: managerAuth, body: { user_white_list: { ip: '10.0.0.0/8' } } });
    assert.equal(forAdmin.statusCode, 403);
    assert.match(forAdmin.body, /^\{"errors":\{"base":\["You are not authorized to perform this action \(needs [a-z_.]+(, [a-z_.]+)*: user 1's allowed addresses guard its permissions\)"\]\}\}$/);
    assert.deepEqual((await rows(t.database)).map((row) => [row.user_id, row.ip]), [[2, '127.0.0.0/8'], [2, '10.0.0.0/8']]);
  });
});

describe('a user with allowed addresses is refused from any other, with every credential', () => {
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp();
  });
  afterEach(() => t.close());

  const allow = async (userId: number, ip: string) => {
    const res = await call(t.app, 'POST', `/users/${userId}/user_white_lists.json`, { auth: t.adminAuth, body: { user_white_list: { ip, description: '' } } });
    assert.equal(res.statusCode, 201, res.body);
    return idOf(res);
  };
  const version = (auth: string, from: string, headers: Record<string, string> = {}) => call(t.app, 'GET', '/version.json', { auth, from, headers });

  it('password (Basic) and API key: 403 naming the reason from another address, after a right password only; admitted from an allowed address, a CIDR range, IPv6 and IPv4-mapped IPv6; audited', async () => {
    const key = await call(t.app, 'POST', '/users/2/user_api_keys.json', { auth: t.adminAuth, body: { user_api_key: { description: 'ci' } } });
    const apiKey = (JSON.parse(key.body) as { user_api_key: { api_key: string } }).user_api_key.api_key;
    const keyAuth = t.basic('alice', apiKey);
    assert.equal((await version(t.aliceAuth, ELSEWHERE)).statusCode, 200, 'no list: any address');
    await allow(2, '192.0.2.0/24');
    await allow(2, '2001:db8::/32');
    for (const auth of [t.aliceAuth, keyAuth]) {
      const refused = await version(auth, ELSEWHERE);
      assert.deepEqual([refused.statusCode, refused.headers['content-type'], refused.body, refused.headers['set-cookie']], [403, 'application/json; charset=utf-8', refusedFrom(ELSEWHERE), undefined]);
      const refusedXml = await call(t.app, 'GET', '/version.xml', { auth, from: '2001:db9::1' });
      assert.deepEqual([refusedXml.statusCode, refusedXml.body], [403, `${XML_DECLARATION}<errors>\n  <error>This account may be used only from its allowed addresses (user_white_lists); 2001:db9::1 is not one of them</error>\n</errors>\n`]);
      for (const from of [ALLOWED, '192.0.2.200', '::ffff:192.0.2.9', '2001:db8::5', '2001:db8:ffff::1']) assert.equal((await version(auth, from)).statusCode, 200, from);
    }
    // A wrong password learns nothing of the list.
    const wrong = await version(t.basic('alice', 'wrong-password'), ELSEWHERE);
    assert.equal(wrong.statusCode, 401);
    // The administrator has no list: anywhere.
    assert.equal((await version(t.adminAuth, ELSEWHERE)).statusCode, 200);
    const refusals = await auditRows(t.database, 'user.access_refused');
    const changes = JSON.stringify({ reason: 'not an allowed address' });
    assert.deepEqual(refusals, [
      { actor_login: 'alice', credential: 'password', address: ELSEWHERE, action: 'user.access_refused', target_type: 'user', target_id: 2, changes },
      { actor_login: 'alice', credential: 'password', address: '2001:db9::1', action: 'user.access_refused', target_type: 'user', target_id: 2, changes },
      { actor_login: 'alice', credential: 'api_key', address: ELSEWHERE, action: 'user.access_refused', target_type: 'user', target_id: 2, changes },
      { actor_login: 'alice', credential: 'api_key', address: '2001:db9::1', action: 'user.access_refused', target_type: 'user', target_id: 2, changes },
    ]);
    // No secret in any refusal's row.
    const all = JSON.stringify(await t.database.db.selectFrom('audit_events').selectAll().execute());
    assert.ok(!all.includes(apiKey) && !all.includes('alice-password'));
  });

  it('an IPv6 range admits no IPv4 client, not even ::/0 (which covers ::ffff:0:0/96, the IPv4-mapped addresses)', async () => {
    await allow(2, '::/0');
    assert.deepEqual([(await version(t.aliceAuth, ELSEWHERE)).body], [refusedFrom(ELSEWHERE)]);
    assert.equal((await version(t.aliceAuth, '::ffff:198.51.100.7')).statusCode, 403);
    assert.equal((await version(t.aliceAuth, '2001:db8::5')).statusCode, 200);
  });

  it('the API\'s session cookie: a session opened at an allowed address is refused at another, from its cached verification too', async () => {
    await allow(2, '192.0.2.0/24');
    const opened = await version(t.aliceAuth, ALLOWED);
    assert.equal(opened.statusCode, 200);
    const token = /^_cmi_session=([^;]+)/.exec(String(opened.headers['set-cookie']))![1] as string;
    // Checked against the database once, then from the cache.
    assert.equal((await call(t.app, 'GET', '/users/2.json', { from: ALLOWED, headers: withCookie(token) })).statusCode, 200);
    assert.equal((await call(t.app, 'GET', '/users/2.json', { from: ALLOWED, headers: withCookie(token) })).statusCode, 200);
    const refused = await call(t.app, 'GET', '/users/2.json', { from: ELSEWHERE, headers: withCookie(token) });
    assert.deepEqual([refused.statusCode, refused.body], [403, refusedFrom(ELSEWHERE)]);
    assert.equal((await call(t.app, 'GET', '/users/2.json', { from: ALLOWED, headers: withCookie(token) })).statusCode, 200);
    assert.deepEqual((await auditRows(t.database, 'user.access_refused')).map((row) => [row.credential, row.address]), [['session', ELSEWHERE]]);
  });

  it('the console: sign-in refused at another address (403, the reason on the page), its session refused when it moves there', async () => {
    await allow(2, '192.0.2.0/24');
    const signIn = (from: string, password = 'alice-password') => t.app.inject({
      method: 'POST', url: '/console/sign-in', remoteAddress: from, headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: new URLSearchParams({ login: 'alice', password }).toString(),
    });
    const refused = await signIn(ELSEWHERE);
    assert.equal(refused.statusCode, 403);
    assert.equal(refused.headers['set-cookie'], undefined);
    assert.ok(refused.body.includes(`<p class="error" role="alert">This account may be used only from its allowed addresses (user_white_lists); ${ELSEWHERE} is not one of them</p>`), refused.body);
    assert.equal((await signIn(ELSEWHERE, 'wrong-password')).statusCode, 401);
    const signedIn = await signIn(ALLOWED);
    assert.equal(signedIn.statusCode, 303, signedIn.body);
    const cookie = /^(_cmi_console=[^;]+)/.exec(String(signedIn.headers['set-cookie']))![1] as string;
    assert.equal((await t.app.inject({ method: 'GET', url: '/console/users', remoteAddress: ALLOWED, headers: { cookie } })).statusCode, 200);
    const moved = await t.app.inject({ method: 'GET', url: '/console/users', remoteAddress: ELSEWHERE, headers: { cookie } });
    assert.equal(moved.statusCode, 403);
    assert.ok(moved.body.includes(`${ELSEWHERE} is not one of them`), moved.body);
    assert.deepEqual((await auditRows(t.database, 'user.access_refused')).map((row) => [row.credential, row.address]), [['password', ELSEWHERE], ['session', ELSEWHERE]]);
  });

  it('a list added while a Basic credential is cached refuses at once, in this process and in another; removing it admits again', async () => {
    const other = await t.secondProcess();
    try {
      for (const app of [t.app, other.app]) {
        for (let i = 0; i < 2; i++) assert.equal((await call(app, 'GET', '/version.json', { auth: t.aliceAuth, from: ELSEWHERE })).statusCode, 200);
      }
      const id = await allow(2, '192.0.2.0/24');
      for (const app of [t.app, other.app]) {
        const refused = await call(app, 'GET', '/version.json', { auth: t.aliceAuth, from: ELSEWHERE });
        assert.deepEqual([refused.statusCode, refused.body], [403, refusedFrom(ELSEWHERE)]);
      }
      // An edit moves the range, a removal lifts the list: each heard at once.
      const moved = await call(t.app, 'PUT', `/users/2/user_white_lists/${id}.json`, { auth: t.adminAuth, body: { ip: `${ELSEWHERE}` } });
      assert.equal(moved.statusCode, 204);
      for (const app of [t.app, other.app]) {
        assert.equal((await call(app, 'GET', '/version.json', { auth: t.aliceAuth, from: ELSEWHERE })).statusCode, 200);
        assert.equal((await call(app, 'GET', '/version.json', { auth: t.aliceAuth, from: ALLOWED })).statusCode, 403);
      }
      assert.equal((await call(t.app, 'DELETE', `/users/2/user_white_lists/${id}.json`, { auth: t.adminAuth })).statusCode, 204);
      for (const app of [t.app, other.app]) assert.equal((await call(app, 'GET', '/version.json', { auth: t.aliceAuth, from: ALLOWED })).statusCode, 200);
    } finally {
      await other.close();
    }
  });
});

/** One GET over a real socket to 127.0.0.1:`port`, sent from `localAddress`, with these headers. */
function getOverSocket(port: number, path: string, localAddress: string, headers: Record<string, string>): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path, localAddress, headers: { ...headers, connection: 'close' } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('behind proxies: X-Forwarded-For read hop by hop from the right, only from CMI_TRUSTED_PROXIES (real sockets)', () => {
  let t: TestApp;
  let port: number;
  before(async () => {
    t = await createTestApp({ CMI_TRUSTED_PROXIES: '127.0.0.1, 10.0.0.0/8' });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    port = (t.app.server.address() as { port: number }).port;
    const res = await call(t.app, 'POST', '/users/2/user_white_lists.json', { auth: t.adminAuth, body: { user_white_list: { ip: '192.0.2.0/24' } } });
    assert.equal(res.statusCode, 201);
  });
  after(() => t.close());

  const asAlice = (from: string, forwarded?: string) =>
    getOverSocket(port, '/version.json', from, { authorization: t.aliceAuth, ...(forwarded === undefined ? {} : { 'x-forwarded-for': forwarded }) });

  it('a trusted proxy\'s hops are believed as far as they are trusted; an untrusted peer\'s X-Forwarded-For is not; the audit trail records the address so worked out', async () => {
    // From the trusted proxy: the client is the first address from the right that is not a trusted proxy.
    assert.equal((await asAlice('127.0.0.1', ALLOWED)).status, 200);
    assert.equal((await asAlice('127.0.0.1', `203.0.113.5, ${ALLOWED}, 10.1.2.3`)).status, 200);
    const spoofed = await asAlice('127.0.0.1', `${ALLOWED}, ${ELSEWHERE}`);
    assert.deepEqual([spoofed.status, spoofed.body], [403, refusedFrom(ELSEWHERE)]);
    const throughUntrusted = await asAlice('127.0.0.1', `${ALLOWED}, ${ELSEWHERE}, 10.9.9.9`);
    assert.deepEqual([throughUntrusted.status, throughUntrusted.body], [403, refusedFrom(ELSEWHERE)]);
    // From a peer that is not a trusted proxy: its own address, whatever it wrote.
    const untrusted = await asAlice('127.0.0.2', ALLOWED);
    assert.deepEqual([untrusted.status, untrusted.body], [403, refusedFrom('127.0.0.2')]);
    // Text that is no address is never echoed.
    const junk = await asAlice('127.0.0.1', '<script>');
    assert.deepEqual([junk.status, junk.body], [403, JSON.stringify({ errors: { base: ['This account may be used only from its allowed addresses (user_white_lists); this address is not one of them'] } })]);
    assert.deepEqual((await auditRows(t.database, 'user.access_refused')).map((row) => row.address), [ELSEWHERE, ELSEWHERE, '127.0.0.2', '<script>']);
  });
});

describe('CMI_TRUST_PROXY keeps meaning one hop, from any peer (real sockets)', () => {
  let t: TestApp;
  let port: number;
  before(async () => {
    t = await createTestApp({ CMI_TRUST_PROXY: 'true' });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    port = (t.app.server.address() as { port: number }).port;
    assert.equal((await call(t.app, 'POST', '/users/2/user_white_lists.json', { auth: t.adminAuth, body: { user_white_list: { ip: ALLOWED } } })).statusCode, 201);
  });
  after(() => t.close());

  it('the last hop of X-Forwarded-For is the client, whichever peer sent it', async () => {
    assert.equal((await getOverSocket(port, '/version.json', '127.0.0.2', { authorization: t.aliceAuth, 'x-forwarded-for': `${ELSEWHERE}, ${ALLOWED}` })).status, 200);
    assert.equal((await getOverSocket(port, '/version.json', '127.0.0.1', { authorization: t.aliceAuth, 'x-forwarded-for': `${ALLOWED}, ${ELSEWHERE}` })).status, 403);
  });
});

describe('CMI_TRUSTED_PROXIES at start', () => {
  it('reads addresses and CIDR ranges in normal form; refuses anything else, and CMI_TRUST_PROXY beside it, with a message naming them', () => {
    assert.deepEqual(loadConfig({ CMI_TRUSTED_PROXIES: '10.0.0.1, 10.1.2.3/8,2001:DB8::/32,,::ffff:127.0.0.1' }).trustedProxies, ['10.0.0.1', '10.0.0.0/8', '2001:db8::/32', '127.0.0.1']);
    assert.deepEqual(loadConfig({}).trustedProxies, []);
    assert.throws(() => loadConfig({ CMI_TRUSTED_PROXIES: '10.0.0.1, proxy.example' }), (error: unknown) => error instanceof ConfigError && error.message === 'CMI_TRUSTED_PROXIES must list IP addresses or CIDR ranges separated by commas (got "proxy.example")');
    assert.throws(() => loadConfig({ CMI_TRUSTED_PROXIES: '10.0.0.1', CMI_TRUST_PROXY: 'true' }), (error: unknown) => error instanceof ConfigError && error.message === 'CMI_TRUST_PROXY and CMI_TRUSTED_PROXIES must not both be set: CMI_TRUST_PROXY believes whichever peer connects, CMI_TRUSTED_PROXIES only the proxies it lists (set one)');
    // Behind proxies every connection comes from a proxy: unset, the per-address cap is the total.
    const config = loadConfig({ CMI_TRUSTED_PROXIES: '10.0.0.1' });
    assert.equal(config.maxConnectionsPerAddress, config.maxConnections);
  });
});

describe('cmi users allow list|add|remove (docs/cli.md#allowed-addresses), through the typed client', () => {
  let t: TestApp;
  let env: Record<string, string>;
  before(async () => {
    t = await createTestApp();
    const url = `http://127.0.0.1:${await listenLocally(t.app)}`;
    env = { CMI_URL: url, CMI_USER: ADMIN.login, CMI_PASSWORD: ADMIN.password, CMI_API_KEY: '', CMI_PROFILE: '', XDG_CONFIG_HOME: '/nonexistent' };
  });
  after(() => t.close());

  it('adds, lists (a table, --json), refuses a bad address with the API\'s message, removes', async () => {
    const run = (args: string[]) => runCmi(['users', 'allow', ...args], env);
    assert.deepEqual(await run(['list', 'alice']), { code: 0, stdout: 'No allowed addresses: user 2 "alice" may be used from anywhere\n', stderr: '' });
    assert.deepEqual(await run(['add', 'alice', '192.0.2.77/24', '--description', 'office']), { code: 0, stdout: 'Allowed 192.0.2.0/24 (entry 1) for user 2 "alice"\n', stderr: '' });
    assert.deepEqual(await run(['add', 'alice', '127.0.0.1']), { code: 0, stdout: 'Allowed 127.0.0.1 (entry 2) for user 2 "alice"\n', stderr: '' });
    const bad = await run(['add', 'alice', 'office.example']);
    assert.deepEqual(bad, { code: 1, stdout: '', stderr: 'cmi: ip must be an IPv4 or IPv6 address or CIDR range (such as 192.0.2.10, 192.0.2.0/24, 2001:db8::/32)\n' });
    assert.deepEqual(await run(['list', 'alice']), {
      code: 0, stderr: '',
      stdout: [
        'ID  IP            DESCRIPTION  CREATED',
        `1   192.0.2.0/24  office       ${START}`,
        `2   127.0.0.1                  ${START}`,
        '2 allowed addresses of user 2 "alice": every other address is refused',
        '',
      ].join('\n'),
    });
    const json = await run(['list', 'alice', '--json']);
    assert.equal(json.stdout, `[${entryJson({ id: 1, user_id: 2, ip: '192.0.2.0/24', description: 'office', created_at: START, updated_at: START })},${entryJson({ id: 2, user_id: 2, ip: '127.0.0.1', description: '', created_at: START, updated_at: START })}]\n`);
    assert.deepEqual(await run(['remove', 'alice', '1']), { code: 0, stdout: 'Removed allowed address 1 of user 2 "alice"\n', stderr: '' });
    assert.deepEqual(await run(['remove', 'alice', 'x']), { code: 2, stdout: '', stderr: 'cmi: the entry is named by its id, a positive integer (got "x")\n' });
    assert.deepEqual((await rows(t.database)).map((row) => row.ip), ['127.0.0.1']);
  });
});

describe('the console\'s user page shows and changes the allowed addresses', () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp();
  });
  after(() => t.close());

  const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
  async function consoleCookie(login: string, password: string): Promise<string> {
    const res = await t.app.inject({ method: 'POST', url: '/console/sign-in', headers: FORM, payload: new URLSearchParams({ login, password }).toString() });
    assert.equal(res.statusCode, 303, res.body);
    return /^(_cmi_console=[^;]+)/.exec(String(res.headers['set-cookie']))![1] as string;
  }
  const csrfOf = (body: string) => /name="_csrf" value="([^"]+)"/.exec(body)![1] as string;
  const section = (body: string) => /<section aria-labelledby="allowed-heading">[\s\S]*?<\/section>/.exec(body)?.[0];

  it('an administrator adds (CSRF-checked), sees a refused address named, removes; the user sees its own list without the form', async () => {
    const cookie = await consoleCookie('admin', 'admin-password');
    const page = await t.app.inject({ method: 'GET', url: '/console/users/2', headers: { cookie } });
    assert.equal(page.statusCode, 200);
    assert.match(section(page.body)!, /<p class="muted">None: the account may be used from any address\.<\/p>/);
    const csrf = csrfOf(page.body);
    const post = (url: string, fields: Record<string, string>) => t.app.inject({ method: 'POST', url, headers: { ...FORM, cookie }, payload: new URLSearchParams(fields).toString() });

    const forged = await post('/console/users/2/allowed-addresses', { ip: '0.0.0.0/0', description: '' });
    assert.equal(forged.statusCode, 403);
    const added = await post('/console/users/2/allowed-addresses', { _csrf: csrf, ip: '127.0.0.9/8', description: 'loopback <lab>' });
    assert.deepEqual([added.statusCode, added.headers.location], [303, '/console/users/2?notice=address_allowed']);
    const bad = await post('/console/users/2/allowed-addresses', { _csrf: csrf, ip: 'lab.example', description: 'x' });
    assert.equal(bad.statusCode, 422);
    assert.ok(section(bad.body)!.includes('<span class="field-error" id="allow-ip-error">ip must be an IPv4 or IPv6 address or CIDR range (such as 192.0.2.10, 192.0.2.0/24, 2001:db8::/32)</span>'), section(bad.body));
    assert.ok(section(bad.body)!.includes('value="lab.example"'));
    const shown = await t.app.inject({ method: 'GET', url: '/console/users/2?notice=address_allowed', headers: { cookie } });
    const listed = section(shown.body)!;
    assert.ok(listed.includes('<td><code>127.0.0.0/8</code></td><td>loopback &lt;lab&gt;</td>'), listed);
    assert.ok(shown.body.includes('Address allowed: from now on, every other address is refused.'));

    // Alice, at an allowed address (the inject's 127.0.0.1), reads her own list; she may not change it.
    const aliceCookie = await consoleCookie('alice', 'alice-password');
    const own = section((await t.app.inject({ method: 'GET', url: '/console/users/2', headers: { cookie: aliceCookie } })).body)!;
    assert.ok(own.includes('<td><code>127.0.0.0/8</code></td>') && !own.includes('<form'), own);

    const [row] = await rows(t.database);
    const removed = await post(`/console/users/2/allowed-addresses/${row!.id}/remove`, { _csrf: csrf });
    assert.deepEqual([removed.statusCode, removed.headers.location], [303, '/console/users/2?notice=address_removed']);
    assert.deepEqual(await rows(t.database), []);
    assert.deepEqual((await auditRows(t.database, 'user.white_list.create')).map((r) => [r.actor_login, r.credential]), [['admin', 'session']]);
  });
});
