import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { createTestApp, type TestApp } from './support/app.js';
import { ERRORS, forbiddenJson, NOT_FOUND_JSON } from './support/error-reports.js';
import { type RoleJson, roleJson, roleXml } from './support/roles.js';

const AT = '2026-11-20T10:00:00+00:00';
const XML_DECLARATION = '<?xml version="1.0" encoding="UTF-8"?>\n';

function call(t: TestApp, method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, auth: string, body?: unknown, contentType = 'application/json'): Promise<LightMyRequestResponse> {
  const headers: Record<string, string> = { authorization: auth };
  if (body !== undefined) headers['content-type'] = contentType;
  const payload = body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body);
  return t.app.inject({ method, url, headers, ...(payload === undefined ? {} : { payload }) });
}

/** The fields of OnApp's user group that cmi has no use for, in wire order: always null. */
const UNUSED = {
  assign_vcloud_roles: null, billing_plans: null, closed: null, company_billing_plan_id: null, datacenter_id: null, draas_id: null,
  federation_enabled: null, federation_id: null, hypervisor_id: null, preconfigured_only: null, provider_vdc_id: null, traded: null, user_buckets: null,
};

/** The exact JSON of one group's record (without its wrapper). */
const group = (id: number, label: string, identifier: string, roles: RoleJson[], bucketId: number | null = null) =>
  ({ id, label, identifier, roles: roles.map((role) => ({ role })), bucket_id: bucketId, additional_fields: {}, created_at: AT, updated_at: AT, ...UNUSED });
const groupJson = (...args: Parameters<typeof group>) => JSON.stringify({ user_group: group(...args) });

/** A role made through the API, holding the permissions of `permissionIds`; answers it as a holder's record shows it. */
async function addRole(t: TestApp, label: string, permissionIds: number[]): Promise<RoleJson> {
  const made = await call(t, 'POST', '/roles.json', t.adminAuth, { role: { label, permission_ids: permissionIds } });
  assert.equal(made.statusCode, 201, made.body);
  return roleJson(t.database, made.json<{ role: { id: number } }>().role.id);
}

/** Permission 22 of the catalogue (roles/permissions.ts). */
const ERRORS_READ = 22;

const groupRows = (t: TestApp) => t.database.db.selectFrom('user_groups').select(['id', 'label', 'identifier', 'bucket_id']).orderBy('id').execute();
const groupRoleRows = (t: TestApp) => t.database.db.selectFrom('user_group_roles').select(['user_group_id', 'role_id']).orderBy('user_group_id').orderBy('role_id').execute();

