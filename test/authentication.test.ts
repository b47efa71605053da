import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ADMIN, ALICE, createTestApp, type TestApp } from './support/app.js';
import { forbiddenJson, forbiddenXml } from './support/error-reports.js';
import { ACCESS_DENIED_XML, assertAccessDenied, get, login, SESSION_COOKIE, withCookie } from './support/http.js';

const aliceList = (t: TestApp) =>
  '[{"user":{"id":2,"login":"alice","email":"alice@example.com","first_name":"Alice","last_name":"User","status":"active",' +
  '"time_zone":null,"locale":null,"created_at":"2026-11-20T10:00:00+00:00","updated_at":"2026-11-20T10:00:00+00:00",' +
  '"activated_at":"2026-11-20T10:00:00+00:00","suspend_at":null,"deleted_at":null,"password_changed_at":"2026-11-20T10:00:00+00:00",' +
  `"roles":[{"role":${JSON.stringify(t.systemRoles.user)}}],"bucket_id":null,"user_group_id":null,"totp_enabled":false,"registered_yubikey":false}}]`;

const base64 = (text: string) => Buffer.from(text).toString('base64');

describe('HTTP Basic authentication', () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp();
  });
  after(() => t.close());

  it('accepts the login and password', async () => {
    const res = await get(t.app, '/version.json', { authorization: t.basic(ADMIN.login, ADMIN.password) });
    assert.equal(res.statusCode, 200);
    assert.equal(res.body, '{"version":"6.7"}');
  });

  it('accepts the email in place of the login', async () => {
    const res = await get(t.app, '/version.json', { authorization: t.basic(ALICE.email, ALICE.password) });
    assert.equal(res.statusCode, 200);
    assert.equal(res.body, '{"version":"6.7"}');
  });

  it('accepts the email in any case', async () => {
    const res = await get(t.app, '/version.json', { authorization: t.basic('Alice@EXAMPLE.com', ALICE.password) });
    assert.equal(res.statusCode, 200);
    assert.equal(res.body, '{"version":"6.7"}');
  });

  it('accepts the scheme name in any case', async () => {
    const res = await get(t.app, '/version.json', { authorization: `basic ${base64(`${ALICE.login}:${ALICE.password}`)}` });
    assert.equal(res.statusCode, 200);
  });

  it('refuses a wrong password', async () => {
    assertAccessDenied(await get(t.app, '/version.json', { authorization: t.basic(ALICE.login, 'wrong-password') }));
  });

  it('refuses another user\'s password', async () => {
    assertAccessDenied(await get(t.app, '/version.json', { authorization: t.basic(ALICE.login, ADMIN.password) }));
  });

  it('refuses an unknown login', async () => {
    assertAccessDenied(await get(t.app, '/version.json', { authorization: t.basic('nobody', ALICE.password) }));
  });

  it('refuses an empty password', async () => {
    assertAccessDenied(await get(t.app, '/version.json', { authorization: t.basic(ALICE.login, '') }));
  });

  it('refuses an empty login', async () => {
    assertAccessDenied(await get(t.app, '/version.json', { authorization: t.basic('', ALICE.password) }));
  });

  it('refuses no credentials at all', async () => {
    assertAccessDenied(await get(t.app, '/version.json'));
  });

  it('answers a 401 on an .xml path in XML', async () => {
    const res = await get(t.app, '/version.xml', { authorization: t.basic(ALICE.login, 'wrong-password') });
    assert.equal(res.statusCode, 401);
    assert.equal(res.headers['content-type'], 'application/xml; charset=utf-8');
    assert.equal(res.headers['www-authenticate'], 'Basic realm="cmi"');
    assert.equal(res.body, ACCESS_DENIED_XML);
  });

  it('answers a 401 without credentials on an .xml path in XML', async () => {
    const res = await get(t.app, '/users.xml');
    assert.equal(res.statusCode, 401);
    assert.equal(res.headers['www-authenticate'], 'Basic realm="cmi"');
    assert.equal(res.body, ACCESS_DENIED_XML);
  });

  describe('malformed Authorization headers', () => {
    const malformed: Array<[string, string]> = [
      ['a bare "Basic"', 'Basic'],
      ['"Basic " and nothing', 'Basic '],
      ['characters outside base64', 'Basic !!!'],
      ['another scheme', 'Bearer x'],
      ['base64 without a colon', `Basic ${base64('alicealice-password')}`],
      ['base64 of a lone colon', `Basic ${base64(':')}`],
      ['credentials that are not base64 encoded', `Basic ${ALICE.login}:${ALICE.password}`],
      ['a 10 KB header', `Basic ${base64(`${'a'.repeat(7_600)}:${ALICE.password}`)}`],
      ['a 10 KB header of garbage', `Basic ${'A'.repeat(10_240)}`],
    ];
    for (const [name, authorization] of malformed) {
      it(`refuses ${name} with the exact 401`, async () => {
        assertAccessDenied(await get(t.app, '/version.json', { authorization }));
      });
    }
  });

  it('refuses unknown paths without credentials: authentication comes first', async () => {
    assertAccessDenied(await get(t.app, '/no_such_thing.json'));
  });

  it('refuses unknown ids without credentials: authentication comes first', async () => {
    assertAccessDenied(await get(t.app, '/sysadmin_tools/infrastructure/errors/12345.json'));
  });

  it('refuses pagination segments on a path that has none without credentials: authentication comes first', async () => {
    assertAccessDenied(await get(t.app, '/version.json/page/2'));
  });

  it('refuses a POST without credentials before reading its body', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/sysadmin_tools/infrastructure/errors.json',
      headers: { 'content-type': 'application/json' },
      payload: '{not json',
    });
    assertAccessDenied(res);
  });
});

