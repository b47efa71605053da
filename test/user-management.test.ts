import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, afterEach, before, beforeEach, describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { ADMIN, ALICE, createTestApp, type TestApp } from './support/app.js';
import { forbiddenJson } from './support/error-reports.js';
import { roleXml } from './support/roles.js';
import { assertAccessDenied, login, withCookie } from './support/http.js';

const XML_DECLARATION = '<?xml version="1.0" encoding="UTF-8"?>\n';
const START = '2026-11-20T10:00:00+00:00';
const NOT_FOUND_JSON = '{"errors":{"base":["Resource not found"]}}';
const LAST_ADMIN = 'The last active administrator cannot be deleted, suspended or made a user';
const LAST_ADMIN_JSON = `{"errors":{"base":["${LAST_ADMIN}"]}}`;
const LAST_ADMIN_XML = `${XML_DECLARATION}<errors>\n  <error>${LAST_ADMIN}</error>\n</errors>\n`;
const LOGIN_RULE = 'must be 2-40 characters of letters, digits and _ @ . -, not starting with - or @';

interface Call {
  auth?: string;
  /** A JSON body (an object, sent as JSON) or a string sent as is. */
  body?: unknown;
  contentType?: string;
  headers?: Record<string, string>;
}

function call(t: TestApp, method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, options: Call = {}): Promise<LightMyRequestResponse> {
  const headers: Record<string, string> = { ...options.headers };
  headers.authorization = options.auth ?? t.adminAuth;
  if (options.body !== undefined) headers['content-type'] = options.contentType ?? 'application/json';
  const payload = options.body === undefined ? undefined : typeof options.body === 'string' ? options.body : JSON.stringify(options.body);
  return t.app.inject({ method, url, headers, ...(payload === undefined ? {} : { payload }) });
}

type Fields = {
  id: number;
  login: string;
  email: string;
  first_name: string;
  last_name: string;
  status: 'active' | 'suspended' | 'deleted';
  time_zone: string | null;
  locale: string | null;
  created_at: string;
  updated_at: string;
  activated_at: string | null;
  suspend_at: string | null;
  deleted_at: string | null;
  password_changed_at: string | null;
  role: 'admin' | 'user';
};

/** The system roles as the record shows them, with their permissions (set with each test app: their times are the migration's). */
let ROLES: TestApp['systemRoles'];

const ADMIN_FIELDS: Fields = {
  id: 1, login: 'admin', email: 'admin@example.com', first_name: 'Ada', last_name: 'Admin', status: 'active', time_zone: 'UTC', locale: 'en',
  created_at: START, updated_at: START, activated_at: START, suspend_at: null, deleted_at: null, password_changed_at: START, role: 'admin',
};
const ALICE_FIELDS: Fields = {
  id: 2, login: 'alice', email: 'alice@example.com', first_name: 'Alice', last_name: 'User', status: 'active', time_zone: null, locale: null,
  created_at: START, updated_at: START, activated_at: START, suspend_at: null, deleted_at: null, password_changed_at: START, role: 'user',
};

/** The exact JSON of one user record, fields in the order docs/api.md#users shows. */
function userJson(fields: Fields, apiKey?: string): string {
  const { role, ...rest } = fields;
  return JSON.stringify({ user: { ...rest, roles: [{ role: ROLES[role] }], bucket_id: null, user_group_id: null, totp_enabled: false, registered_yubikey: false, ...(apiKey === undefined ? {} : { api_key: apiKey }) } });
}

/** The exact XML of one user record. */
function userXml(fields: Fields, apiKey?: string): string {
  const text = (name: string, value: string | null) => (value === null ? `  <${name} nil="true"/>\n` : `  <${name}>${value}</${name}>\n`);
  const time = (name: string, value: string | null) => (value === null ? `  <${name} nil="true"/>\n` : `  <${name} type="datetime">${value}</${name}>\n`);
  const role = ROLES[fields.role];
  return (
    `${XML_DECLARATION}<user>\n` +
    `  <id type="integer">${fields.id}</id>\n` +
    text('login', fields.login) + text('email', fields.email) + text('first_name', fields.first_name) + text('last_name', fields.last_name) +
    text('status', fields.status) + text('time_zone', fields.time_zone) + text('locale', fields.locale) +
    time('created_at', fields.created_at) + time('updated_at', fields.updated_at) + time('activated_at', fields.activated_at) +
    time('suspend_at', fields.suspend_at) + time('deleted_at', fields.deleted_at) + time('password_changed_at', fields.password_changed_at) +
    `  <roles type="array">\n${roleXml(role, '    ')}  </roles>\n  <bucket_id nil="true"/>\n  <user_group_id nil="true"/>\n` +
    '  <totp_enabled type="boolean">false</totp_enabled>\n  <registered_yubikey type="boolean">false</registered_yubikey>\n' +
    (apiKey === undefined ? '' : `  <api_key>${apiKey}</api_key>\n`) +
    '</user>\n'
  );
}

const userRow = (t: TestApp, id: number) => t.database.db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();

function assertStatus(res: LightMyRequestResponse, status: number, body?: string): void {
  assert.equal(res.statusCode, status, `${res.statusCode}: ${res.body}`);
  if (body !== undefined) assert.equal(res.body, body);
}

function assertNoContent(res: LightMyRequestResponse): void {
  assertStatus(res, 204, '');
}

async function assertCanLogIn(t: TestApp, login: string, password: string, expected: boolean): Promise<void> {
  const res = await call(t, 'GET', '/version.json', { auth: t.basic(login, password) });
  if (expected) assert.equal(res.statusCode, 200, `${login}:${password} -> ${res.statusCode} ${res.body}`);
  else assertAccessDenied(res);
}

const BOB_INPUT = {
  login: 'bob',
  email: 'Bob@Example.com',
  password: 'bob-password',
  first_name: 'Bob',
  last_name: 'Builder',
  time_zone: 'Europe/London',
  locale: 'en',
  role: 'user',
};

