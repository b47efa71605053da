import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { createTestApp, type TestApp } from './support/app.js';
import { FORBIDDEN_JSON, NOT_FOUND_JSON } from './support/error-reports.js';

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
    for (const [method, url, body] of [
      ['GET', '/billing/buckets.json', undefined], ['GET', '/billing/buckets/1.json', undefined], ['POST', '/billing/buckets.json', { bucket: { label: 'x' } }],
      ['PUT', '/billing/buckets/1.json', { label: 'x' }], ['DELETE', '/billing/buckets/1.json', undefined],
    ] as const) {
      const res = await call(t, method, url, t.aliceAuth, body);
      assert.equal(res.statusCode, 403, `${method} ${url}`);
      assert.equal(res.body, FORBIDDEN_JSON);
    }
  });
});