describe('the session cookie', () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp();
  });
  after(() => t.close());

  it('is set after a successful Basic login: _cmi_session=<token>; path=/; HttpOnly; SameSite=Lax', async () => {
    const res = await get(t.app, '/version.json', { authorization: t.aliceAuth });
    assert.equal(res.statusCode, 200);
    assert.match(String(res.headers['set-cookie']), SESSION_COOKIE);
  });

  it('is not set after a failed login', async () => {
    const res = await get(t.app, '/version.json', { authorization: t.basic(ALICE.login, 'wrong-password') });
    assert.equal(res.headers['set-cookie'], undefined);
  });

  it('alone authenticates a later request', async () => {
    const token = await login(t.app, t.aliceAuth);
    const res = await get(t.app, '/version.json', withCookie(token));
    assert.equal(res.statusCode, 200);
    assert.equal(res.body, '{"version":"6.7"}');
  });

  it('authenticates as the user who logged in', async () => {
    const token = await login(t.app, t.aliceAuth);
    const res = await get(t.app, '/users.json', withCookie(token));
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['x-total'], '1');
    assert.equal(res.body, aliceList(t));
  });

  it('is found among other cookies', async () => {
    const token = await login(t.app, t.aliceAuth);
    const res = await get(t.app, '/version.json', { cookie: `theme=dark; _cmi_session=${token}; lang=en` });
    assert.equal(res.statusCode, 200);
  });

  it('is refused when its signature was tampered with', async () => {
    const token = await login(t.app, t.aliceAuth);
    const last = token.at(-1) === 'A' ? 'B' : 'A';
    assertAccessDenied(await get(t.app, '/version.json', withCookie(`${token.slice(0, -1)}${last}`)));
  });

  it('is refused when its user id was changed to another user\'s', async () => {
    const token = await login(t.app, t.aliceAuth);
    const [, ...rest] = token.split('.');
    assertAccessDenied(await get(t.app, '/version.json', withCookie([String(t.admin.id), ...rest].join('.'))));
  });

  it('is refused when it is garbage', async () => {
    assertAccessDenied(await get(t.app, '/version.json', withCookie('garbage')));
  });

  it('is refused when it is empty', async () => {
    assertAccessDenied(await get(t.app, '/version.json', withCookie('')));
  });
});

