import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { afterEach, beforeEach, describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { authenticator } from 'otplib';
import { createTestApp, type TestApp } from './support/app.js';
import { callApi as call, tokenOf, withCookie } from './support/http.js';

const XML_DECLARATION = '<?xml version="1.0" encoding="UTF-8"?>\n';
const SECOND_FACTOR_JSON = '{"errors":{"base":["This account has a second factor: use one of its API keys, or sign in to the console"]}}';
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

interface Enrolment { otpauth_uri: string; secret: string; recovery_codes: string[]; enabled: boolean }
const enrolmentOf = (res: LightMyRequestResponse) => (JSON.parse(res.body) as { two_factor: Enrolment }).two_factor;

describe('the second factor (TOTP)', () => {
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp({ CMI_LOCKOUT_MAX_FAILURES: '3' });
  });
  afterEach(() => t.close());

  /** The code an independent implementation (otplib) computes from `secret` at the test clock's time, `offsetSteps` steps away. */
  const codeOf = (secret: string, offsetSteps = 0) => authenticator.clone({ epoch: t.time.clock().getTime() + offsetSteps * 30_000 }).generate(secret);
  const enrol = (auth = t.aliceAuth, format = 'json') => call(t.app, 'POST', `/users/2/two_factor.${format}`, { auth });
  const confirm = (code: string, auth = t.aliceAuth) => call(t.app, 'PUT', '/users/2/two_factor.json', { auth, body: { two_factor: { code } } });
  const auditRows = async () => (await t.database.db.selectFrom('audit_events').select(['actor_id', 'credential', 'action', 'target_id', 'changes']).where('action', 'like', 'user.two_factor%').orderBy('id').execute())
    .map((row) => ({ ...row, actor_id: row.actor_id === null ? null : Number(row.actor_id), target_id: row.target_id === null ? null : Number(row.target_id) }));
  /** Alice's API key, made by the administrator (Basic with her password stops once her second factor is on). */
  const aliceKey = async () => (JSON.parse((await call(t.app, 'POST', '/users/2/user_api_keys.json', { auth: t.adminAuth, body: { user_api_key: { description: 'ci' } } })).body) as { user_api_key: { api_key: string } }).user_api_key.api_key;

  /** Alice enrolled and confirmed at the test clock's start; her enrolment. */
  async function enabled(): Promise<Enrolment> {
    const enrolment = enrolmentOf(await enrol());
    assert.equal((await confirm(codeOf(enrolment.secret))).statusCode, 200);
    return enrolment;
  }

  it('enrols once: 201 with the otpauth URI, the base32 secret and 10 recovery codes; the secret stored, only the codes\' SHA-256', async () => {
    const res = await enrol();
    assert.equal(res.statusCode, 201, res.body);
    assert.equal(res.headers['cache-control'], 'no-store');
    const enrolment = enrolmentOf(res);
    assert.match(enrolment.secret, /^[A-Z2-7]{32}$/);
    assert.equal(enrolment.recovery_codes.length, 10);
    for (const code of enrolment.recovery_codes) assert.match(code, /^[a-z2-7]{4}-[a-z2-7]{4}-[a-z2-7]{4}-[a-z2-7]{4}$/);
    assert.equal(new Set(enrolment.recovery_codes).size, 10);
    assert.equal(res.body, JSON.stringify({ two_factor: {
      otpauth_uri: `otpauth://totp/cmi:alice?secret=${enrolment.secret}&issuer=cmi&algorithm=SHA1&digits=6&period=30`,
      secret: enrolment.secret, recovery_codes: enrolment.recovery_codes, enabled: false,
    } }));
    // otplib reads the same secret out of the URI.
    assert.equal(authenticator.keyuri('alice', 'cmi', enrolment.secret).includes(`secret=${enrolment.secret}`), true);
    const row = await t.database.db.selectFrom('user_two_factor').selectAll().executeTakeFirstOrThrow();
    assert.deepEqual({ ...row, user_id: Number(row.user_id) }, { user_id: 2, secret: enrolment.secret, created_at: '2026-11-20T10:00:00.000Z', confirmed_at: null, last_step: null });
    const codes = await t.database.db.selectFrom('user_recovery_codes').select(['code_hash', 'used_at']).orderBy('id').execute();
    assert.deepEqual(codes, enrolment.recovery_codes.map((code) => ({ code_hash: sha256(code.replaceAll('-', '')), used_at: null })));
    // Pending: the password still signs in, and the user record says no second factor yet.
    assert.equal((await call(t.app, 'GET', '/users/2.json', { auth: t.aliceAuth })).statusCode, 200);
    assert.equal(Number((await t.database.db.selectFrom('users').select('totp_enabled').where('id', '=', 2).executeTakeFirstOrThrow()).totp_enabled), 0);
  });

  it('answers the enrolment in XML, the recovery codes as their JSON array\'s text', async () => {
    const res = await enrol(t.aliceAuth, 'xml');
    assert.equal(res.statusCode, 201, res.body);
    const secret = /<secret>([A-Z2-7]{32})<\/secret>/.exec(res.body)?.[1] as string;
    const codes = /<recovery_codes>(.*)<\/recovery_codes>/.exec(res.body)?.[1] as string;
    assert.equal(res.body, [
      `${XML_DECLARATION}<two_factor>`,
      `  <otpauth_uri>otpauth://totp/cmi:alice?secret=${secret}&amp;issuer=cmi&amp;algorithm=SHA1&amp;digits=6&amp;period=30</otpauth_uri>`,
      `  <secret>${secret}</secret>`,
      `  <recovery_codes>${codes}</recovery_codes>`,
      '  <enabled type="boolean">false</enabled>',
      '</two_factor>\n',
    ].join('\n'));
    assert.equal((JSON.parse(codes) as string[]).length, 10);
  });

  it('only the user itself enrols and confirms: an administrator is refused 403 and sees no secret', async () => {
    const res = await call(t.app, 'POST', '/users/2/two_factor.json', { auth: t.adminAuth });
    assert.equal(res.statusCode, 403);
    assert.equal(res.body, '{"errors":{"base":["You are not authorized to perform this action (only the user itself enrols and confirms its second factor)"]}}');
    await enrol();
    assert.equal((await call(t.app, 'PUT', '/users/2/two_factor.json', { auth: t.adminAuth, body: { two_factor: { code: '000000' } } })).statusCode, 403);
    assert.equal(await t.database.db.selectFrom('user_two_factor').select('user_id').where('user_id', '=', 1).executeTakeFirst(), undefined);
  });

  it('the users list shows totp_enabled, its cached page and ETag changing with it', async () => {
    const before = await call(t.app, 'GET', '/users.json', { auth: t.adminAuth });
    assert.equal(before.statusCode, 200);
    await enabled();
    const after = await call(t.app, 'GET', '/users.json', { auth: t.adminAuth });
    assert.notEqual(after.headers.etag, before.headers.etag);
    const users = JSON.parse(after.body) as Array<{ user: { id: number; totp_enabled: boolean } }>;
    assert.deepEqual(users.map(({ user }) => [user.id, user.totp_enabled]), [[1, false], [2, true]]);
  });

  it('confirms with a code otplib computes: 200 enabled, confirmed_at; GET shows it, never the secret, in JSON and XML, to the user and to users.read', async () => {
    const enrolment = enrolmentOf(await enrol());
    t.time.advance(45);
    const res = await confirm(codeOf(enrolment.secret));
    assert.equal(res.statusCode, 200, res.body);
    const shown = '{"two_factor":{"enabled":true,"confirmed_at":"2026-11-20T10:00:45+00:00","recovery_codes_left":10}}';
    assert.equal(res.body, shown);
    const key = await aliceKey();
    const own = await call(t.app, 'GET', '/users/2/two_factor.json', { auth: t.basic('alice', key) });
    assert.equal(own.body, shown);
    assert.equal((await call(t.app, 'GET', '/users/2/two_factor.json', { auth: t.adminAuth })).body, shown);
    const xml = await call(t.app, 'GET', '/users/2/two_factor.xml', { auth: t.adminAuth });
    assert.equal(xml.body, `${XML_DECLARATION}<two_factor>\n  <enabled type="boolean">true</enabled>\n  <confirmed_at type="datetime">2026-11-20T10:00:45+00:00</confirmed_at>\n  <recovery_codes_left type="integer">10</recovery_codes_left>\n</two_factor>\n`);
    assert.equal(xml.body.includes(enrolment.secret), false);
    // The user record says so, as OnApp 6.4's does; the users list's cached page and ETag changed with it.
    const record = JSON.parse((await call(t.app, 'GET', '/users/2.json', { auth: t.adminAuth })).body) as { user: Record<string, unknown> };
    assert.deepEqual([record.user.totp_enabled, record.user.registered_yubikey], [true, false]);
    assert.match((await call(t.app, 'GET', '/users/2.xml', { auth: t.adminAuth })).body, /<totp_enabled type="boolean">true<\/totp_enabled>\n {2}<registered_yubikey type="boolean">false<\/registered_yubikey>\n<\/user>\n$/);
    // Another ordinary user holds no users.read.
    const [bob] = await t.addUsers(1);
    assert.equal((await call(t.app, 'GET', '/users/2/two_factor.json', { auth: t.basic(bob?.login as string, 'shared-password') })).statusCode, 403);
    // The administrator's own, never enrolled.
    assert.equal((await call(t.app, 'GET', '/users/1/two_factor.json', { auth: t.adminAuth })).body, '{"two_factor":{"enabled":false,"confirmed_at":null,"recovery_codes_left":0}}');
    // Enabled: enrolling again is refused until it is disabled.
    const again = await call(t.app, 'POST', '/users/2/two_factor.json', { auth: t.basic('alice', key) });
    assert.equal(again.statusCode, 422);
    assert.equal(again.body, '{"errors":{"base":["A second factor is enabled: disable it first (DELETE with a current code in X-Cmi-OTP)"]}}');
  });

  it('a re-POST while pending replaces the enrolment: the first secret\'s codes no longer confirm', async () => {
    const first = enrolmentOf(await enrol());
    const second = enrolmentOf(await enrol());
    assert.notEqual(first.secret, second.secret);
    assert.equal((await confirm(codeOf(first.secret))).statusCode, 422);
    assert.equal((await confirm(codeOf(second.secret))).statusCode, 200);
    assert.equal(await t.database.db.selectFrom('user_recovery_codes').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow().then((row) => Number(row.n)), 10);
  });

  it('a wrong code is 422 and counts toward the lockout like a wrong password: past the limit a password is 429 too', async () => {
    const enrolment = enrolmentOf(await enrol());
    const right = codeOf(enrolment.secret);
    const wrong = right === '123456' ? '654321' : '123456';
    for (let i = 0; i < 3; i++) {
      const res = await confirm(wrong);
      assert.equal(res.statusCode, 422);
      assert.equal(res.body, '{"errors":{"code":["is incorrect"]}}');
    }
    const locked = await confirm(right);
    assert.equal(locked.statusCode, 429);
    // The same counter as password logins: a password tried now is refused (the owner's cached verification holds, as ever).
    assert.equal((await call(t.app, 'GET', '/version.json', { auth: t.basic('alice', 'another-guess') })).statusCode, 429);
    assert.equal(Number((await t.database.db.selectFrom('users').select('totp_enabled').where('id', '=', 2).executeTakeFirstOrThrow()).totp_enabled), 0);
  });

  it('with the second factor on, Basic with the password is refused 401 naming the reason; an API key, and the session it is given, keep working', async () => {
    const key = await aliceKey();
    // A Basic password verification cached before is dropped by the change.
    assert.equal((await call(t.app, 'GET', '/version.json', { auth: t.aliceAuth })).statusCode, 200);
    await enabled();
    const refused = await call(t.app, 'GET', '/version.json', { auth: t.aliceAuth });
    assert.equal(refused.statusCode, 401);
    assert.equal(refused.body, SECOND_FACTOR_JSON);
    assert.equal(refused.headers['www-authenticate'], 'Basic realm="cmi"');
    const xml = await call(t.app, 'GET', '/version.xml', { auth: t.aliceAuth });
    assert.equal(xml.body, `${XML_DECLARATION}<errors>\n  <error>This account has a second factor: use one of its API keys, or sign in to the console</error>\n</errors>\n`);
    // Refused in another process too.
    const other = await t.secondProcess();
    try {
      assert.equal((await call(other.app, 'GET', '/version.json', { auth: t.aliceAuth })).body, SECOND_FACTOR_JSON);
    } finally {
      await other.close();
    }
    const byKey = await call(t.app, 'GET', '/users/2.json', { auth: t.basic('alice', key) });
    assert.equal(byKey.statusCode, 200);
    const session = await call(t.app, 'GET', '/users/2.json', { headers: withCookie(tokenOf(byKey)) });
    assert.equal(session.statusCode, 200);
    // The password alone is no success without the code: each of the three uses above counted as a
    // failed login, so the counter of 3 is full and the next is the lockout's 429.
    assert.equal((await call(t.app, 'GET', '/version.json', { auth: t.aliceAuth })).statusCode, 429);
  });

  it('a wrong password of an account with a second factor is the plain 401: the reason is told only for the right one', async () => {
    await enabled();
    assert.equal((await call(t.app, 'GET', '/version.json', { auth: t.basic('alice', 'wrong-password') })).body, '{"errors":{"base":["Access denied"]}}');
  });

  it('a code is accepted once, in every process: the confirming code does not disable, the next step\'s does', async () => {
    const enrolment = enrolmentOf(await enrol());
    const code = codeOf(enrolment.secret);
    assert.equal((await confirm(code)).statusCode, 200);
    const key = await aliceKey();
    const other = await t.secondProcess();
    try {
      const replay = await call(other.app, 'DELETE', '/users/2/two_factor.json', { auth: t.basic('alice', key), headers: { 'x-cmi-otp': code } });
      assert.equal(replay.statusCode, 422);
      assert.equal(replay.body, '{"errors":{"base":["X-Cmi-OTP is incorrect"]}}');
    } finally {
      await other.close();
    }
    // The step before is older than the one accepted; the next one (clocks a step apart) is accepted.
    assert.equal((await call(t.app, 'DELETE', '/users/2/two_factor.json', { auth: t.basic('alice', key), headers: { 'x-cmi-otp': codeOf(enrolment.secret, -1) } })).statusCode, 422);
    const res = await call(t.app, 'DELETE', '/users/2/two_factor.json', { auth: t.basic('alice', key), headers: { 'x-cmi-otp': codeOf(enrolment.secret, 1) } });
    assert.equal(res.statusCode, 204, res.body);
    assert.equal(res.body, '');
    assert.equal((await call(t.app, 'GET', '/version.json', { auth: t.aliceAuth })).statusCode, 200);
    assert.equal((await t.database.db.selectFrom('user_two_factor').selectAll().execute()).length, 0);
    assert.equal((await t.database.db.selectFrom('user_recovery_codes').selectAll().execute()).length, 0);
  });

  it('two requests with the same code at once: one is accepted, the other refused as a replay (the database decides)', async () => {
    const enrolment = await enabled();
    const key = await aliceKey();
    const code = codeOf(enrolment.secret, 1);
    const both = await Promise.all([0, 1].map(() => call(t.app, 'DELETE', '/users/2/two_factor.json', { auth: t.basic('alice', key), headers: { 'x-cmi-otp': code } })));
    assert.deepEqual(both.map((res) => res.statusCode).sort(), [204, 422]);
  });

  it('a recovery code stands for a code once: used, it is spent', async () => {
    const enrolment = enrolmentOf(await enrol());
    assert.equal((await confirm(codeOf(enrolment.secret))).statusCode, 200);
    const key = await aliceKey();
    const recovery = enrolment.recovery_codes[3] as string;
    // Used for the console's second step (two-factor.service.ts verifySignInCode) it is spent: the next DELETE with it is refused.
    const used = await t.database.db.updateTable('user_recovery_codes').set({ used_at: '2026-11-20T10:00:00.000Z' }).where('code_hash', '=', sha256(recovery.replaceAll('-', ''))).where('used_at', 'is', null).executeTakeFirst();
    assert.equal(Number(used.numUpdatedRows), 1);
    assert.equal((await call(t.app, 'GET', '/users/2/two_factor.json', { auth: t.basic('alice', key) })).body, '{"two_factor":{"enabled":true,"confirmed_at":"2026-11-20T10:00:00+00:00","recovery_codes_left":9}}');
    assert.equal((await call(t.app, 'DELETE', '/users/2/two_factor.json', { auth: t.basic('alice', key), headers: { 'x-cmi-otp': recovery } })).statusCode, 422);
    // Another one, typed in upper case without its dashes, disables it.
    const other = (enrolment.recovery_codes[5] as string).replaceAll('-', '').toUpperCase();
    assert.equal((await call(t.app, 'DELETE', '/users/2/two_factor.json', { auth: t.basic('alice', key), headers: { 'x-cmi-otp': other } })).statusCode, 204);
    const rows = await auditRows();
    assert.deepEqual(rows.map((row) => row.action), ['user.two_factor.create', 'user.two_factor.confirm', 'user.two_factor.recovery_code_use', 'user.two_factor.delete']);
  });

  it('DELETE: the user itself needs a code in X-Cmi-OTP; another user needs users.update; an administrator removes it', async () => {
    await enabled();
    const key = await aliceKey();
    const bare = await call(t.app, 'DELETE', '/users/2/two_factor.json', { auth: t.basic('alice', key) });
    assert.equal(bare.statusCode, 422);
    assert.equal(bare.body, '{"errors":{"base":["X-Cmi-OTP must carry a current code or a recovery code"]}}');
    const [bob] = await t.addUsers(1);
    const byBob = await call(t.app, 'DELETE', '/users/2/two_factor.json', { auth: t.basic(bob?.login as string, 'shared-password') });
    assert.equal(byBob.statusCode, 403);
    assert.equal(byBob.body, '{"errors":{"base":["You are not authorized to perform this action (needs users.update)"]}}');
    const byAdmin = await call(t.app, 'DELETE', '/users/2/two_factor.xml', { auth: t.adminAuth });
    assert.equal(byAdmin.statusCode, 204);
    assert.equal((await call(t.app, 'DELETE', '/users/2/two_factor.json', { auth: t.adminAuth })).statusCode, 404);
    assert.equal((await call(t.app, 'GET', '/version.json', { auth: t.aliceAuth })).statusCode, 200);
  });

  it('audits enrolment, confirmation and removal, with no secret or code in any row', async () => {
    const enrolment = await enabled();
    await call(t.app, 'DELETE', '/users/2/two_factor.json', { auth: t.adminAuth });
    const rows = await auditRows();
    assert.deepEqual(rows, [
      { actor_id: 2, credential: 'password', action: 'user.two_factor.create', target_id: 2, changes: '{}' },
      { actor_id: 2, credential: 'password', action: 'user.two_factor.confirm', target_id: 2, changes: '{}' },
      { actor_id: 1, credential: 'password', action: 'user.two_factor.delete', target_id: 2, changes: '{}' },
    ]);
    const all = JSON.stringify(await t.database.db.selectFrom('audit_events').selectAll().execute());
    assert.equal(all.includes(enrolment.secret), false);
    for (const code of enrolment.recovery_codes) assert.equal(all.includes(code), false);
  });
});

