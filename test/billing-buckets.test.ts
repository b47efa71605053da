import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { createTestApp, type TestApp } from './support/app.js';
import { forbiddenJson, NOT_FOUND_JSON } from './support/error-reports.js';

const AT = '2026-11-20T10:00:00+00:00';

function call(t: TestApp, method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, auth: string, body?: unknown, contentType = 'application/json'): Promise<LightMyRequestResponse> {
  const headers: Record<string, string> = { authorization: auth };
  if (body !== undefined) headers['content-type'] = contentType;
  const payload = body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body);
  return t.app.inject({ method, url, headers, ...(payload === undefined ? {} : { payload }) });
}

describe('/billing/buckets', () => {
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp();
  });
  afterEach(() => t.close());

  it('creates a bucket with defaults, returns its fields typed exactly, in JSON and XML', async () => {
    const made = await call(t, 'POST', '/billing/buckets.json', t.adminAuth, { bucket: { label: 'Gold' } });
    assert.equal(made.statusCode, 201);
    assert.equal(made.headers.location, '/billing/buckets/1.json');
    assert.equal(made.body, `{"bucket":{"id":1,"label":"Gold","currency_code":"USD","monthly_price":0,"show_price":false,"allows_kms":false,"allows_mak":false,"allows_own":false,"created_at":"${AT}","updated_at":"${AT}"}}`);
    const full = await call(t, 'POST', '/billing/buckets.json', t.adminAuth, { bucket: { label: 'Silver', currency_code: 'EUR', monthly_price: 12.5, show_price: true, allows_kms: 1, allows_mak: 'true', allows_own: false } });
    assert.equal(full.body, `{"bucket":{"id":2,"label":"Silver","currency_code":"EUR","monthly_price":12.5,"show_price":true,"allows_kms":true,"allows_mak":true,"allows_own":false,"created_at":"${AT}","updated_at":"${AT}"}}`);
    const xml = await call(t, 'GET', '/billing/buckets/2.xml', t.adminAuth);
    assert.equal(xml.body, `<?xml version="1.0" encoding="UTF-8"?>
<bucket>
  <id type="integer">2</id>
  <label>Silver</label>
  <currency_code>EUR</currency_code>
  <monthly_price type="decimal">12.5</monthly_price>
  <show_price type="boolean">true</show_price>
  <allows_kms type="boolean">true</allows_kms>
  <allows_mak type="boolean">true</allows_mak>
  <allows_own type="boolean">false</allows_own>
  <created_at type="datetime">${AT}</created_at>
  <updated_at type="datetime">${AT}</updated_at>
</bucket>
`);
    const row = await t.database.db.selectFrom('billing_buckets').selectAll().where('id', '=', 2).executeTakeFirstOrThrow();
    assert.deepEqual([row.label, row.currency_code, Number(row.monthly_price), row.show_price, row.allows_kms, row.allows_mak, row.allows_own], ['Silver', 'EUR', 12.5, 1, 1, 1, 0]);
  });

  it('lists buckets paginated like users, edits wrapped or not (JSON or XML), deletes', async () => {
    for (const label of ['A', 'B', 'C']) await call(t, 'POST', '/billing/buckets.json', t.adminAuth, { bucket: { label } });
    const page = await call(t, 'GET', '/billing/buckets.json?per_page=2&page=2', t.adminAuth);
    assert.deepEqual([page.statusCode, page.headers['x-total'], page.headers['x-limit'], page.headers['x-page']], [200, '3', '2', '2']);
    assert.equal(page.body, `[{"bucket":{"id":3,"label":"C","currency_code":"USD","monthly_price":0,"show_price":false,"allows_kms":false,"allows_mak":false,"allows_own":false,"created_at":"${AT}","updated_at":"${AT}"}}]`);

    // The Go SDK's edit: unwrapped.
    assert.equal((await call(t, 'PUT', '/billing/buckets/1.json', t.adminAuth, { label: 'A+', monthly_price: '9.99' })).statusCode, 204);
    // The PHP wrapper's, in XML.
    const xml = '<bucket><show_price>true</show_price><currency_code>GBP</currency_code></bucket>';
    assert.equal((await call(t, 'PUT', '/billing/buckets/1.xml', t.adminAuth, xml, 'application/xml')).statusCode, 204);
    const one = await call(t, 'GET', '/billing/buckets/1.json', t.adminAuth);
    assert.equal(one.body, `{"bucket":{"id":1,"label":"A+","currency_code":"GBP","monthly_price":9.99,"show_price":true,"allows_kms":false,"allows_mak":false,"allows_own":false,"created_at":"${AT}","updated_at":"${AT}"}}`);

    assert.equal((await call(t, 'DELETE', '/billing/buckets/1.json', t.adminAuth)).statusCode, 204);
    const gone = await call(t, 'GET', '/billing/buckets/1.json', t.adminAuth);
    assert.deepEqual([gone.statusCode, gone.body], [404, NOT_FOUND_JSON]);
    assert.equal((await call(t, 'DELETE', '/billing/buckets/1.json', t.adminAuth)).statusCode, 404);
    assert.equal((await call(t, 'PUT', '/billing/buckets/1.json', t.adminAuth, { label: 'x' })).statusCode, 404);
  });

  it('names every bad field in one 422 and stores nothing', async () => {
    const res = await call(t, 'POST', '/billing/buckets.json', t.adminAuth, { bucket: { currency_code: 'usd', monthly_price: -1, show_price: 'yes' } });
    assert.equal(res.statusCode, 422);
    assert.equal(res.body, '{"errors":{"label":["can\'t be blank"],"currency_code":["must be three capital letters (ISO 4217)"],"monthly_price":["must be a number of at least 0"],"show_price":["must be true or false"]}}');
    const price = await call(t, 'POST', '/billing/buckets.json', t.adminAuth, { bucket: { label: 'x', monthly_price: 'cheap' } });
    assert.equal(price.body, '{"errors":{"monthly_price":["must be a number of at least 0"]}}');
    assert.deepEqual(await t.database.db.selectFrom('billing_buckets').select('id').execute(), []);
  });

  it('answers 403 to a user without the buckets permissions', async () => {
    await call(t, 'POST', '/billing/buckets.json', t.adminAuth, { bucket: { label: 'Gold' } });
    for (const [method, url, body, needs] of [
      ['GET', '/billing/buckets.json', undefined, 'buckets.read'], ['GET', '/billing/buckets/1.json', undefined, 'buckets.read'], ['POST', '/billing/buckets.json', { bucket: { label: 'x' } }, 'buckets.create'],
      ['PUT', '/billing/buckets/1.json', { label: 'x' }, 'buckets.update'], ['DELETE', '/billing/buckets/1.json', undefined, 'buckets.delete'],
    ] as const) {
      const res = await call(t, method, url, t.aliceAuth, body);
      assert.equal(res.statusCode, 403, `${method} ${url}`);
      assert.equal(res.body, forbiddenJson(needs));
    }
  });

  it('users belong to a bucket by bucket_id: given on create and edit, checked, shown; a bucket in use is not deleted', async () => {
    await call(t, 'POST', '/billing/buckets.json', t.adminAuth, { bucket: { label: 'Gold' } });
    const bucketOf = async (id: number) => (await t.database.db.selectFrom('users').select('bucket_id').where('id', '=', id).executeTakeFirstOrThrow()).bucket_id;

    const made = await call(t, 'POST', '/users.json', t.adminAuth, { user: { login: 'bob', email: 'bob@example.com', password: 'a-password', bucket_id: '1' } });
    assert.equal(made.statusCode, 201);
    assert.match(made.body, /\],"bucket_id":1,"user_group_id":null,"totp_enabled":false,"registered_yubikey":false\}\}$/);
    const bob = made.json<{ user: { id: number } }>().user.id;
    assert.equal(Number(await bucketOf(bob)), 1);

    const before = (await t.database.db.selectFrom('users').select('id').execute()).length;
    for (const [bucket, message] of [[9, 'names no bucket: 9'], ['x', 'must be an id or null'], [0, 'must be an id or null']] as const) {
      const res = await call(t, 'POST', '/users.json', t.adminAuth, { user: { login: 'carol', email: 'carol@example.com', password: 'a-password', bucket_id: bucket } });
      assert.equal(res.statusCode, 422);
      assert.equal(res.body, JSON.stringify({ errors: { bucket_id: [message] } }));
    }
    assert.equal((await t.database.db.selectFrom('users').select('id').execute()).length, before);

    const inUse = await call(t, 'DELETE', '/billing/buckets/1.json', t.adminAuth);
    assert.equal(inUse.statusCode, 422);
    assert.equal(inUse.body, '{"errors":{"base":["A bucket that users belong to cannot be deleted"]}}');

    // A user sends its own bucket unchanged (the PHP wrapper does); any change needs users.update.
    assert.equal((await call(t, 'PUT', `/users/${t.alice.id}.json`, t.aliceAuth, { user: { first_name: 'Al', bucket_id: null } })).statusCode, 204);
    const moved = await call(t, 'PUT', `/users/${t.alice.id}.json`, t.aliceAuth, { user: { bucket_id: 1 } });
    assert.deepEqual([moved.statusCode, moved.body], [403, forbiddenJson('users.update')]);
    assert.equal(await bucketOf(t.alice.id), null);

    const xml = '<user><bucket_id nil="true"/></user>';
    assert.equal((await call(t, 'PUT', `/users/${bob}.xml`, t.adminAuth, xml, 'application/xml')).statusCode, 204);
    assert.equal(await bucketOf(bob), null);
    const shown = await call(t, 'GET', `/users/${bob}.xml`, t.adminAuth);
    assert.match(shown.body, /<\/roles>\n {2}<bucket_id nil="true"\/>\n {2}<user_group_id nil="true"\/>\n {2}<totp_enabled type="boolean">false<\/totp_enabled>\n {2}<registered_yubikey type="boolean">false<\/registered_yubikey>\n<\/user>\n$/);
    assert.equal((await call(t, 'DELETE', '/billing/buckets/1.json', t.adminAuth)).statusCode, 204);
  });

  it('a bucket only users marked deleted belong to is deleted, and they leave it (Terraform destroys a user, then its bucket)', async () => {
    await call(t, 'POST', '/billing/buckets.json', t.adminAuth, { bucket: { label: 'Gold' } });
    const bob = (await call(t, 'POST', '/users.json', t.adminAuth, { user: { login: 'bob', email: 'bob@example.com', password: 'a-password', bucket_id: 1 } })).json<{ user: { id: number } }>().user.id;
    assert.equal((await call(t, 'DELETE', `/users/${bob}.json`, t.adminAuth, { force: 1 })).statusCode, 204);
    assert.equal((await call(t, 'DELETE', '/billing/buckets/1.json', t.adminAuth)).statusCode, 204);
    const row = await t.database.db.selectFrom('users').select(['status', 'bucket_id']).where('id', '=', bob).executeTakeFirstOrThrow();
    assert.deepEqual([row.status, row.bucket_id], ['deleted', null]);
    assert.match((await call(t, 'GET', `/users/${bob}.json`, t.adminAuth)).body, /"bucket_id":null,"user_group_id":null,"totp_enabled":false,"registered_yubikey":false\}\}$/);
  });
});