describe('POST /users (create)', () => {
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp();
    ROLES = t.systemRoles;
    t.time.advance(60);
  });
  afterEach(() => t.close());

  it('creates a user from a wrapped JSON body: 201, the exact record, its location; the password logs in', async () => {
    const res = await call(t, 'POST', '/users.json', { body: { user: BOB_INPUT } });
    assert.equal(res.statusCode, 201);
    assert.equal(res.headers['content-type'], 'application/json; charset=utf-8');
    assert.equal(res.headers.location, '/users/3.json');
    assert.equal(
      res.body,
      '{"user":{"id":3,"login":"bob","email":"bob@example.com","first_name":"Bob","last_name":"Builder","status":"active",' +
        '"time_zone":"Europe/London","locale":"en","created_at":"2026-11-20T10:01:00+00:00","updated_at":"2026-11-20T10:01:00+00:00",' +
        '"activated_at":"2026-11-20T10:01:00+00:00","suspend_at":null,"deleted_at":null,"password_changed_at":"2026-11-20T10:01:00+00:00",' +
        `"roles":[{"role":${JSON.stringify(ROLES.user)}}],"bucket_id":null,"user_group_id":null,"totp_enabled":false,"registered_yubikey":false}}`,
    );
    await assertCanLogIn(t, 'bob', 'bob-password', true);
    await assertCanLogIn(t, 'bob@example.com', 'bob-password', true);
  });

  it('creates a user from an XML body: 201 and the exact XML record', async () => {
    const body =
      '<?xml version="1.0" encoding="UTF-8"?>\n<user><login>bob</login><email>Bob@Example.com</email><password>bob-password</password>' +
      '<first_name>Bob</first_name><last_name>Builder</last_name><time_zone>Europe/London</time_zone><locale>en</locale><role>admin</role></user>';
    const res = await call(t, 'POST', '/users.xml', { body, contentType: 'application/xml' });
    assert.equal(res.statusCode, 201);
    assert.equal(res.headers['content-type'], 'application/xml; charset=utf-8');
    assert.equal(res.headers.location, '/users/3.xml');
    assert.equal(
      res.body,
      `<?xml version="1.0" encoding="UTF-8"?>
<user>
  <id type="integer">3</id>
  <login>bob</login>
  <email>bob@example.com</email>
  <first_name>Bob</first_name>
  <last_name>Builder</last_name>
  <status>active</status>
  <time_zone>Europe/London</time_zone>
  <locale>en</locale>
  <created_at type="datetime">2026-11-20T10:01:00+00:00</created_at>
  <updated_at type="datetime">2026-11-20T10:01:00+00:00</updated_at>
  <activated_at type="datetime">2026-11-20T10:01:00+00:00</activated_at>
  <suspend_at nil="true"/>
  <deleted_at nil="true"/>
  <password_changed_at type="datetime">2026-11-20T10:01:00+00:00</password_changed_at>
  <roles type="array">
${roleXml(ROLES.admin, '    ')}  </roles>
  <bucket_id nil="true"/>
  <user_group_id nil="true"/>
  <totp_enabled type="boolean">false</totp_enabled>
  <registered_yubikey type="boolean">false</registered_yubikey>
</user>
`,
    );
    // An administrator made by an administrator sees everyone.
    const list = await call(t, 'GET', '/users.json', { auth: t.basic('bob', 'bob-password') });
    assert.equal(list.headers['x-total'], '3');
  });

  it('accepts the record without its root, and defaults role to user and time_zone/locale to null', async () => {
    const res = await call(t, 'POST', '/users.json', { body: { login: 'carol', email: 'carol@example.com', password: 'carol-password' } });
    assert.equal(res.statusCode, 201);
    assert.equal(
      res.body,
      userJson({
        id: 3, login: 'carol', email: 'carol@example.com', first_name: '', last_name: '', status: 'active', time_zone: null, locale: null,
        created_at: '2026-11-20T10:01:00+00:00', updated_at: '2026-11-20T10:01:00+00:00', activated_at: '2026-11-20T10:01:00+00:00',
        suspend_at: null, deleted_at: null, password_changed_at: '2026-11-20T10:01:00+00:00', role: 'user',
      }),
    );
  });

  it('stores only a hash of the password', async () => {
    await call(t, 'POST', '/users.json', { body: { user: BOB_INPUT } });
    const row = await userRow(t, 3);
    assert.ok(row);
    assert.notEqual(row.password_hash, 'bob-password');
    assert.doesNotMatch(row.password_hash, /bob-password/);
    assert.equal(row.api_key_hash, null);
  });

  it('names every bad field in one 422, exactly, in JSON', async () => {
    const res = await call(t, 'POST', '/users.json', {
      body: { user: { login: '-bad', email: 'not-an-email', password: 'short', first_name: 'Bob', role: 'root' } },
    });
    assert.equal(res.statusCode, 422);
    assert.equal(res.headers['content-type'], 'application/json; charset=utf-8');
    assert.equal(res.headers['cache-control'], 'no-cache');
    assert.equal(
      res.body,
      `{"errors":{"login":["${LOGIN_RULE}"],"email":["is invalid"],"password":["is too short (minimum is 8 characters)"],"role":["must be admin or user"]}}`,
    );
    assert.equal((await t.database.db.selectFrom('users').select('id').execute()).length, 2);
  });

  it('names every bad field in one 422, exactly, in XML as full messages', async () => {
    const res = await call(t, 'POST', '/users.xml', {
      body: '<user><login>@bad</login><email>a b@c</email><password>short</password></user>',
      contentType: 'application/xml',
    });
    assert.equal(res.statusCode, 422);
    assert.equal(res.headers['content-type'], 'application/xml; charset=utf-8');
    assert.equal(
      res.body,
      `${XML_DECLARATION}<errors>\n  <error>Login ${LOGIN_RULE}</error>\n  <error>Email is invalid</error>\n` +
        '  <error>Password is too short (minimum is 8 characters)</error>\n</errors>\n',
    );
  });

  it('names every missing required field', async () => {
    const res = await call(t, 'POST', '/users.json', { body: { user: {} } });
    assert.equal(res.statusCode, 422);
    assert.equal(res.body, '{"errors":{"login":["can\'t be blank"],"email":["can\'t be blank"],"password":["can\'t be blank"]}}');
  });

  it('names fields of the wrong type', async () => {
    const res = await call(t, 'POST', '/users.json', { body: { user: { login: 12, email: 'x@example.com', password: ['a'], first_name: true } } });
    assert.equal(res.statusCode, 422);
    assert.equal(res.body, '{"errors":{"login":["must be a string"],"password":["must be a string"],"first_name":["must be a string"]}}');
  });

  const logins: Array<[login: string, valid: boolean]> = [
    ['ab', true],
    ['a'.repeat(40), true],
    ['x_y.z-1@host', true],
    ['_x', true],
    ['a', false],
    ['a'.repeat(41), false],
    ['-ab', false],
    ['@ab', false],
    ['a b', false],
    ['ab!', false],
    ['äb', false],
    ['', false],
  ];
  for (const [login, valid] of logins) {
    it(`${valid ? 'accepts' : 'refuses'} the login ${JSON.stringify(login.length > 12 ? `${login.slice(0, 3)}... (${login.length})` : login)}`, async () => {
      const res = await call(t, 'POST', '/users.json', { body: { user: { login, email: 'new@example.com', password: 'new-password' } } });
      if (valid) {
        assert.equal(res.statusCode, 201, res.body);
        assert.equal((JSON.parse(res.body) as { user: { login: string } }).user.login, login);
      } else {
        assert.equal(res.statusCode, 422);
        assert.deepEqual(Object.keys((JSON.parse(res.body) as { errors: object }).errors), ['login']);
      }
    });
  }

  const emails: Array<[email: string, valid: boolean]> = [
    ['new@example.com', true],
    ['ops@localhost', true],
    ['first.last+tag@sub.example.org', true],
    ['nope', false],
    ['a@', false],
    ['@b.example', false],
    ['a b@example.com', false],
    ['a@@example.com', false],
    ['', false],
  ];
  for (const [email, valid] of emails) {
    it(`${valid ? 'accepts' : 'refuses'} the email ${JSON.stringify(email)}`, async () => {
      const res = await call(t, 'POST', '/users.json', { body: { user: { login: 'newbie', email, password: 'new-password' } } });
      if (valid) assert.equal(res.statusCode, 201, res.body);
      else {
        assert.equal(res.statusCode, 422);
        assert.deepEqual(Object.keys((JSON.parse(res.body) as { errors: object }).errors), ['email']);
      }
    });
  }

  const passwords: Array<[name: string, password: string, error: string | undefined]> = [
    ['8 characters', 'abcdefgh', undefined],
    ['8 two-byte characters', 'éééééééé', undefined],
    ['256 bytes', 'p'.repeat(256), undefined],
    ['128 two-byte characters (256 bytes)', 'é'.repeat(128), undefined],
    ['7 characters', 'abcdefg', 'is too short (minimum is 8 characters)'],
    ['4 emoji (4 characters, 16 bytes)', '😀'.repeat(4), 'is too short (minimum is 8 characters)'],
    ['129 two-byte characters (258 bytes)', 'é'.repeat(129), 'is too long (maximum is 256 bytes)'],
    ['257 bytes', 'p'.repeat(257), 'is too long (maximum is 256 bytes)'],
  ];
  for (const [name, password, error] of passwords) {
    it(`${error ? 'refuses' : 'accepts'} a password of ${name}${error ? `: ${error}` : ', which then logs in'}`, async () => {
      const res = await call(t, 'POST', '/users.json', { body: { user: { login: 'newbie', email: 'new@example.com', password } } });
      if (error === undefined) {
        assert.equal(res.statusCode, 201, res.body);
        await assertCanLogIn(t, 'newbie', password, true);
      } else {
        assert.equal(res.statusCode, 422);
        assert.equal(res.body, JSON.stringify({ errors: { password: [error] } }));
      }
    });
  }

  it('refuses a login that is taken: 422 naming login', async () => {
    const res = await call(t, 'POST', '/users.json', { body: { user: { login: 'alice', email: 'alice2@example.com', password: 'new-password' } } });
    assert.equal(res.statusCode, 422);
    assert.equal(res.body, '{"errors":{"login":["has already been taken"]}}');
  });

  it('refuses an email that is taken, in any case: 422 naming email', async () => {
    const res = await call(t, 'POST', '/users.json', { body: { user: { login: 'alice2', email: 'ALICE@example.com', password: 'new-password' } } });
    assert.equal(res.statusCode, 422);
    assert.equal(res.body, '{"errors":{"email":["has already been taken"]}}');
  });

  it('refuses a taken login in XML with the full message', async () => {
    const res = await call(t, 'POST', '/users.xml', {
      body: '<user><login>alice</login><email>alice2@example.com</email><password>new-password</password></user>',
      contentType: 'application/xml',
    });
    assert.equal(res.statusCode, 422);
    assert.equal(res.body, `${XML_DECLARATION}<errors>\n  <error>Login has already been taken</error>\n</errors>\n`);
  });

  it('names both login and email when both are taken', async () => {
    const res = await call(t, 'POST', '/users.json', { body: { user: { login: 'alice', email: 'alice@example.com', password: 'new-password' } } });
    assert.equal(res.statusCode, 422);
    assert.equal(res.body, '{"errors":{"login":["has already been taken"],"email":["has already been taken"]}}');
  });

  it('names a taken login together with the other bad fields', async () => {
    const res = await call(t, 'POST', '/users.json', { body: { user: { login: 'alice', email: 'fresh@example.com', password: 'short' } } });
    assert.equal(res.statusCode, 422);
    assert.equal(res.body, '{"errors":{"login":["has already been taken"],"password":["is too short (minimum is 8 characters)"]}}');
  });
});