describe('/user_groups', () => {
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp();
  });
  afterEach(() => t.close());

  it('creates a group with OnApp\'s fields typed exactly (unused ones null), an identifier made from the label, in JSON and XML', async () => {
    const made = await call(t, 'POST', '/user_groups.json', t.adminAuth, { user_group: { label: 'Resellers EU' } });
    assert.equal(made.statusCode, 201);
    assert.equal(made.headers.location, '/user_groups/1.json');
    assert.equal(made.body, `{"user_group":{"id":1,"label":"Resellers EU","identifier":"resellers_eu","roles":[],"bucket_id":null,"additional_fields":{},"created_at":"${AT}","updated_at":"${AT}","assign_vcloud_roles":null,"billing_plans":null,"closed":null,"company_billing_plan_id":null,"datacenter_id":null,"draas_id":null,"federation_enabled":null,"federation_id":null,"hypervisor_id":null,"preconfigured_only":null,"provider_vdc_id":null,"traded":null,"user_buckets":null}}`);

    // The same label again: the identifier is made free; role_ids as strings (the Go SDK's) and numbers (the PHP wrapper's).
    const readers = await addRole(t, 'Readers', [ERRORS_READ]);
    const second = await call(t, 'POST', '/user_groups.json', t.adminAuth, { user_group: { label: 'Resellers EU', role_ids: ['2', readers.id] } });
    assert.equal(second.statusCode, 201);
    assert.equal(second.body, groupJson(2, 'Resellers EU', 'resellers_eu_2', [t.systemRoles.user, readers]));

    const xml = await call(t, 'GET', '/user_groups/2.xml', t.adminAuth);
    assert.equal(xml.statusCode, 200);
    assert.equal(xml.headers['content-type'], 'application/xml; charset=utf-8');
    assert.equal(xml.body, `${XML_DECLARATION}<user_group>
  <id type="integer">2</id>
  <label>Resellers EU</label>
  <identifier>resellers_eu_2</identifier>
  <roles type="array">
${roleXml(t.systemRoles.user, '    ')}${roleXml(readers, '    ')}  </roles>
  <bucket_id nil="true"/>
  <additional_fields>{}</additional_fields>
  <created_at type="datetime">${AT}</created_at>
  <updated_at type="datetime">${AT}</updated_at>
  <assign_vcloud_roles nil="true"/>
  <billing_plans nil="true"/>
  <closed nil="true"/>
  <company_billing_plan_id nil="true"/>
  <datacenter_id nil="true"/>
  <draas_id nil="true"/>
  <federation_enabled nil="true"/>
  <federation_id nil="true"/>
  <hypervisor_id nil="true"/>
  <preconfigured_only nil="true"/>
  <provider_vdc_id nil="true"/>
  <traded nil="true"/>
  <user_buckets nil="true"/>
</user_group>
`);
    assert.deepEqual((await groupRows(t)).map((row) => [Number(row.id), row.label, row.identifier, row.bucket_id]), [[1, 'Resellers EU', 'resellers_eu', null], [2, 'Resellers EU', 'resellers_eu_2', null]]);
    assert.deepEqual((await groupRoleRows(t)).map((row) => [Number(row.user_group_id), Number(row.role_id)]), [[2, 2], [2, readers.id]]);
  });

  it('takes an XML body with role_ids items, an identifier of its own, and the Go SDK\'s bucket_ids', async () => {
    await call(t, 'POST', '/billing/buckets.json', t.adminAuth, { bucket: { label: 'Gold' } });
    const readers = await addRole(t, 'Readers', [ERRORS_READ]);
    const body = `<user_group><label>Ops &amp; support</label><identifier>ops</identifier><bucket_id>1</bucket_id><role_ids type="array"><item>${readers.id}</item></role_ids></user_group>`;
    const made = await call(t, 'POST', '/user_groups.xml', t.adminAuth, body, 'application/xml');
    assert.equal(made.statusCode, 201, made.body);
    assert.equal(made.headers.location, '/user_groups/1.xml');
    assert.equal((await call(t, 'GET', '/user_groups/1.json', t.adminAuth)).body, groupJson(1, 'Ops & support', 'ops', [readers], 1));

    const go = await call(t, 'POST', '/user_groups.json', t.adminAuth, { user_group: { label: 'Go', bucket_ids: [1] } });
    assert.equal(go.body, groupJson(2, 'Go', 'go', [], 1));
  });

  it('lists groups paginated like users, in JSON and XML', async () => {
    for (const label of ['A', 'B', 'C']) await call(t, 'POST', '/user_groups.json', t.adminAuth, { user_group: { label } });
    const page = await call(t, 'GET', '/user_groups.json?per_page=2&page=2', t.adminAuth);
    assert.deepEqual([page.statusCode, page.headers['x-total'], page.headers['x-limit'], page.headers['x-page']], [200, '3', '2', '2']);
    assert.equal(page.headers.link, '</user_groups.json?page=1&per_page=2>; rel="first", </user_groups.json?page=1&per_page=2>; rel="prev", </user_groups.json?page=2&per_page=2>; rel="last"');
    assert.equal(page.body, `[${groupJson(3, 'C', 'c', [])}]`);
    const segments = await call(t, 'GET', '/user_groups.json/page/1/per_page/2', t.adminAuth);
    assert.equal(segments.body, `[${groupJson(1, 'A', 'a', [])},${groupJson(2, 'B', 'b', [])}]`);
    const past = await call(t, 'GET', '/user_groups.xml?page=9', t.adminAuth);
    assert.deepEqual([past.statusCode, past.headers['x-total'], past.body], [200, '3', `${XML_DECLARATION}<user_groups type="array"/>\n`]);
    const bad = await call(t, 'GET', '/user_groups.json?per_page=0', t.adminAuth);
    assert.deepEqual([bad.statusCode, bad.body], [422, '{"errors":{"per_page":["must be an integer from 1 to 1000"]}}']);
  });

  it('edits unwrapped (the Go SDK: label, role_id) and wrapped (the PHP wrapper, JSON or XML); role_ids replace the group\'s', async () => {
    const readers = await addRole(t, 'Readers', [ERRORS_READ]);
    await call(t, 'POST', '/user_groups.json', t.adminAuth, { user_group: { label: 'Staff', role_ids: [2] } });

    assert.equal((await call(t, 'PUT', '/user_groups/1.json', t.adminAuth, { label: 'Staff+', role_id: readers.id })).statusCode, 204);
    assert.equal((await call(t, 'GET', '/user_groups/1.json', t.adminAuth)).body, groupJson(1, 'Staff+', 'staff', [readers]));

    await call(t, 'POST', '/billing/buckets.json', t.adminAuth, { bucket: { label: 'Gold' } });
    const xml = `<user_group><identifier>staff_2</identifier><bucket_id>1</bucket_id><role_ids type="array"><item>2</item><item>${readers.id}</item></role_ids></user_group>`;
    assert.equal((await call(t, 'PUT', '/user_groups/1.xml', t.adminAuth, xml, 'application/xml')).statusCode, 204);
    assert.equal((await call(t, 'GET', '/user_groups/1.json', t.adminAuth)).body, groupJson(1, 'Staff+', 'staff_2', [t.systemRoles.user, readers], 1));

    assert.equal((await call(t, 'PUT', '/user_groups/1.json', t.adminAuth, { user_group: { role_ids: [], bucket_id: null } })).statusCode, 204);
    assert.equal((await call(t, 'GET', '/user_groups/1.json', t.adminAuth)).body, groupJson(1, 'Staff+', 'staff_2', []));
    assert.deepEqual(await groupRoleRows(t), []);

    const missing = await call(t, 'PUT', '/user_groups/9.json', t.adminAuth, { label: 'x' });
    assert.deepEqual([missing.statusCode, missing.body], [404, NOT_FOUND_JSON]);
    assert.equal((await call(t, 'GET', '/user_groups/9.json', t.adminAuth)).statusCode, 404);
    assert.equal((await call(t, 'GET', '/user_groups/x.json', t.adminAuth)).statusCode, 404);
  });

  it('names every bad field in one 422 and writes nothing: an unknown role or bucket, a taken identifier', async () => {
    await call(t, 'POST', '/user_groups.json', t.adminAuth, { user_group: { label: 'Staff' } });
    const bad = await call(t, 'POST', '/user_groups.json', t.adminAuth, { user_group: { identifier: 'Bad Id', role_ids: [2, 99], bucket_id: 7 } });
    assert.equal(bad.statusCode, 422);
    assert.equal(bad.body, '{"errors":{"label":["can\'t be blank"],"identifier":["must be lower-case letters, digits and _ . -, not starting with . or -"],"role_ids":["names no role: 99"],"bucket_id":["names no bucket: 7"]}}');
    for (const [body, expected] of [
      [{ label: 'x', identifier: 'staff' }, '{"errors":{"identifier":["has already been taken"]}}'],
      [{ label: 'x', role_ids: 'all' }, '{"errors":{"role_ids":["must be a list of ids"]}}'],
      [{ label: 'x', bucket_id: 'gold' }, '{"errors":{"bucket_id":["must be an id or null"]}}'],
      [{ label: 'x', bucket_ids: [1, 2] }, '{"errors":{"bucket_ids":["must name at most one bucket"]}}'],
      [{ label: 'x', role_id: 42 }, '{"errors":{"role_id":["names no role: 42"]}}'],
      [{ label: 'x'.repeat(256) }, '{"errors":{"label":["is too long (maximum is 255 characters)"]}}'],
    ] as const) {
      const res = await call(t, 'POST', '/user_groups.json', t.adminAuth, { user_group: body });
      assert.deepEqual([res.statusCode, res.body], [422, expected], JSON.stringify(body));
    }
    const xml = await call(t, 'POST', '/user_groups.xml', t.adminAuth, '<user_group><role_ids type="array"><item>99</item></role_ids></user_group>', 'application/xml');
    assert.equal(xml.statusCode, 422);
    assert.equal(xml.body, `${XML_DECLARATION}<errors>\n  <error>Label can't be blank</error>\n  <error>Role ids names no role: 99</error>\n</errors>\n`);
    const edit = await call(t, 'PUT', '/user_groups/1.json', t.adminAuth, { label: 'Renamed', role_ids: [99] });
    assert.deepEqual([edit.statusCode, edit.body], [422, '{"errors":{"role_ids":["names no role: 99"]}}']);
    assert.deepEqual((await groupRows(t)).map((row) => [Number(row.id), row.label, row.identifier]), [[1, 'Staff', 'staff']]);
    assert.deepEqual(await groupRoleRows(t), []);
  });

  it('refuses to delete a group users belong to (422, like a role users hold); a role or bucket a group holds is not deleted either', async () => {
    const readers = await addRole(t, 'Readers', [ERRORS_READ]);
    await call(t, 'POST', '/billing/buckets.json', t.adminAuth, { bucket: { label: 'Gold' } });
    await call(t, 'POST', '/user_groups.json', t.adminAuth, { user_group: { label: 'Staff', role_ids: [readers.id], bucket_id: 1 } });
    assert.equal((await call(t, 'PUT', `/users/${t.alice.id}.json`, t.adminAuth, { user: { user_group_id: 1 } })).statusCode, 204);

    const inUse = await call(t, 'DELETE', '/user_groups/1.json', t.adminAuth);
    assert.deepEqual([inUse.statusCode, inUse.body], [422, '{"errors":{"base":["A user group that users belong to cannot be deleted"]}}']);
    const inUseXml = await call(t, 'DELETE', '/user_groups/1.xml', t.adminAuth);
    assert.deepEqual([inUseXml.statusCode, inUseXml.body], [422, `${XML_DECLARATION}<errors>\n  <error>A user group that users belong to cannot be deleted</error>\n</errors>\n`]);
    const role = await call(t, 'DELETE', `/roles/${readers.id}.json`, t.adminAuth);
    assert.deepEqual([role.statusCode, role.body], [422, '{"errors":{"base":["A role that user groups hold cannot be deleted"]}}']);
    const bucket = await call(t, 'DELETE', '/billing/buckets/1.json', t.adminAuth);
    assert.deepEqual([bucket.statusCode, bucket.body], [422, '{"errors":{"base":["A bucket that user groups use cannot be deleted"]}}']);
    assert.equal((await groupRows(t)).length, 1);

    assert.equal((await call(t, 'PUT', `/users/${t.alice.id}.json`, t.adminAuth, { user: { user_group_id: null } })).statusCode, 204);
    // A user marked deleted does not hold the group: it leaves it (Terraform destroys a user, then its group).
    const [bob] = await t.addUsers(1);
    assert.equal((await call(t, 'PUT', `/users/${bob!.id}.json`, t.adminAuth, { user_group_id: 1 })).statusCode, 204);
    assert.equal((await call(t, 'DELETE', `/users/${bob!.id}.json`, t.adminAuth)).statusCode, 204);
    // OnApp clients send DELETE with a body.
    assert.equal((await call(t, 'DELETE', '/user_groups/1.json', t.adminAuth, { force: 1 })).statusCode, 204);
    const left = await t.database.db.selectFrom('users').select(['status', 'user_group_id']).where('id', '=', bob!.id).executeTakeFirstOrThrow();
    assert.deepEqual([left.status, left.user_group_id], ['deleted', null]);
    assert.deepEqual([await groupRows(t), await groupRoleRows(t)], [[], []]);
    assert.equal((await call(t, 'DELETE', '/user_groups/1.json', t.adminAuth)).statusCode, 404);
    assert.equal((await call(t, 'DELETE', `/roles/${readers.id}.json`, t.adminAuth)).statusCode, 204);
    assert.equal((await call(t, 'DELETE', '/billing/buckets/1.json', t.adminAuth)).statusCode, 204);
  });

  it('answers 403 to a user without the user_groups permissions', async () => {
    await call(t, 'POST', '/user_groups.json', t.adminAuth, { user_group: { label: 'Staff' } });
    for (const [method, url, body, needs] of [
      ['GET', '/user_groups.json', undefined, 'user_groups.read'], ['GET', '/user_groups/1.json', undefined, 'user_groups.read'], ['POST', '/user_groups.json', { user_group: { label: 'x' } }, 'user_groups.create'],
      ['PUT', '/user_groups/1.json', { label: 'x' }, 'user_groups.update'], ['DELETE', '/user_groups/1.json', undefined, 'user_groups.delete'], ['GET', '/user_groups/1/users.json', undefined, 'user_groups.read'],
    ] as const) {
      const res = await call(t, method, url, t.aliceAuth, body);
      assert.deepEqual([res.statusCode, res.body], [403, forbiddenJson(needs)], `${method} ${url}`);
    }
    const anonymous = await t.app.inject({ url: '/user_groups.json' });
    assert.equal(anonymous.statusCode, 401);
  });

  it('GET /user_groups/:id/users lists the group\'s members exactly as /users does, paginated', async () => {
    await call(t, 'POST', '/user_groups.json', t.adminAuth, { user_group: { label: 'Staff' } });
    await call(t, 'POST', '/user_groups.json', t.adminAuth, { user_group: { label: 'Empty' } });
    const members = await t.addUsers(3);
    for (const user of [t.alice, ...members.slice(0, 2)]) {
      assert.equal((await call(t, 'PUT', `/users/${user.id}.json`, t.adminAuth, { user_group_id: '1' })).statusCode, 204);
    }
    const page = await call(t, 'GET', '/user_groups/1/users.json?per_page=2&page=2', t.adminAuth);
    assert.deepEqual([page.statusCode, page.headers['x-total'], page.headers['x-limit'], page.headers['x-page']], [200, '3', '2', '2']);
    assert.equal(page.headers.link, '</user_groups/1/users.json?page=1&per_page=2>; rel="first", </user_groups/1/users.json?page=1&per_page=2>; rel="prev", </user_groups/1/users.json?page=2&per_page=2>; rel="last"');
    // The same records as /users.json answers for the same users.
    const all = await call(t, 'GET', '/users.json?user_group_id=1', t.adminAuth);
    const records = all.json<unknown[]>();
    assert.equal(records.length, 3);
    assert.equal(page.body, JSON.stringify(records.slice(2)));
    const first = await call(t, 'GET', '/user_groups/1/users.json', t.adminAuth);
    assert.equal(first.body, all.body);
    assert.match(first.body, /"bucket_id":null,"user_group_id":1,"totp_enabled":false,"registered_yubikey":false\}\}/);

    const xml = await call(t, 'GET', '/user_groups/1/users.xml/page/1/per_page/1', t.adminAuth);
    assert.deepEqual([xml.statusCode, xml.headers['x-total'], xml.headers['x-limit']], [200, '3', '1']);
    assert.match(xml.body, /^<\?xml version="1.0" encoding="UTF-8"\?>\n<users type="array">\n {2}<user>\n {4}<id type="integer">2<\/id>[^]*<user_group_id type="integer">1<\/user_group_id>\n {4}<totp_enabled type="boolean">false<\/totp_enabled>\n {4}<registered_yubikey type="boolean">false<\/registered_yubikey>\n {2}<\/user>\n<\/users>\n$/);

    const empty = await call(t, 'GET', '/user_groups/2/users.json', t.adminAuth);
    assert.deepEqual([empty.statusCode, empty.headers['x-total'], empty.body], [200, '0', '[]']);
    const unknown = await call(t, 'GET', '/user_groups/9/users.json', t.adminAuth);
    assert.deepEqual([unknown.statusCode, unknown.body], [404, NOT_FOUND_JSON]);
    // Filtered like the users list, but the group is the path's.
    const filtered = await call(t, 'GET', `/user_groups/1/users.json?q=${members[1]!.login}`, t.adminAuth);
    assert.deepEqual([filtered.headers['x-total'], filtered.json<Array<{ user: { id: number } }>>().map(({ user }) => user.id)], ['1', [members[1]!.id]]);
    const twice = await call(t, 'GET', '/user_groups/1/users.json?user_group_id=2', t.adminAuth);
    assert.deepEqual([twice.statusCode, twice.body], [422, '{"errors":{"user_group_id":["is not a parameter of this list"]}}']);
  });
});

