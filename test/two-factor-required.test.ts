import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { authenticator } from 'otplib';
import { callApi as call } from './support/http.js';
import { ALICE, createTestApp, type TestApp } from './support/app.js';

const XML_DECLARATION = '<?xml version="1.0" encoding="UTF-8"?>\n';
const REQUIRED_JSON = '{"errors":{"base":["A role of this account requires a second factor: enrol at /users/2/two_factor.json (POST, then PUT the code to confirm), then use an API key or the console (docs/security.md#second-factor)"]}}';

describe('a role requiring a second factor (requires_two_factor)', () => {
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp();
  });
  afterEach(() => t.close());

  const codeOf = (secret: string) => authenticator.clone({ epoch: t.time.clock().getTime() }).generate(secret);
  /** Role 3, requiring a second factor, with no permissions. */
  const strictRole = async () => {
    const made = await call(t.app, 'POST', '/roles.json', { auth: t.adminAuth, body: { role: { label: 'Staff', requires_two_factor: true } } });
    assert.equal(made.statusCode, 201, made.body);
    return made;
  };
  /** Alice holding her role and role 3. */
  const aliceHoldsStrictRole = async () => {
    await strictRole();
    const res = await call(t.app, 'PUT', '/users/2.json', { auth: t.adminAuth, body: { user: { role_ids: [2, 3] } } });
    assert.equal(res.statusCode, 204, res.body);
  };

  it('shapes the flag in JSON and XML: false unless given, changed by PUT (JSON or XML), refused when not a boolean', async () => {
    const made = await strictRole();
    const role = (JSON.parse(made.body) as { role: Record<string, unknown> }).role;
    assert.deepEqual(Object.keys(role), ['id', 'label', 'identifier', 'system', 'requires_two_factor', 'users_count', 'created_at', 'updated_at', 'permissions']);
    assert.equal(role.requires_two_factor, true);
    const plain = JSON.parse((await call(t.app, 'GET', '/roles/2.json', { auth: t.adminAuth })).body) as { role: Record<string, unknown> };
    assert.equal(plain.role.requires_two_factor, false);
    const xml = '<role><requires_two_factor>false</requires_two_factor></role>';
    assert.equal((await call(t.app, 'PUT', '/roles/3.xml', { auth: t.adminAuth, body: xml, contentType: 'application/xml' })).statusCode, 204);
    const asXml = (await call(t.app, 'GET', '/roles/3.xml', { auth: t.adminAuth })).body;
    assert.ok(asXml.startsWith(`${XML_DECLARATION}<role>\n  <id type="integer">3</id>\n  <label>Staff</label>\n  <identifier>staff</identifier>\n  <system type="boolean">false</system>\n  <requires_two_factor type="boolean">false</requires_two_factor>\n  <users_count type="integer">0</users_count>\n`), asXml);
    const bad = await call(t.app, 'PUT', '/roles/3.json', { auth: t.adminAuth, body: { role: { requires_two_factor: 'maybe' } } });
    assert.deepEqual([bad.statusCode, bad.body], [422, '{"errors":{"requires_two_factor":["must be true or false"]}}']);
    const row = await t.database.db.selectFrom('roles').select('requires_two_factor').where('id', '=', 3).executeTakeFirstOrThrow();
    assert.equal(Number(row.requires_two_factor), 0);
  });

  it('refuses a holder without a factor (403 naming the reason, in JSON and XML) but for its own two_factor endpoints and signing out', async () => {
    await aliceHoldsStrictRole();
    const refused = await call(t.app, 'GET', '/users/2.json', { auth: t.aliceAuth });
    assert.deepEqual([refused.statusCode, refused.body], [403, REQUIRED_JSON]);
    const refusedXml = await call(t.app, 'GET', '/users/2.xml', { auth: t.aliceAuth });
    assert.equal(refusedXml.statusCode, 403);
    assert.match(refusedXml.body, /A role of this account requires a second factor: enrol at \/users\/2\/two_factor.json/);
    // Someone else's two_factor is no way out.
    assert.equal((await call(t.app, 'GET', '/users/1/two_factor.json', { auth: t.aliceAuth })).statusCode, 403);
    assert.equal((await call(t.app, 'GET', '/users/2/two_factor.json', { auth: t.aliceAuth })).statusCode, 200);
    assert.equal((await call(t.app, 'DELETE', '/session.json', { auth: t.aliceAuth })).statusCode, 204);
    // An API key does not stand in for the factor the role requires.
    const key = (JSON.parse((await call(t.app, 'POST', '/users/2/user_api_keys.json', { auth: t.adminAuth, body: { user_api_key: { description: 'ci' } } })).body) as { user_api_key: { api_key: string } }).user_api_key.api_key;
    const keyAuth = `Basic ${Buffer.from(`alice:${key}`).toString('base64')}`;
    const byKey = await call(t.app, 'GET', '/users/2.json', { auth: keyAuth });
    assert.deepEqual([byKey.statusCode, byKey.body], [403, REQUIRED_JSON]);
    // The administrator, holding no such role, is not affected.
    assert.equal((await call(t.app, 'GET', '/users/2.json', { auth: t.adminAuth })).statusCode, 200);
  });

  it('requires the factor of a holder through its user group too', async () => {
    await strictRole();
    const group = await call(t.app, 'POST', '/user_groups.json', { auth: t.adminAuth, body: { user_group: { label: 'Ops', role_ids: [3] } } });
    assert.equal(group.statusCode, 201, group.body);
    const groupId = (JSON.parse(group.body) as { user_group: { id: number } }).user_group.id;
    assert.equal((await call(t.app, 'PUT', '/users/2.json', { auth: t.adminAuth, body: { user: { user_group_id: groupId } } })).statusCode, 204);
    assert.deepEqual([(await call(t.app, 'GET', '/users/2.json', { auth: t.aliceAuth })).body], [REQUIRED_JSON]);
  });

  it('lifts once the holder enrols and confirms: then its API key works, and its password is refused as for any second factor', async () => {
    await aliceHoldsStrictRole();
    const enrolled = await call(t.app, 'POST', '/users/2/two_factor.json', { auth: t.aliceAuth });
    assert.equal(enrolled.statusCode, 201, enrolled.body);
    const { secret } = (JSON.parse(enrolled.body) as { two_factor: { secret: string } }).two_factor;
    // Pending: still refused.
    assert.equal((await call(t.app, 'GET', '/users/2.json', { auth: t.aliceAuth })).statusCode, 403);
    const confirmed = await call(t.app, 'PUT', '/users/2/two_factor.json', { auth: t.aliceAuth, body: { two_factor: { code: codeOf(secret) } } });
    assert.equal(confirmed.statusCode, 200, confirmed.body);
    const key = (JSON.parse((await call(t.app, 'POST', '/users/2/user_api_keys.json', { auth: t.adminAuth, body: { user_api_key: { description: 'ci' } } })).body) as { user_api_key: { api_key: string } }).user_api_key.api_key;
    const byKey = await call(t.app, 'GET', '/users/2.json', { auth: `Basic ${Buffer.from(`alice:${key}`).toString('base64')}` });
    assert.equal(byKey.statusCode, 200, byKey.body);
    assert.equal((await call(t.app, 'GET', '/users/2.json', { auth: t.aliceAuth })).statusCode, 401);
  });

  it('the console sends a holder without a factor to its own page, and nowhere else', async () => {
    await aliceHoldsStrictRole();
    const signedIn = await t.app.inject({ method: 'POST', url: '/console/sign-in', headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: new URLSearchParams({ login: ALICE.login, password: ALICE.password }).toString() });
    assert.equal(signedIn.statusCode, 303, signedIn.body);
    const cookie = `_cmi_console=${/^_cmi_console=([^;\s]+);/.exec(String(signedIn.headers['set-cookie']))![1]}`;
    for (const url of ['/console', '/console/users', '/console/users/1']) {
      const page = await t.app.inject({ url, headers: { cookie } });
      assert.deepEqual([url, page.statusCode, page.headers.location], [url, 303, '/console/users/2?notice=two_factor_required']);
    }
    const own = await t.app.inject({ url: '/console/users/2?notice=two_factor_required', headers: { cookie } });
    assert.equal(own.statusCode, 200);
    assert.match(own.body, /A role of yours requires a second factor: set one up under &quot;Second factor&quot; below/);
    // The enrolment's own forms go on to their route (here refused for want of the CSRF token), any other is sent back.
    const enrol = await t.app.inject({ method: 'POST', url: '/console/users/2/two-factor', headers: { cookie } });
    assert.deepEqual([enrol.statusCode, enrol.headers.location], [403, undefined]);
    const elsewhere = await t.app.inject({ method: 'POST', url: '/console/users/2/two-factor/disable', headers: { cookie } });
    assert.equal(elsewhere.headers.location, '/console/users/2?notice=two_factor_required');
  });
});
