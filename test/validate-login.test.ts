import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ADMIN, createTestApp, listenLocally, type TestApp } from './support/app.js';
import { CmiClient } from '../src/client/index.js';

// POST /users/validate_login (docs/api.md#validate-a-login-or-email), as the PHP wrapper's validate_login
// and validate_mail send it: {"tmp_holder": {"login": ...}} or {"tmp_holder": {"email": ...}}. It tells
// whether an account holds a name, so only holders of users.create may ask.

describe('validate_login', () => {
  let t: TestApp;
  let base: string;
  before(async () => {
    t = await createTestApp();
    base = `http://127.0.0.1:${await listenLocally(t.app)}`;
  });
  after(() => t.close());

  const ask = async (body: string, { path = '/users/validate_login.json', authorization = t.adminAuth, contentType = 'application/json' } = {}) => {
    const res = await fetch(`${base}${path}`, { method: 'POST', headers: { authorization, accept: contentType, 'content-type': contentType }, body });
    return { status: res.status, body: await res.text() };
  };

  it('a free login and a free email are valid', async () => {
    assert.deepEqual(await ask('{"tmp_holder":{"login":"newcomer"}}'), { status: 200, body: '{"user":{"valid":true,"message":"Login is available"}}' });
    assert.deepEqual(await ask('{"tmp_holder":{"email":"newcomer@example.com"}}'), { status: 200, body: '{"user":{"valid":true,"message":"Email is available"}}' });
    assert.deepEqual(await ask('{"login":"newcomer","email":"newcomer@example.com"}'), { status: 200, body: '{"user":{"valid":true,"message":"Login and email are available"}}' });
  });

  it('a taken login or email is not, in any case, and a login taken as another user\'s email neither', async () => {
    assert.deepEqual(await ask('{"tmp_holder":{"login":"ALICE"}}'), { status: 200, body: '{"user":{"valid":false,"message":"Login has already been taken"}}' });
    assert.deepEqual(await ask('{"tmp_holder":{"email":"Alice@Example.com"}}'), { status: 200, body: '{"user":{"valid":false,"message":"Email has already been taken"}}' });
    assert.deepEqual(await ask('{"tmp_holder":{"login":"alice@example.com"}}'), { status: 200, body: '{"user":{"valid":false,"message":"Login has already been taken"}}' });
  });

  it('a login or email cmi would refuse is not valid, and says why', async () => {
    assert.deepEqual(await ask('{"tmp_holder":{"login":"-x"}}'), { status: 200, body: '{"user":{"valid":false,"message":"Login must be 2-40 characters of letters, digits and _ @ . -, not starting with - or @"}}' });
    assert.deepEqual(await ask('{"tmp_holder":{"email":"no-at-sign"}}'), { status: 200, body: '{"user":{"valid":false,"message":"Email is invalid"}}' });
  });

  it('answers XML, and reads an XML body', async () => {
    const res = await ask('<tmp_holder><login>alice</login></tmp_holder>', { path: '/users/validate_login.xml', contentType: 'application/xml' });
    assert.deepEqual(res, { status: 200, body: '<?xml version="1.0" encoding="UTF-8"?>\n<user>\n  <valid type="boolean">false</valid>\n  <message>Login has already been taken</message>\n</user>\n' });
  });

  it('a body with neither, or a field of the wrong type or length, is a 422', async () => {
    assert.deepEqual(await ask('{"tmp_holder":{}}'), { status: 422, body: '{"errors":{"base":["tmp_holder must give login or email"]}}' });
    assert.deepEqual(await ask('{"tmp_holder":{"login":7}}'), { status: 422, body: '{"errors":{"login":["must be a string"]}}' });
    assert.deepEqual(await ask(JSON.stringify({ tmp_holder: { login: 'x'.repeat(41) } })), { status: 422, body: '{"errors":{"login":["is too long (maximum is 40 characters)"]}}' });
  });

  it('through cmi/client, in JSON and XML', async () => {
    for (const format of ['json', 'xml'] as const) {
      const client = new CmiClient({ baseUrl: base, login: ADMIN.login, password: ADMIN.password, format });
      assert.deepEqual(await client.users.validateLogin({ login: 'newcomer' }), { valid: true, message: 'Login is available' });
      assert.deepEqual(await client.users.validateLogin({ email: 'alice@example.com' }), { valid: false, message: 'Email has already been taken' });
    }
  });

  it('needs users.create: a user is refused 403, no credentials 401', async () => {
    assert.deepEqual(await ask('{"tmp_holder":{"login":"admin"}}', { authorization: t.aliceAuth }), { status: 403, body: '{"errors":{"base":["You are not authorized to perform this action (needs users.create)"]}}' });
    assert.deepEqual(await ask('{"tmp_holder":{"login":"admin"}}', { authorization: t.basic('alice', 'wrong-password') }), { status: 401, body: '{"errors":{"base":["Access denied"]}}' });
  });
});