describe('users in a group', () => {
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp();
    await call(t, 'POST', '/user_groups.json', t.adminAuth, { user_group: { label: 'Staff' } });
  });
  afterEach(() => t.close());

  const groupOf = async (t: TestApp, id: number) => (await t.database.db.selectFrom('users').select('user_group_id').where('id', '=', id).executeTakeFirstOrThrow()).user_group_id;

  it('user_group_id on create and edit: checked, stored, shown; an unknown group creates nothing', async () => {
    const made = await call(t, 'POST', '/users.json', t.adminAuth, { user: { login: 'bob', email: 'bob@example.com', password: 'a-password', user_group_id: '1' } });
    assert.equal(made.statusCode, 201);
    assert.match(made.body, /\],"bucket_id":null,"user_group_id":1,"totp_enabled":false,"registered_yubikey":false\}\}$/);
    const bob = made.json<{ user: { id: number } }>().user.id;
    assert.equal(Number(await groupOf(t, bob)), 1);

    const before = (await t.database.db.selectFrom('users').select('id').execute()).length;
    for (const [group, message] of [[9, 'names no user group: 9'], ['x', 'must be an id or null'], [0, 'must be an id or null'], [true, 'must be an id or null']] as const) {
      const res = await call(t, 'POST', '/users.json', t.adminAuth, { user: { login: 'carol', email: 'carol@example.com', password: 'a-password', user_group_id: group } });
      assert.deepEqual([res.statusCode, res.body], [422, JSON.stringify({ errors: { user_group_id: [message] } })]);
    }
    assert.equal((await t.database.db.selectFrom('users').select('id').execute()).length, before);
    const edit = await call(t, 'PUT', `/users/${bob}.json`, t.adminAuth, { user: { first_name: 'Bobby', user_group_id: 9 } });
    assert.deepEqual([edit.statusCode, edit.body], [422, '{"errors":{"user_group_id":["names no user group: 9"]}}']);
    const unchanged = await t.database.db.selectFrom('users').select(['first_name', 'user_group_id']).where('id', '=', bob).executeTakeFirstOrThrow();
    assert.deepEqual([unchanged.first_name, Number(unchanged.user_group_id)], ['', 1]);

    const xml = '<user><user_group_id nil="true"/></user>';
    assert.equal((await call(t, 'PUT', `/users/${bob}.xml`, t.adminAuth, xml, 'application/xml')).statusCode, 204);
    assert.equal(await groupOf(t, bob), null);
    const shown = await call(t, 'GET', `/users/${bob}.xml`, t.adminAuth);
    assert.match(shown.body, /<\/roles>\n {2}<bucket_id nil="true"\/>\n {2}<user_group_id nil="true"\/>\n {2}<totp_enabled type="boolean">false<\/totp_enabled>\n {2}<registered_yubikey type="boolean">false<\/registered_yubikey>\n<\/user>\n$/);
    assert.equal((await call(t, 'PUT', `/users/${bob}.xml`, t.adminAuth, '<user><user_group_id>1</user_group_id></user>', 'application/xml')).statusCode, 204);
    assert.match((await call(t, 'GET', `/users/${bob}.xml`, t.adminAuth)).body, /<user_group_id type="integer">1<\/user_group_id>\n {2}<totp_enabled type="boolean">false<\/totp_enabled>\n {2}<registered_yubikey type="boolean">false<\/registered_yubikey>\n<\/user>\n$/);
  });

  it('only a holder of users.update moves a user between groups; anyone may send its own unchanged', async () => {
    assert.equal((await call(t, 'PUT', `/users/${t.alice.id}.json`, t.aliceAuth, { user: { first_name: 'Al', user_group_id: null } })).statusCode, 204);
    const moved = await call(t, 'PUT', `/users/${t.alice.id}.json`, t.aliceAuth, { user: { user_group_id: 1 } });
    assert.deepEqual([moved.statusCode, moved.body], [403, forbiddenJson('users.update')]);
    assert.equal(await groupOf(t, t.alice.id), null);
    assert.equal((await call(t, 'PUT', `/users/${t.alice.id}.json`, t.adminAuth, { user: { user_group_id: 1 } })).statusCode, 204);
    assert.equal((await call(t, 'PUT', `/users/${t.alice.id}.json`, t.aliceAuth, { user_group_id: '1', last_name: 'A' })).statusCode, 204);
    const out = await call(t, 'PUT', `/users/${t.alice.id}.json`, t.aliceAuth, { user_group_id: null });
    assert.deepEqual([out.statusCode, out.body], [403, forbiddenJson('users.update')]);
    assert.equal(Number(await groupOf(t, t.alice.id)), 1);
  });

  it('a group\'s roles apply to its members at once: a role added to the group, the group taken away, the role emptied', async () => {
    const readers = await addRole(t, 'Readers', []);
    const errors = async () => (await call(t, 'GET', `${ERRORS}.json`, t.aliceAuth)).statusCode;
    assert.equal((await call(t, 'PUT', `/users/${t.alice.id}.json`, t.adminAuth, { user: { user_group_id: 1 } })).statusCode, 204);
    // Verified twice: the second answer comes from the credential cache.
    assert.deepEqual([await errors(), await errors()], [403, 403]);

    // Only user_group_roles changes (the Go SDK's unwrapped edit): no row of users is written.
    assert.equal((await call(t, 'PUT', '/user_groups/1.json', t.adminAuth, { role_ids: [readers.id] })).statusCode, 204);
    assert.equal(await errors(), 403, 'the role grants nothing yet');
    assert.equal((await call(t, 'PUT', `/roles/${readers.id}.json`, t.adminAuth, { permission_ids: [ERRORS_READ] })).statusCode, 204);
    assert.deepEqual([await errors(), await errors()], [200, 200]);
    // The member's record shows its own roles; what it may do is the union.
    assert.match((await call(t, 'GET', `/users/${t.alice.id}.json`, t.aliceAuth)).body, /"roles":\[\{"role":\{"id":2,/);

    assert.equal((await call(t, 'PUT', '/user_groups/1.json', t.adminAuth, { user_group: { role_ids: [] } })).statusCode, 204);
    assert.equal(await errors(), 403);
    assert.equal((await call(t, 'PUT', '/user_groups/1.json', t.adminAuth, { role_ids: [String(readers.id)] })).statusCode, 204);
    assert.equal(await errors(), 200);
    assert.equal((await call(t, 'PUT', `/users/${t.alice.id}.json`, t.adminAuth, { user: { user_group_id: null } })).statusCode, 204);
    assert.equal(await errors(), 403);
  });

  it('another process (its own connection and credential cache) decides by the group\'s new roles on its next request', async () => {
    const readers = await addRole(t, 'Readers', [ERRORS_READ]);
    assert.equal((await call(t, 'PUT', `/users/${t.alice.id}.json`, t.adminAuth, { user: { user_group_id: 1 } })).statusCode, 204);
    const other = await t.secondProcess();
    try {
      const errors = async () => (await other.app.inject({ url: `${ERRORS}.json`, headers: { authorization: t.aliceAuth } })).statusCode;
      assert.deepEqual([await errors(), await errors()], [403, 403]);
      assert.equal((await call(t, 'PUT', '/user_groups/1.json', t.adminAuth, { role_ids: [readers.id] })).statusCode, 204);
      assert.deepEqual([await errors(), await errors()], [200, 200]);
      assert.equal((await call(t, 'PUT', '/user_groups/1.json', t.adminAuth, { role_ids: [] })).statusCode, 204);
      assert.equal(await errors(), 403);
    } finally {
      await other.close();
    }
  });
});