describe('YubiKeys as OnApp\'s PHP wrapper calls them (/users/:id/yubi_keys)', () => {
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp();
  });
  afterEach(() => t.close());

  // What a YubiKey types: its 12-character public id, then 32 characters of the encrypted token (modhex).
  const OTP = 'cccjgjgkhcbbirdrfdnlnghhfgrtnnlgedjlftrbdeut';
  const keyJson = (id: number, at: string) => ({ yubi_key: { id, created_at: at, updated_at: at, user_id: 2, label: 'desk key', last_used: null, otp: 'cccjgjgkhcbb' } });

  it('records a key from an OTP (only its public id), lists, shows and forgets it, in JSON and XML; the user record\'s flag follows', async () => {
    t.time.advance(60);
    // The body as the PHP wrapper sends it (User/YubiKey.php fields, wrapped in the root).
    const res = await call(t.app, 'POST', '/users/2/yubi_keys.json', { auth: t.aliceAuth, body: { yubi_key: { user_id: 2, label: 'desk key', otp: OTP } } });
    assert.equal(res.statusCode, 201, res.body);
    const id = (JSON.parse(res.body) as { yubi_key: { id: number } }).yubi_key.id;
    assert.equal(res.headers.location, `/users/2/yubi_keys/${id}.json`);
    assert.equal(res.body, JSON.stringify(keyJson(id, '2026-11-20T10:01:00+00:00')));
    const rows = await t.database.db.selectFrom('user_yubi_keys').select(['key_id', 'label', 'last_used']).execute();
    assert.deepEqual(rows, [{ key_id: 'cccjgjgkhcbb', label: 'desk key', last_used: null }]);
    assert.equal(Number((await t.database.db.selectFrom('users').select('registered_yubikey').where('id', '=', 2).executeTakeFirstOrThrow()).registered_yubikey), 1);
    assert.equal((JSON.parse((await call(t.app, 'GET', '/users/2.json', { auth: t.adminAuth })).body) as { user: { registered_yubikey: boolean } }).user.registered_yubikey, true);
    assert.equal((await call(t.app, 'GET', '/users/2/yubi_keys.json', { auth: t.adminAuth })).body, JSON.stringify([keyJson(id, '2026-11-20T10:01:00+00:00')]));
    const xml = await call(t.app, 'GET', `/users/2/yubi_keys/${id}.xml`, { auth: t.aliceAuth });
    assert.equal(xml.body, `${XML_DECLARATION}<yubi_key>\n  <id type="integer">${id}</id>\n  <created_at type="datetime">2026-11-20T10:01:00+00:00</created_at>\n  <updated_at type="datetime">2026-11-20T10:01:00+00:00</updated_at>\n  <user_id type="integer">2</user_id>\n  <label>desk key</label>\n  <last_used nil="true"/>\n  <otp>cccjgjgkhcbb</otp>\n</yubi_key>\n`);
    const again = await call(t.app, 'POST', '/users/2/yubi_keys.json', { auth: t.aliceAuth, body: { yubi_key: { label: 'same', otp: `cccjgjgkhcbb${'v'.repeat(32)}` } } });
    assert.equal(again.body, '{"errors":{"otp":["is of a key the user has already"]}}');
    const bad = await call(t.app, 'POST', '/users/2/yubi_keys.json', { auth: t.aliceAuth, body: { yubi_key: { otp: '123456' } } });
    assert.equal(bad.statusCode, 422);
    assert.equal(bad.body, '{"errors":{"otp":["must be a YubiKey OTP: 44 modhex characters (touch the key)"]}}');
    const [bob] = await t.addUsers(1);
    assert.equal((await call(t.app, 'GET', '/users/2/yubi_keys.json', { auth: t.basic(bob?.login as string, 'shared-password') })).statusCode, 403);
    assert.equal((await call(t.app, 'DELETE', `/users/2/yubi_keys/${id}.json`, { auth: t.basic(bob?.login as string, 'shared-password') })).statusCode, 403);
    const removed = await call(t.app, 'DELETE', `/users/2/yubi_keys/${id}.json`, { auth: t.aliceAuth });
    assert.equal(removed.statusCode, 204);
    assert.equal((await call(t.app, 'GET', `/users/2/yubi_keys/${id}.json`, { auth: t.aliceAuth })).statusCode, 404);
    assert.equal(Number((await t.database.db.selectFrom('users').select('registered_yubikey').where('id', '=', 2).executeTakeFirstOrThrow()).registered_yubikey), 0);
    const audit = await t.database.db.selectFrom('audit_events').select(['action', 'changes']).where('action', 'like', 'user.yubi_key%').orderBy('id').execute();
    assert.deepEqual(audit, [
      { action: 'user.yubi_key.create', changes: `{"yubi_key_id":${id},"label":"desk key","key_id":"cccjgjgkhcbb"}` },
      { action: 'user.yubi_key.delete', changes: `{"yubi_key_id":${id}}` },
    ]);
  });

  it('refuses a YubiKey OTP where a code is asked, saying why', async () => {
    const enrolled = await call(t.app, 'POST', '/users/2/two_factor.json', { auth: t.aliceAuth });
    const { secret } = (JSON.parse(enrolled.body) as { two_factor: { secret: string } }).two_factor;
    const code = authenticator.clone({ epoch: t.time.clock().getTime() }).generate(secret);
    assert.equal((await call(t.app, 'PUT', '/users/2/two_factor.json', { auth: t.aliceAuth, body: { two_factor: { code } } })).statusCode, 200);
    const res = await call(t.app, 'DELETE', '/users/2/two_factor.json', { auth: t.aliceAuth, headers: { 'x-cmi-otp': OTP } });
    // Alice's password no longer signs in by Basic: the 401 comes first.
    assert.equal(res.statusCode, 401);
    const key = (JSON.parse((await call(t.app, 'POST', '/users/2/user_api_keys.json', { auth: t.adminAuth, body: { user_api_key: { description: 'ci' } } })).body) as { user_api_key: { api_key: string } }).user_api_key.api_key;
    const refused = await call(t.app, 'DELETE', '/users/2/two_factor.json', { auth: t.basic('alice', key), headers: { 'x-cmi-otp': OTP } });
    assert.equal(refused.statusCode, 422);
    assert.equal(refused.body, '{"errors":{"base":["YubiKey one-time passwords are not accepted: cmi cannot reach Yubico\'s validation servers. Give the code of the authenticator app, or a recovery code"]}}');
  });
});