describe('the session cookie of a user who is no longer active', () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp();
  });
  after(() => t.close());

  it('is refused once the user is suspended, and so is the password', async () => {
    const token = await login(t.app, t.aliceAuth);
    // Suspended behind this process's back (as by another process): seen once the cache TTL (5 s) passes.
    await t.database.db.updateTable('users').set({ status: 'suspended' }).where('login', '=', ALICE.login).execute();
    t.time.advance(5);
    assertAccessDenied(await get(t.app, '/version.json', withCookie(token)));
    assertAccessDenied(await get(t.app, '/version.json', { authorization: t.aliceAuth }));
  });
});

describe('the session cookie max age (CMI_SESSION_MAX_AGE)', () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp({ CMI_SESSION_MAX_AGE: '60' });
  });
  after(() => t.close());

  it('still authenticates within the max age', async () => {
    const token = await login(t.app, t.aliceAuth);
    t.time.advance(59);
    const res = await get(t.app, '/version.json', withCookie(token));
    assert.equal(res.statusCode, 200);
  });

  it('is refused once older than the max age', async () => {
    const token = await login(t.app, t.aliceAuth);
    t.time.advance(61);
    assertAccessDenied(await get(t.app, '/version.json', withCookie(token)));
  });

  it('is renewed by logging in with credentials again', async () => {
    const old = await login(t.app, t.aliceAuth);
    t.time.advance(61);
    assertAccessDenied(await get(t.app, '/version.json', withCookie(old)));
    const renewed = await login(t.app, t.aliceAuth);
    const res = await get(t.app, '/version.json', withCookie(renewed));
    assert.equal(res.statusCode, 200);
  });
});

describe('authorization of an ordinary user', () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp();
  });
  after(() => t.close());

  it('forbids GET of an infrastructure error with 403', async () => {
    const res = await get(t.app, '/sysadmin_tools/infrastructure/errors/1.json', { authorization: t.aliceAuth });
    assert.equal(res.statusCode, 403);
    assert.equal(res.headers['content-type'], 'application/json; charset=utf-8');
    assert.equal(res.headers['cache-control'], 'no-cache');
    assert.equal(res.body, forbiddenJson('infrastructure_errors.read'));
  });

  it('forbids GET of an infrastructure error in XML with an XML 403', async () => {
    const res = await get(t.app, '/sysadmin_tools/infrastructure/errors/1.xml', { authorization: t.aliceAuth });
    assert.equal(res.statusCode, 403);
    assert.equal(res.headers['content-type'], 'application/xml; charset=utf-8');
    assert.equal(res.body, forbiddenXml('infrastructure_errors.read'));
  });

  it('forbids POST of an infrastructure error with 403 and records nothing', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/sysadmin_tools/infrastructure/errors.json',
      headers: { authorization: t.aliceAuth, 'content-type': 'application/json' },
      payload: JSON.stringify({ infrastructure_error: { error_class: 'TypeError', message: 'boom', backtrace: 'src/a.ts:1:in \'f\'' } }),
    });
    assert.equal(res.statusCode, 403);
    assert.equal(res.body, forbiddenJson('infrastructure_errors.create'));
    const rows = await t.database.db.selectFrom('infrastructure_errors').selectAll().execute();
    assert.deepEqual(rows, []);
  });

  it('sees only herself in the users list', async () => {
    await t.addUsers(3);
    const res = await get(t.app, '/users.json', { authorization: t.aliceAuth });
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['x-total'], '1');
    assert.equal(res.headers['x-page'], '1');
    assert.equal(res.body, aliceList(t));
  });

  it('while an administrator sees everyone', async () => {
    const res = await get(t.app, '/users.json', { authorization: t.adminAuth });
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['x-total'], '5');
  });
});