describe('GET /users/:id', () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp();
    ROLES = t.systemRoles;
  });
  after(() => t.close());

  it('answers an administrator with the exact record in JSON, with ETag and Cache-Control', async () => {
    const res = await call(t, 'GET', '/users/2.json');
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['content-type'], 'application/json; charset=utf-8');
    assert.equal(res.headers['cache-control'], 'max-age=0, private, must-revalidate');
    assert.match(String(res.headers.etag), /^W\/".+"$/);
    assert.equal(res.body, userJson(ALICE_FIELDS));
  });

  it('answers in XML', async () => {
    const res = await call(t, 'GET', '/users/1.xml');
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['content-type'], 'application/xml; charset=utf-8');
    assert.equal(res.body, userXml(ADMIN_FIELDS));
  });

  it('lets a user read itself', async () => {
    assertStatus(await call(t, 'GET', '/users/2.json', { auth: t.aliceAuth }), 200, userJson(ALICE_FIELDS));
  });

  it('forbids a user another user\'s record, existing or not', async () => {
    assertStatus(await call(t, 'GET', '/users/1.json', { auth: t.aliceAuth }), 403, forbiddenJson('users.read'));
    assertStatus(await call(t, 'GET', '/users/999.json', { auth: t.aliceAuth }), 403, forbiddenJson('users.read'));
  });

  it('answers 404 for an unknown or non-integer id', async () => {
    for (const url of ['/users/999.json', '/users/0.json', '/users/abc.json', '/users/-1.json', '/users/1.5.json']) {
      assertStatus(await call(t, 'GET', url), 404, NOT_FOUND_JSON);
    }
    assertStatus(
      await call(t, 'GET', '/users/999.xml'),
      404,
      `${XML_DECLARATION}<errors>\n  <error>Resource not found</error>\n</errors>\n`,
    );
  });
});