describe('the second factor against a thief (docs/security.md#second-factor)', () => {
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp({ CMI_LOCKOUT_MAX_FAILURES: '3' });
  });
  afterEach(() => t.close());
  const codeOf = (secret: string, offsetSteps = 0) => authenticator.clone({ epoch: t.time.clock().getTime() + offsetSteps * 30_000 }).generate(secret);
  const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

  it('a known password never wipes the count of wrong codes: password and codes together reach the lockout', async () => {
    const secret = enrolmentOf(await call(t.app, 'POST', '/users/2/two_factor.json', { auth: t.aliceAuth })).secret;
    assert.equal((await call(t.app, 'PUT', '/users/2/two_factor.json', { auth: t.aliceAuth, body: { two_factor: { code: codeOf(secret) } } })).statusCode, 200);
    const right = codeOf(secret, 1);
    const wrong = right === '000000' ? '111111' : '000000';
    // The password (1) and two wrong codes (2 more) fill the counter of 3; the next password is refused.
    const first = await t.app.inject({ method: 'POST', url: '/console/sign-in', headers: FORM, payload: 'login=alice&password=alice-password' });
    assert.equal(first.statusCode, 200);
    const token = /name="token" value="([^"]+)"/.exec(first.body)?.[1] as string;
    for (let guess = 0; guess < 2; guess++) {
      assert.equal((await t.app.inject({ method: 'POST', url: '/console/sign-in/code', headers: FORM, payload: `token=${token}&code=${wrong}` })).statusCode, 401);
    }
    const again = await t.app.inject({ method: 'POST', url: '/console/sign-in', headers: FORM, payload: 'login=alice&password=alice-password' });
    assert.equal(again.statusCode, 429);
    // Basic with the right password is no success either: refused by the lockout, not its count cleared.
    assert.equal((await call(t.app, 'GET', '/users/2.json', { auth: t.aliceAuth })).statusCode, 429);
  });

  it('a session cookie alone cannot enrol: through a session, the current password too', async () => {
    const cookie = withCookie(tokenOf(await call(t.app, 'GET', '/version.json', { auth: t.aliceAuth })));
    const headers = { ...cookie, 'x-requested-with': 'XMLHttpRequest' };
    const bare = await call(t.app, 'POST', '/users/2/two_factor.json', { headers });
    assert.equal(bare.statusCode, 422);
    assert.equal(bare.body, '{"errors":{"current_password":["can\'t be blank"]}}');
    const wrong = await call(t.app, 'POST', '/users/2/two_factor.json', { headers, body: { two_factor: { current_password: 'not-it' } } });
    assert.equal(wrong.statusCode, 422);
    assert.equal(wrong.body, '{"errors":{"current_password":["is incorrect"]}}');
    assert.equal((await t.database.db.selectFrom('user_two_factor').select('user_id').execute()).length, 0);
    const right = await call(t.app, 'POST', '/users/2/two_factor.json', { headers, body: { two_factor: { current_password: 'alice-password' } } });
    assert.equal(right.statusCode, 201);
  });
});
