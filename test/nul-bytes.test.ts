import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import type { KyselyPlugin } from 'kysely';
import { buildApp } from '../src/app/app.js';
import { createTestApp, type TestApp } from './support/app.js';
import { assertAccessDenied } from './support/http.js';
import { validateResponses } from './support/response-validation.js';

// U+0000 anywhere in a string is refused before it reaches the database (docs/limits.md#nul-characters):
// PostgreSQL cannot store it, and SQLite must answer the same.
const NUL = 'must not contain the NUL character (U+0000)';
const refused = (field: string) => JSON.stringify({ errors: { [field]: [NUL] } });

describe('NUL characters are refused with 401 or 422, on every database', () => {
  let t: TestApp;
  let app: FastifyInstance;
  let statements = 0;
  before(async () => {
    t = await createTestApp();
    // The same database, counting the statements the app runs through it.
    const counting: KyselyPlugin = {
      transformQuery: ({ node }) => ((statements += 1), node),
      transformResult: ({ result }) => Promise.resolve(result),
    };
    app = await buildApp({ config: t.config, database: { ...t.database, db: t.database.db.withPlugin(counting) }, clock: t.time.clock, extend: validateResponses(), logger: false });
  });
  after(async () => {
    await app.close();
    await t.close();
  });

  const send = (method: 'POST' | 'PUT', url: string, payload: string, contentType = 'application/json') =>
    app.inject({ method, url, headers: { authorization: t.adminAuth, 'content-type': contentType }, payload });
  const newUser = (fields: Record<string, string>) =>
    JSON.stringify({ user: { login: 'carol', email: 'carol@example.com', password: 'carol-password', ...fields } });
  const assertRefused = (res: LightMyRequestResponse, field: string) => {
    assert.equal(res.statusCode, 422, res.body);
    assert.equal(res.body, refused(field));
  };

  for (const field of ['login', 'email', 'password', 'first_name', 'last_name', 'time_zone', 'locale', 'role']) {
    it(`POST /users: a ${field} with U+0000 is 422 naming it`, async () => {
      assertRefused(await send('POST', '/users.json', newUser({ [field]: field === 'email' ? 'ca\u0000rol@example.com' : 'ab\u0000cdefgh' })), field);
    });
  }

  it('PUT /users/:id: a name with U+0000 is 422, and nothing changes', async () => {
    assertRefused(await send('PUT', `/users/${t.alice.id}.json`, JSON.stringify({ user: { first_name: 'Al\u0000ice' } })), 'first_name');
    const alice = await t.database.db.selectFrom('users').select('first_name').where('id', '=', t.alice.id).executeTakeFirstOrThrow();
    assert.equal(alice.first_name, 'Alice');
  });

  for (const reference of ['&#0;', '&#x0;', '&#x00;']) {
    it(`XML: ${reference} in a field is 422 naming it`, async () => {
      const xml = `<user><login>carol</login><email>carol@example.com</email><password>carol-password</password><last_name>a${reference}b</last_name></user>`;
      assertRefused(await send('POST', '/users.json', xml, 'application/xml'), 'last_name');
    });
  }

  for (const field of ['error_class', 'message', 'backtrace']) {
    it(`an infrastructure-error report with U+0000 in ${field} is 422 naming it, and nothing is recorded`, async () => {
      const report = { error_class: 'Timeout', message: 'm', backtrace: 'b', [field]: 'x\u0000y' };
      assertRefused(await send('POST', '/sysadmin_tools/infrastructure/errors.json', JSON.stringify({ infrastructure_error: report })), field);
    });
  }

  for (const [what, credentials] of [['login', 'ad\u0000min:admin-password'], ['password', 'admin:admin-pass\u0000word']] as const) {
    it(`Basic credentials with U+0000 in the ${what} are 401, without a statement`, async () => {
      const before = statements;
      const res = await app.inject({ url: '/version.json', headers: { authorization: `Basic ${Buffer.from(credentials).toString('base64')}` } });
      assertAccessDenied(res);
      assert.equal(statements, before, 'no statement ran');
    });
  }

  const paths: Array<[string, number]> = [
    ['/users/%00.json', 404],
    ['/users/1%00.json', 404],
    ['/users%00.json', 404],
    ['/users.json/page/%00', 422],
    ['/users.json?page=%00', 422],
    ['/users.json?per_page=1%00', 422],
    ['/users.json?x=%00', 422],
    ['/users.json?q=a%00', 422],
    ['/sysadmin_tools/infrastructure/errors/%00.json', 404],
    ['/%00', 404],
    ['/version.json%00', 406],
  ];
  for (const [url, status] of paths) {
    it(`GET ${url} is ${status}`, async () => {
      const res = await app.inject({ url, headers: { authorization: t.adminAuth } });
      assert.equal(res.statusCode, status, res.body);
    });
  }

  it('none of it was a fault: infrastructure_errors is empty', async () => {
    assert.deepEqual(await t.database.db.selectFrom('infrastructure_errors').selectAll().execute(), []);
  });

  it('a fault of cmi whose message holds U+0000 is recorded, the character replaced by U+FFFD', async () => {
    t.app.faults.capture(new Error('bad \u0000 byte'), { component: 'test' });
    await t.app.faults.flush();
    const [record] = await t.database.db.selectFrom('infrastructure_errors').selectAll().execute();
    assert.equal(record?.message, 'bad \uFFFD byte');
  });
});