describe('PUT /users/:id', () => {
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp();
    ROLES = t.systemRoles;
    t.time.advance(120);
  });
  afterEach(() => t.close());

  it('changes the fields given in a wrapped body: 204, no body; the record and database show them', async () => {
    const res = await call(t, 'PUT', '/users/2.json', { body: { user: { first_name: 'Alicia', time_zone: 'Europe/Paris', email: 'Alicia@Example.com' } } });
    assertNoContent(res);
    const row = await userRow(t, 2);
    assert.equal(row?.first_name, 'Alicia');
    assert.equal(row?.last_name, 'User');
    assert.equal(row?.time_zone, 'Europe/Paris');
    assert.equal(row?.email, 'alicia@example.com');
    assert.equal(row?.updated_at, '2026-11-20T10:02:00.000Z');
    const updated = { ...ALICE_FIELDS, first_name: 'Alicia', email: 'alicia@example.com', time_zone: 'Europe/Paris', updated_at: '2026-11-20T10:02:00+00:00' };
    assertStatus(await call(t, 'GET', '/users/2.json'), 200, userJson(updated));
    // The password is unchanged, and the new email logs in.
    await assertCanLogIn(t, 'alicia@example.com', ALICE.password, true);
  });

  it('changes the fields given in a body without the root', async () => {
    assertNoContent(await call(t, 'PUT', '/users/2.json', { body: { last_name: 'Liddell', locale: 'en-GB' } }));
    const row = await userRow(t, 2);
    assert.equal(row?.last_name, 'Liddell');
    assert.equal(row?.locale, 'en-GB');
    assert.equal(row?.first_name, 'Alice');
  });

  it('changes the fields given in an XML body; nil and empty clear time_zone and locale', async () => {
    assertNoContent(
      await call(t, 'PUT', '/users/1.xml', {
        body: '<?xml version="1.0" encoding="UTF-8"?>\n<user><last_name>Lovelace</last_name><time_zone nil="true"/><locale></locale></user>',
        contentType: 'application/xml',
      }),
    );
    const expected = { ...ADMIN_FIELDS, last_name: 'Lovelace', time_zone: null, locale: null, updated_at: '2026-11-20T10:02:00+00:00' };
    assertStatus(await call(t, 'GET', '/users/1.xml'), 200, userXml(expected));
  });

  it('accepts an empty body and a bare "?" as OnApp clients send them: nothing changes', async () => {
    assertNoContent(await call(t, 'PUT', '/users/2.json?', { body: '' }));
    assertNoContent(await call(t, 'PUT', '/users/2.json', { body: { user: {} } }));
    const row = await userRow(t, 2);
    assert.equal(row?.first_name, 'Alice');
    assert.equal(row?.email, 'alice@example.com');
  });

  it('lets a user change its own fields, but not its role', async () => {
    assertNoContent(await call(t, 'PUT', '/users/2.json', { auth: t.aliceAuth, body: { user: { first_name: 'Al' } } }));
    assert.equal((await userRow(t, 2))?.first_name, 'Al');
    assertStatus(await call(t, 'PUT', '/users/2.json', { auth: t.aliceAuth, body: { user: { role: 'admin' } } }), 403, forbiddenJson('users.update'));
    assert.equal((await userRow(t, 2))?.role, 'user');
  });

  it('forbids a user to change another user', async () => {
    assertStatus(await call(t, 'PUT', '/users/1.json', { auth: t.aliceAuth, body: { user: { first_name: 'Mallory' } } }), 403, forbiddenJson('users.update'));
    assert.equal((await userRow(t, 1))?.first_name, 'Ada');
  });

  it('lets an administrator change a role', async () => {
    assertNoContent(await call(t, 'PUT', '/users/2.json', { body: { user: { role: 'admin' } } }));
    assert.equal((await userRow(t, 2))?.role, 'admin');
    const list = await call(t, 'GET', '/users.json', { auth: t.aliceAuth });
    assert.equal(list.headers['x-total'], '2');
  });

  it('names every bad field in a 422 and changes nothing', async () => {
    const res = await call(t, 'PUT', '/users/2.json', { body: { user: { first_name: 'Changed', email: 'bad', password: 'short', role: 'boss' } } });
    assert.equal(res.statusCode, 422);
    assert.equal(res.body, '{"errors":{"email":["is invalid"],"password":["is too short (minimum is 8 characters)"],"role":["must be admin or user"]}}');
    assert.equal((await userRow(t, 2))?.first_name, 'Alice');
  });

  it('refuses a login or email another user has: 422', async () => {
    assertStatus(await call(t, 'PUT', '/users/2.json', { body: { login: 'admin' } }), 422, '{"errors":{"login":["has already been taken"]}}');
    assertStatus(await call(t, 'PUT', '/users/2.json', { body: { email: 'ADMIN@example.com' } }), 422, '{"errors":{"email":["has already been taken"]}}');
    const row = await userRow(t, 2);
    assert.equal(row?.login, 'alice');
    assert.equal(row?.email, 'alice@example.com');
  });

  it('answers 404 for an unknown id', async () => {
    assertStatus(await call(t, 'PUT', '/users/999.json', { body: { first_name: 'Nobody' } }), 404, NOT_FOUND_JSON);
  });

  it('changes the password: the old one fails on the very next request, the new one works', async () => {
    // Used once first, so a cached verification of the old password exists.
    await assertCanLogIn(t, ALICE.login, ALICE.password, true);
    assertNoContent(await call(t, 'PUT', '/users/2.json', { body: { user: { password: 'alice-new-password' } } }));
    await assertCanLogIn(t, ALICE.login, ALICE.password, false);
    await assertCanLogIn(t, ALICE.email, ALICE.password, false);
    await assertCanLogIn(t, ALICE.login, 'alice-new-password', true);
    await assertCanLogIn(t, ALICE.email, 'alice-new-password', true);
    const row = await userRow(t, 2);
    assert.equal(row?.password_changed_at, '2026-11-20T10:02:00.000Z');
  });

  it('lets a user change its own password with the old one as current_password, which then stops working', async () => {
    assertNoContent(await call(t, 'PUT', '/users/2.json', { auth: t.aliceAuth, body: { password: 'alice-new-password', current_password: ALICE.password } }));
    await assertCanLogIn(t, ALICE.login, ALICE.password, false);
    await assertCanLogIn(t, ALICE.login, 'alice-new-password', true);
    const res = await call(t, 'GET', '/users/2.json', { auth: t.basic(ALICE.login, 'alice-new-password') });
    assert.equal((JSON.parse(res.body) as { user: { password_changed_at: string } }).user.password_changed_at, '2026-11-20T10:02:00+00:00');
  });

  // docs/api.md#put-usersid: a stolen cookie or API key alone cannot take the account.
  describe('a user changing its own password needs current_password', () => {
    const passwordUnchanged = async () => {
      await assertCanLogIn(t, ALICE.login, ALICE.password, true);
      await assertCanLogIn(t, ALICE.login, 'alice-new-password', false);
      assert.equal((await userRow(t, 2))?.password_changed_at, '2026-11-20T10:00:00.000Z');
    };

    it('without it: 422 naming current_password, and nothing changes (other fields neither)', async () => {
      const res = await call(t, 'PUT', '/users/2.json', { auth: t.aliceAuth, body: { user: { password: 'alice-new-password', first_name: 'Al' } } });
      assertStatus(res, 422, '{"errors":{"current_password":["can\'t be blank"]}}');
      assert.equal(res.headers['content-type'], 'application/json; charset=utf-8');
      assert.equal((await userRow(t, 2))?.first_name, 'Alice');
      await passwordUnchanged();
    });

    it('with a wrong one: 422 "is incorrect", also for a session cookie alone, and in XML', async () => {
      assertStatus(
        await call(t, 'PUT', '/users/2.json', { auth: t.aliceAuth, body: { password: 'alice-new-password', current_password: 'not-her-password' } }),
        422,
        '{"errors":{"current_password":["is incorrect"]}}',
      );
      const login = await call(t, 'GET', '/version.json', { auth: t.aliceAuth });
      const cookie = String(login.headers['set-cookie']).split(';')[0] as string;
      const stolen = await t.app.inject({
        method: 'PUT',
        url: '/users/2.json',
        headers: { cookie, 'x-requested-with': 'test', 'content-type': 'application/json' },
        payload: JSON.stringify({ user: { password: 'alice-new-password' } }),
      });
      assertStatus(stolen, 422, '{"errors":{"current_password":["can\'t be blank"]}}');
      const xml = await t.app.inject({
        method: 'PUT',
        url: '/users/2.xml',
        headers: { cookie, 'x-requested-with': 'test', 'content-type': 'application/xml' },
        payload: '<user><password>alice-new-password</password><current_password>wrong-guess</current_password></user>',
      });
      assertStatus(xml, 422, `${XML_DECLARATION}<errors>\n  <error>Current password is incorrect</error>\n</errors>\n`);
      await passwordUnchanged();
    });

    it('with an API key: still the current password, not the key', async () => {
      const made = await call(t, 'POST', '/users/2/make_new_api_key.json', { auth: t.aliceAuth });
      const key = (JSON.parse(made.body) as { user: { api_key: string } }).user.api_key;
      assertStatus(
        await call(t, 'PUT', '/users/2.json', { auth: t.basic(ALICE.login, key), body: { password: 'alice-new-password', current_password: key } }),
        422,
        '{"errors":{"current_password":["is incorrect"]}}',
      );
      assertNoContent(await call(t, 'PUT', '/users/2.json', { auth: t.basic(ALICE.login, key), body: { password: 'alice-new-password', current_password: ALICE.password } }));
      await assertCanLogIn(t, ALICE.login, 'alice-new-password', true);
    });

    it('names it with the other bad fields in one 422', async () => {
      assertStatus(
        await call(t, 'PUT', '/users/2.json', { auth: t.aliceAuth, body: { email: 'bad', password: 'short', current_password: 42 } }),
        422,
        '{"errors":{"email":["is invalid"],"password":["is too short (minimum is 8 characters)"],"current_password":["must be a string"]}}',
      );
    });

    it('is not needed for other fields, nor from an administrator, for itself or for others', async () => {
      assertNoContent(await call(t, 'PUT', '/users/2.json', { auth: t.aliceAuth, body: { first_name: 'Al', current_password: 'ignored-here' } }));
      assertNoContent(await call(t, 'PUT', '/users/1.json', { body: { password: 'admin-new-password' } }));
      await assertCanLogIn(t, ADMIN.login, 'admin-new-password', true);
      assertNoContent(await call(t, 'PUT', '/users/2.json', { auth: t.basic(ADMIN.login, 'admin-new-password'), body: { password: 'alice-new-password' } }));
      await assertCanLogIn(t, ALICE.login, 'alice-new-password', true);
    });
  });
});

describe('DELETE /users/:id', () => {
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp();
    ROLES = t.systemRoles;
    t.time.advance(300);
  });
  afterEach(() => t.close());

  it('first marks the user deleted and ends its access, then removes the record, then answers 404', async () => {
    await assertCanLogIn(t, ALICE.login, ALICE.password, true);

    assertNoContent(await call(t, 'DELETE', '/users/2.json', { body: { force: 1 } }));
    const marked = await userRow(t, 2);
    assert.equal(marked?.status, 'deleted');
    assert.equal(marked?.deleted_at, '2026-11-20T10:05:00.000Z');
    await assertCanLogIn(t, ALICE.login, ALICE.password, false);
    await assertCanLogIn(t, ALICE.email, ALICE.password, false);
    const deleted = { ...ALICE_FIELDS, status: 'deleted' as const, deleted_at: '2026-11-20T10:05:00+00:00', updated_at: '2026-11-20T10:05:00+00:00' };
    assertStatus(await call(t, 'GET', '/users/2.json'), 200, userJson(deleted));

    assertNoContent(await call(t, 'DELETE', '/users/2.json', { body: { force: 1 } }));
    assert.equal(await userRow(t, 2), undefined);
    assertStatus(await call(t, 'GET', '/users/2.json'), 404, NOT_FOUND_JSON);
    assertStatus(await call(t, 'DELETE', '/users/2.json', { body: { force: 1 } }), 404, NOT_FOUND_JSON);
  });

  it('accepts no body, and an empty body with a JSON Content-Type', async () => {
    assertNoContent(await call(t, 'DELETE', '/users/2.json'));
    assert.equal((await userRow(t, 2))?.status, 'deleted');
    assertNoContent(await call(t, 'DELETE', '/users/2.json', { body: '', headers: { accept: 'application/json' } }));
    assert.equal(await userRow(t, 2), undefined);
  });

  it('works on an .xml path', async () => {
    assertNoContent(await call(t, 'DELETE', '/users/2.xml', { body: '<force>1</force>', contentType: 'application/xml' }));
    assert.equal((await userRow(t, 2))?.status, 'deleted');
  });

  it('answers 404 for an unknown id', async () => {
    assertStatus(await call(t, 'DELETE', '/users/999.json'), 404, NOT_FOUND_JSON);
  });

  it('is forbidden to a user, on itself and on others', async () => {
    assertStatus(await call(t, 'DELETE', '/users/2.json', { auth: t.aliceAuth }), 403, forbiddenJson('users.delete'));
    assertStatus(await call(t, 'DELETE', '/users/1.json', { auth: t.aliceAuth }), 403, forbiddenJson('users.delete'));
    assert.equal((await userRow(t, 1))?.status, 'active');
    assert.equal((await userRow(t, 2))?.status, 'active');
  });

  it('a user marked deleted comes back with activate, with its old password', async () => {
    assertNoContent(await call(t, 'DELETE', '/users/2.json'));
    assertStatus(await call(t, 'POST', '/users/2/activate.json'), 200);
    await assertCanLogIn(t, ALICE.login, ALICE.password, true);
  });
});

describe('POST /users/:id/suspend and /activate', () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp();
    ROLES = t.systemRoles;
  });
  after(() => t.close());

  it('suspend answers 200 with the suspended user; the user can no longer authenticate in any way', async () => {
    await assertCanLogIn(t, ALICE.login, ALICE.password, true);
    t.time.advance(600);
    const res = await call(t, 'POST', '/users/2/suspend.json', { body: '' });
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['content-type'], 'application/json; charset=utf-8');
    const suspended = { ...ALICE_FIELDS, status: 'suspended' as const, suspend_at: '2026-11-20T10:10:00+00:00', updated_at: '2026-11-20T10:10:00+00:00' };
    assert.equal(res.body, userJson(suspended));
    assert.equal((await userRow(t, 2))?.status, 'suspended');
    await assertCanLogIn(t, ALICE.login, ALICE.password, false);
    await assertCanLogIn(t, ALICE.email, ALICE.password, false);
  });

  it('activate answers 200 with the active user; the password works again', async () => {
    t.time.advance(600);
    const res = await call(t, 'POST', '/users/2/activate.json');
    const active = { ...ALICE_FIELDS, activated_at: '2026-11-20T10:20:00+00:00', updated_at: '2026-11-20T10:20:00+00:00' };
    assertStatus(res, 200, userJson(active));
    assert.equal((await userRow(t, 2))?.status, 'active');
    await assertCanLogIn(t, ALICE.login, ALICE.password, true);
  });

  it('suspend and activate answer in XML', async () => {
    t.time.advance(600);
    const suspended = {
      ...ALICE_FIELDS, status: 'suspended' as const, activated_at: '2026-11-20T10:20:00+00:00',
      suspend_at: '2026-11-20T10:30:00+00:00', updated_at: '2026-11-20T10:30:00+00:00',
    };
    assertStatus(await call(t, 'POST', '/users/2/suspend.xml'), 200, userXml(suspended));
    t.time.advance(60);
    const active = { ...ALICE_FIELDS, activated_at: '2026-11-20T10:31:00+00:00', updated_at: '2026-11-20T10:31:00+00:00' };
    assertStatus(await call(t, 'POST', '/users/2/activate.xml'), 200, userXml(active));
  });

  it('a suspended user\'s API key stops working too', async () => {
    const made = await call(t, 'POST', '/users/2/make_new_api_key.json');
    const key = (JSON.parse(made.body) as { user: { api_key: string } }).user.api_key;
    await assertCanLogIn(t, ALICE.login, key, true);
    assertStatus(await call(t, 'POST', '/users/2/suspend.json'), 200);
    await assertCanLogIn(t, ALICE.login, key, false);
    assertStatus(await call(t, 'POST', '/users/2/activate.json'), 200);
    await assertCanLogIn(t, ALICE.login, key, true);
  });

  it('are forbidden to a user, on itself and on others', async () => {
    for (const url of ['/users/2/suspend.json', '/users/2/activate.json', '/users/1/suspend.json', '/users/1/activate.json']) {
      assertStatus(await call(t, 'POST', url, { auth: t.aliceAuth }), 403, forbiddenJson('users.suspend'));
    }
    assert.equal((await userRow(t, 1))?.status, 'active');
  });

  it('answer 404 for an unknown id', async () => {
    assertStatus(await call(t, 'POST', '/users/999/suspend.json'), 404, NOT_FOUND_JSON);
    assertStatus(await call(t, 'POST', '/users/999/activate.json'), 404, NOT_FOUND_JSON);
  });
});

describe('POST /users/:id/make_new_api_key', () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp();
    ROLES = t.systemRoles;
  });
  after(() => t.close());

  const apiKeyOf = (res: LightMyRequestResponse) => (JSON.parse(res.body) as { user: { api_key: string } }).user.api_key;
  let firstKey = '';

  it('answers 200 with the user and a new 64-hex api_key; only its SHA-256 is stored', async () => {
    t.time.advance(60);
    const res = await call(t, 'POST', '/users/2/make_new_api_key.json', { body: '' });
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['content-type'], 'application/json; charset=utf-8');
    firstKey = apiKeyOf(res);
    assert.match(firstKey, /^[0-9a-f]{64}$/);
    assert.equal(res.body, userJson({ ...ALICE_FIELDS, updated_at: '2026-11-20T10:01:00+00:00' }, firstKey));
    const row = await userRow(t, 2);
    assert.equal(row?.api_key_hash, createHash('sha256').update(firstKey).digest('hex'));
    assert.doesNotMatch(JSON.stringify(row), new RegExp(firstKey));
  });

  it('never shows the key again', async () => {
    const one = await call(t, 'GET', '/users/2.json');
    assert.equal(one.body, userJson({ ...ALICE_FIELDS, updated_at: '2026-11-20T10:01:00+00:00' }));
    // "api_key" the field; users.api_key the permission of the user's role is no key.
    assert.doesNotMatch(one.body, /"api_key"/);
    const list = await call(t, 'GET', '/users.json');
    assert.doesNotMatch(list.body, /"api_key"/);
    const xml = await call(t, 'GET', '/users/2.xml');
    assert.doesNotMatch(xml.body, /<api_key>/);
  });

  it('the key works as the Basic password with the login and with the email; the password still works', async () => {
    await assertCanLogIn(t, ALICE.login, firstKey, true);
    await assertCanLogIn(t, ALICE.email, firstKey, true);
    await assertCanLogIn(t, ALICE.login, ALICE.password, true);
    const res = await call(t, 'GET', '/users.json', { auth: t.basic(ALICE.email, firstKey) });
    assert.equal(res.headers['x-total'], '1');
    // Another user's login with alice's key is refused.
    await assertCanLogIn(t, ADMIN.login, firstKey, false);
    await assertCanLogIn(t, ALICE.login, firstKey.toUpperCase(), false);
  });

  it('a new key revokes the old one at once', async () => {
    const res = await call(t, 'POST', '/users/2/make_new_api_key.json');
    const secondKey = apiKeyOf(res);
    assert.match(secondKey, /^[0-9a-f]{64}$/);
    assert.notEqual(secondKey, firstKey);
    await assertCanLogIn(t, ALICE.login, firstKey, false);
    await assertCanLogIn(t, ALICE.email, firstKey, false);
    await assertCanLogIn(t, ALICE.login, secondKey, true);
    await assertCanLogIn(t, ALICE.email, secondKey, true);
  });

  it('a user makes its own key, but not another user\'s', async () => {
    const res = await call(t, 'POST', '/users/2/make_new_api_key.json', { auth: t.aliceAuth });
    assert.equal(res.statusCode, 200);
    await assertCanLogIn(t, ALICE.login, apiKeyOf(res), true);
    const before = (await userRow(t, 1))?.api_key_hash;
    assertStatus(await call(t, 'POST', '/users/1/make_new_api_key.json', { auth: t.aliceAuth }), 403, forbiddenJson('users.api_key'));
    assert.equal((await userRow(t, 1))?.api_key_hash, before);
  });

  it('answers in XML with the api_key element last', async () => {
    t.time.advance(60);
    const res = await call(t, 'POST', '/users/1/make_new_api_key.xml');
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['content-type'], 'application/xml; charset=utf-8');
    const key = /<api_key>([0-9a-f]{64})<\/api_key>/.exec(res.body)?.[1];
    assert.ok(key, res.body);
    assert.equal(res.body, userXml({ ...ADMIN_FIELDS, updated_at: '2026-11-20T10:02:00+00:00' }, key));
    await assertCanLogIn(t, ADMIN.email, key, true);
  });

  it('answers 404 for an unknown id', async () => {
    assertStatus(await call(t, 'POST', '/users/999/make_new_api_key.json'), 404, NOT_FOUND_JSON);
  });
});

describe('the last active administrator', () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp();
    ROLES = t.systemRoles;
  });
  after(() => t.close());

  it('cannot be suspended: 422 with the exact body; nothing changes', async () => {
    assertStatus(await call(t, 'POST', '/users/1/suspend.json'), 422, LAST_ADMIN_JSON);
    assertStatus(await call(t, 'POST', '/users/1/suspend.xml'), 422, LAST_ADMIN_XML);
    assert.equal((await userRow(t, 1))?.status, 'active');
  });

  it('cannot be deleted: 422 with the exact body; nothing changes', async () => {
    assertStatus(await call(t, 'DELETE', '/users/1.json', { body: { force: 1 } }), 422, LAST_ADMIN_JSON);
    assertStatus(await call(t, 'DELETE', '/users/1.xml'), 422, LAST_ADMIN_XML);
    assert.equal((await userRow(t, 1))?.status, 'active');
  });

  it('cannot be made a user: 422 with the exact body; no field of that PUT changes', async () => {
    assertStatus(await call(t, 'PUT', '/users/1.json', { body: { user: { role: 'user', first_name: 'Demoted' } } }), 422, LAST_ADMIN_JSON);
    const row = await userRow(t, 1);
    assert.equal(row?.role, 'admin');
    assert.equal(row?.first_name, 'Ada');
    await assertCanLogIn(t, ADMIN.login, ADMIN.password, true);
  });

  it('may still be updated otherwise, and "made" admin again', async () => {
    assertNoContent(await call(t, 'PUT', '/users/1.json', { body: { user: { role: 'admin', last_name: 'Byron' } } }));
    assert.equal((await userRow(t, 1))?.last_name, 'Byron');
  });

  it('once a second administrator exists, the first may be suspended, and the second is then the last', async () => {
    const created = await call(t, 'POST', '/users.json', { body: { user: { login: 'root', email: 'root@example.com', password: 'root-password', role: 'admin' } } });
    assert.equal(created.statusCode, 201);
    const root = t.basic('root', 'root-password');

    assertStatus(await call(t, 'POST', '/users/1/suspend.json', { auth: root }), 200);
    assert.equal((await userRow(t, 1))?.status, 'suspended');
    await assertCanLogIn(t, ADMIN.login, ADMIN.password, false);

    // root (id 3) is now the only active administrator; a suspended one does not count.
    assertStatus(await call(t, 'POST', '/users/3/suspend.json', { auth: root }), 422, LAST_ADMIN_JSON);
    assertStatus(await call(t, 'DELETE', '/users/3.json', { auth: root }), 422, LAST_ADMIN_JSON);
    assertStatus(await call(t, 'PUT', '/users/3.json', { auth: root, body: { role: 'user' } }), 422, LAST_ADMIN_JSON);

    assertStatus(await call(t, 'POST', '/users/1/activate.json', { auth: root }), 200);
  });

  it('with two active administrators, one may be demoted and then acts as a user', async () => {
    assertNoContent(await call(t, 'PUT', '/users/3.json', { body: { role: 'user' } }));
    const root = t.basic('root', 'root-password');
    assertStatus(await call(t, 'GET', '/users/1.json', { auth: root }), 403, forbiddenJson('users.read'));
    assert.equal((await call(t, 'GET', '/users.json', { auth: root })).headers['x-total'], '1');
  });

  it('with two active administrators, one may be deleted', async () => {
    assertNoContent(await call(t, 'PUT', '/users/3.json', { body: { role: 'admin' } }));
    assertNoContent(await call(t, 'DELETE', '/users/1.json', { auth: t.basic('root', 'root-password') }));
    assert.equal((await userRow(t, 1))?.status, 'deleted');
    // A record marked deleted is no active administrator: removing it is fine.
    assertNoContent(await call(t, 'DELETE', '/users/1.json', { auth: t.basic('root', 'root-password') }));
    assert.equal(await userRow(t, 1), undefined);
  });
});

describe('current_password guesses count against the lockout (CMI_LOCKOUT_MAX_FAILURES=3)', () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp({ CMI_LOCKOUT_MAX_FAILURES: '3' });
  });
  after(() => t.close());

  it('refuses a stolen session guessing the current password with 429 after the limit, even the right one', async () => {
    const token = await login(t.app, t.aliceAuth);
    const change = (current: string) =>
      t.app.inject({
        method: 'PUT',
        url: '/users/2.json',
        headers: { ...withCookie(token), 'content-type': 'application/json' },
        payload: JSON.stringify({ user: { password: 'alice-new-password', current_password: current } }),
      });
    for (const guess of ['guess-one', 'guess-two', 'guess-three']) {
      assertStatus(await change(guess), 422, '{"errors":{"current_password":["is incorrect"]}}');
    }
    const locked = await change(ALICE.password);
    assertStatus(locked, 429, '{"errors":{"base":["Too many failed logins for \\"alice\\": it is locked until 2026-11-20T10:15:00Z, or until an administrator runs: cmi local users unlock alice"]}}');
    assert.equal(locked.headers['retry-after'], '900');
    assert.equal((await userRow(t, 2))?.password_changed_at, '2026-11-20T10:00:00.000Z');
  });
});
